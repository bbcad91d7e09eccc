"""Log parsing (docs/accounting.md#log-lines): usage high-water marks, turns, handoffs, truncations."""

from __future__ import annotations

from pathlib import Path

from buzz_operator.ledger.agent_log import find_seat_logs, scan_log_text, scan_seat_logs
from buzz_operator.ledger.lines import iter_line_chunks
from hypothesis import given
from hypothesis import strategies as st

from .builders import handoff, turn_end, usage


def scan(text: str):
    return scan_log_text([text])


def test_usage_is_max_per_session_summed_over_sessions() -> None:
    log = scan(
        usage("A", 100, 10)
        + usage("A", 300, 30)
        + usage("A", 200, 20)  # an interleaved stale line must not lower the total
        + usage("B", 50, 5)
        + usage("B", 70, 4)
    )
    assert [(s.session_id, s.input_tokens, s.output_tokens) for s in log.sessions] == [
        ("A", 300, 30),
        ("B", 70, 5),
    ]
    assert (log.input_tokens, log.output_tokens) == (370, 35)


def test_ansi_coloured_fields_are_parsed() -> None:
    log = scan(usage("S1", 20658, 412, colour=True))
    assert (log.input_tokens, log.output_tokens) == (20658, 412)


def test_some_wrapped_counts_are_parsed() -> None:
    log = scan(usage("S", "Some(1234)", "Some(56)"))
    assert (log.input_tokens, log.output_tokens) == (1234, 56)


def test_line_without_output_is_no_sample_and_missing_session_is_unknown() -> None:
    text = (
        "DEBUG acp::usage: goose usage update session_id=X input=999\n"
        "DEBUG acp::usage: goose usage update input=7 output=3\n"
        "DEBUG acp::usage: something else input=5000 output=5000\n"
    )
    log = scan(text)
    assert [(s.session_id, s.input_tokens, s.output_tokens) for s in log.sessions] == [("unknown", 7, 3)]


def test_cached_is_measured_only_when_every_session_reports_it() -> None:
    both = scan(usage("A", 100, 1, cached=40) + usage("A", 200, 2, cached=90) + usage("B", 10, 1, cached=0))
    assert both.measured_cached_tokens == 90
    partial = scan(usage("A", 100, 1, cached=40) + usage("B", 10, 1))
    assert partial.sessions[1].cached_input_tokens is None
    assert partial.measured_cached_tokens is None
    assert scan("").measured_cached_tokens is None


def test_turns_count_lines_with_any_turn_end_marker() -> None:
    text = (
        turn_end("turn complete for")
        + turn_end("turn cancelled for")
        + turn_end("turn hit max_tokens for")
        + turn_end("turn hit max_turn_requests for")
        + turn_end("turn refused for")
        + "INFO pool::prompt: turn started for channel x\n"
        + "turn complete for a; turn refused for b\n"  # one line, one turn
    )
    log = scan(text)
    assert log.turns == 6
    assert log.round_capped


def test_handoffs_are_bounded_and_truncations_counted() -> None:
    text = (
        handoff(1, 181430)
        + handoff(2, 90000)
        + "WARN buzz_agent::handoff: Handoff cap reached; TRUNCATING history to fit\n"
        + "WARN buzz_agent: summarisation failed, truncated history (handoff skipped)\n"
        + "INFO truncated output of a tool call\n"  # no 'handoff': not a truncation
        + "\x1b[33mWARN\x1b[0m handoff #3 (history 1 -> 1 items; truncated)\n"  # not the handoff shape
    )
    log = scan(text)
    assert log.handoffs.count == 2
    assert log.handoffs.input_tokens_upper_bound == 271430
    assert log.handoffs.output_tokens_upper_bound == 64000
    assert log.handoffs.truncations == 3
    assert not log.round_capped


def test_missing_and_unreadable_files(tmp_path: Path) -> None:
    (tmp_path / "solo-1.stdout.log").write_text(usage("A", 10, 1), encoding="utf-8")
    directory_named_like_a_log = tmp_path / "solo-1.stderr.log"
    directory_named_like_a_log.mkdir()
    log = scan_seat_logs([tmp_path / "solo-1.stdout.log", tmp_path / "absent.log", directory_named_like_a_log])
    assert log.input_tokens == 10
    assert len(log.unreadable) == 1 and log.unreadable[0].startswith("solo-1.stderr.log: ")


def test_invalid_utf8_does_not_lose_a_usage_line(tmp_path: Path) -> None:
    path = tmp_path / "a-1.stderr.log"
    path.write_bytes(b"\xff\xfe garbage\n" + usage("A", 42, 7).encode() + b"\x80")
    assert scan_seat_logs([path]).input_tokens == 42


def test_find_seat_logs_stdout_then_stderr_recursively(tmp_path: Path) -> None:
    (tmp_path / "nested").mkdir()
    for name in ("lead-1.stderr.log", "lead-1.stdout.log", "nested/lead-1.stdout.log", "lead-10.stdout.log"):
        (tmp_path / name).write_text("", encoding="utf-8")
    found = [p.relative_to(tmp_path).as_posix() for p in find_seat_logs(tmp_path, "lead-1")]
    assert found == ["lead-1.stdout.log", "nested/lead-1.stdout.log", "lead-1.stderr.log"]


def test_streamed_file_equals_whole_text_parse(tmp_path: Path) -> None:
    text = "".join(usage(f"s{i % 3}", i * 10, i, colour=i % 2 == 0) + turn_end() for i in range(400))
    text += handoff(1, 5000)
    path = tmp_path / "x.stdout.log"
    path.write_text(text, encoding="utf-8")
    chunks = list(iter_line_chunks(path, chunk_bytes=97))
    assert len(chunks) > 10
    assert scan_log_text(chunks) == scan_log_text([text]) == scan_seat_logs([path])


_PIECES = st.sampled_from(["a", "b", "\n", "\r", "\r\n", "\x0b", "\x85", "\u2028", "\x1c", "é", " ", "\x1b[0m"])


@given(st.lists(_PIECES, max_size=80), st.integers(min_value=1, max_value=9), st.booleans())
def test_chunks_split_exactly_like_splitlines(tmp_path_factory, pieces: list[str], chunk: int, bad: bool) -> None:
    data = "".join(pieces).encode() + (b"\xff" if bad else b"")
    path = tmp_path_factory.mktemp("lines") / "f.log"
    path.write_bytes(data)
    got = [line for part in iter_line_chunks(path, chunk_bytes=chunk) for line in part.splitlines()]
    assert got == data.decode("utf-8", errors="replace").splitlines()
