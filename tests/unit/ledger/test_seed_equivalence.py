"""The streamed, shortcut-taking parser gives exactly the seed's answer (docs/accounting.md#log-lines).

The reference below is the seed's algorithm written plainly: read the whole text, strip every
ANSI escape with one regex pass, split with ``splitlines()``, test each line. The production
parser streams chunks, strips with literal replaces, and strips only candidate lines; these tests
feed both the same adversarial text — escapes inside markers, non-SGR escapes, odd line breaks,
non-ASCII, mixed case — and require identical results.
"""

from __future__ import annotations

import re
from pathlib import Path

from buzz_operator.ledger.agent_log import (
    HANDOFF_MAX_OUTPUT_TOKENS,
    TURN_END_MARKERS,
    HandoffUsage,
    SeatLog,
    SessionUsage,
    scan_log_text,
    scan_seat_logs,
)
from buzz_operator.ledger.ansi import strip_ansi
from buzz_operator.ledger.lines import iter_line_chunks
from buzz_operator.ledger.log_candidates import candidate_lines
from hypothesis import given, settings
from hypothesis import strategies as st

SEED_ANSI = re.compile(r"\x1b\[[0-9;]*[a-zA-Z]")
SEED_SESSION = re.compile(r"\bsession_id=(\S+)")
SEED_INPUT = re.compile(r"\binput=(?:Some\()?(\d+)\)?\b")
SEED_OUTPUT = re.compile(r"\boutput=(?:Some\()?(\d+)\)?\b")
SEED_CACHED = re.compile(r"\bcached=(\d+)\b")
SEED_HANDOFF = re.compile(r"\bhandoff #(\d+) \(history .*?; (\d+) -> \d+ tokens\)")


def seed_scan(text: str) -> SeatLog:
    lines = SEED_ANSI.sub("", text).splitlines()
    high: dict[str, tuple[int, int, int | None]] = {}
    for line in lines:
        if "goose usage update" not in line:
            continue
        i, o = SEED_INPUT.search(line), SEED_OUTPUT.search(line)
        if i is None or o is None:
            continue
        s = SEED_SESSION.search(line)
        sid = s.group(1) if s else "unknown"
        a, b, c = high.get(sid, (0, 0, None))
        cm = SEED_CACHED.search(line)
        if cm is not None:
            c = int(cm.group(1)) if c is None else max(c, int(cm.group(1)))
        high[sid] = (max(a, int(i.group(1))), max(b, int(o.group(1))), c)
    turns = sum(1 for line in lines if any(marker in line for marker in TURN_END_MARKERS))
    contexts, truncations = [], 0
    for line in lines:
        match = SEED_HANDOFF.search(line)
        if match is not None:
            contexts.append(int(match.group(2)))
            continue
        lowered = line.lower()
        if "handoff" in lowered and "truncat" in lowered:
            truncations += 1
    return SeatLog(
        sessions=tuple(SessionUsage(k, *v) for k, v in sorted(high.items())),
        turns=turns,
        handoffs=HandoffUsage(len(contexts), sum(contexts), len(contexts) * HANDOFF_MAX_OUTPUT_TOKENS, truncations),
        round_capped="max_turn_requests" in text,
    )


PIECES = [
    "goose usage update ", "session_id=", "s1 ", "s2 ", "input=", "output=", "cached=", "Some(", ")",
    "12", "7", " ", "x", "\n", "\r", "\r\n", "\x0b", "\x85", "é", "İ", "\x1b", "\x1b[", "\x1b[0m", "\x1b[2m",
    "\x1b[3m", "\x1b[32m", "\x1b[1;31m", "\x1b[K", "\x1b[5", "[m", ";", "turn ", "complete for", "com",
    "plete for", "refused for", "turn hit max_turn_requests for", "handoff #1 (history 8 -> 3 items; ",
    " -> 5 tokens)", "HandOff", "TRUNCATED", "truncat", "_", "=", "m", "\x00",
]  # fmt: skip


def file_scan(tmp: Path, text: str, chunk_bytes: int) -> SeatLog:
    path = tmp / "seat.stdout.log"
    path.write_text(text, encoding="utf-8", newline="")
    return scan_log_text(iter_line_chunks(path, chunk_bytes=chunk_bytes))


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=60), st.sampled_from([3, 17, 1 << 20]))
def test_parser_equals_seed(tmp_path_factory, pieces: list[str], chunk_bytes: int) -> None:
    text = "".join(pieces)
    expected = seed_scan(text)
    assert scan_log_text([text]) == expected
    assert file_scan(tmp_path_factory.mktemp("eq"), text, chunk_bytes) == expected


def test_escapes_inside_markers_count_as_the_seed_counts_them(tmp_path: Path) -> None:
    text = (
        "INFO turn \x1b[1mcomplete\x1b[0m for c\n"  # SGR inside a marker: shortcut path
        "INFO turn com\x1b[Kplete for c\n"  # a non-SGR escape inside a marker: plain path
        "DEBUG goose \x1b[3musage\x1b[0m update input=5 output=1\n"
    )
    expected = seed_scan(text)
    assert expected.turns == 2 and expected.input_tokens == 5
    assert scan_seat_logs([_write(tmp_path, text)]) == expected


def _write(tmp: Path, text: str) -> Path:
    path = tmp / "x.stdout.log"
    path.write_text(text, encoding="utf-8", newline="")
    return path


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(["\x1b", "[", "0", "2", "3", "m", ";", "1", "a", "Z", " ", "\x1b[0m", "\x1b[2m", "é", "\n"]), max_size=30))
def test_strip_ansi_equals_one_regex_pass(pieces: list[str]) -> None:
    text = "".join(pieces)
    assert strip_ansi(text) == SEED_ANSI.sub("", text)


def test_candidate_shortcut_declines_when_it_cannot_be_exact() -> None:
    assert candidate_lines("é goose usage update\n") is None
    assert candidate_lines("a\rb\n") is None
    assert candidate_lines("\x1b[2Kturn complete for x\n") is None
    assert candidate_lines("\x1b[32mINFO\x1b[0m turn complete for x\nnoise\n") == ["\x1b[32mINFO\x1b[0m turn complete for x"]
    assert candidate_lines("just noise\nmore\n") == []
