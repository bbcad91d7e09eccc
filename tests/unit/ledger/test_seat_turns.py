"""A seat's turns from its buzz-acp logs (ledger/seat_turns.py; docs/trajectory.md#seat-steps):
turns paired with their ends by label, delivery receipts and tool calls under their turn, each
round's usage the step from the session's last cumulative line."""

from __future__ import annotations

from pathlib import Path

from buzz_operator.ledger.agent_log import find_seat_logs, scan_seat_logs
from buzz_operator.ledger.seat_turns import seat_turns

A, B = "a" * 64, "b" * 64
CHANNEL = "channel 5c4feb67-fc30-4637-88c4-5a71c9b3c579"
OTHER = "channel 0b5c9f2e-4d7a-4e61-9c3f-8a2d6b1e7f40"


def line(second: int, level: str, target: str, text: str) -> str:
    return f"\x1b[2m2026-12-05T10:00:{second:02d}.000000Z\x1b[0m {level:>5} {target}: {text}\n"


def test_turns_calls_receipts_and_usage(tmp_path: Path) -> None:
    stderr = "".join([
        line(0, "INFO", "pool::prompt", f"turn starting for {CHANNEL}"),
        line(1, "DEBUG", "acp::usage", "goose usage update session_id=s1 input=100 output=10 cached=40"),
        line(2, "INFO", "acp::tool", "tool_call: buzz messages send (execute)"),
        line(3, "INFO", "acp::tool", "tool_call_update: tc-1 → completed"),
        line(3, "INFO", "acp::tool", "tool_call: Read file (read)"),
        line(4, "DEBUG", "acp::usage", "goose usage update session_id=s1 input=250 output=30 cached=90"),
        line(5, "INFO", "pool::prompt", f"turn delivered Buzz events for channel x: {A},{B}"),
        line(5, "INFO", "buzz_acp", f"turn complete for {CHANNEL}: end_turn"),
        line(9, "INFO", "acp::tool", "tool_call_update: tc-2 → failed"),
        line(10, "INFO", "pool::prompt", f"turn starting for {OTHER}"),
        line(11, "INFO", "pool::prompt", f"turn starting for {CHANNEL}"),
        line(12, "DEBUG", "acp::usage", "goose usage update session_id=s2 input=70 output=7"),
        line(13, "INFO", "buzz_acp", f"turn hit max_turn_requests for {OTHER}: 30"),
        line(14, "INFO", "buzz_acp", f"turn complete for {CHANNEL}: end_turn"),
    ])  # fmt: skip
    (tmp_path / "lead-1.stderr.log").write_text(stderr)
    (tmp_path / "lead-1.stdout.log").write_text("noise without a marker\n")
    first, other, second = seat_turns(find_seat_logs(tmp_path, "lead-1"))
    assert (first.label, first.started, first.ended, first.end_marker) == (
        CHANNEL, "2026-12-05T10:00:00.000000Z", "2026-12-05T10:00:05.000000Z", "turn complete")
    assert first.delivered == [A, B]
    # the update after the turn's end still finds its call: ids are given in the calls' order
    assert [(c.title, c.kind, c.call_id, c.status) for c in first.tool_calls] == [
        ("buzz messages send", "execute", "tc-1", "completed"), ("Read file", "read", "tc-2", "failed")]
    assert (first.input_tokens, first.output_tokens, first.cached_tokens, first.usage_lines) == (250, 30, 90, 2)
    # two turns open: a line goes to the latest; an end finds its turn by label
    assert (other.label, other.end_marker, other.input_tokens) == (OTHER, "turn hit max_turn_requests", 0)
    assert (second.input_tokens, second.cached_tokens) == (70, None) and second.end_marker == "turn complete"
    # the turns' tokens are the seat's metered ones
    log = scan_seat_logs(find_seat_logs(tmp_path, "lead-1"))
    assert sum(t.input_tokens for t in (first, other, second)) == log.input_tokens
    assert sum(t.output_tokens for t in (first, other, second)) == log.output_tokens


def test_a_log_without_turn_markers_still_keeps_its_usage(tmp_path: Path) -> None:
    (tmp_path / "w.stderr.log").write_text(line(1, "DEBUG", "acp::usage", "goose usage update session_id=s input=5 output=1"))
    [turn] = seat_turns([tmp_path / "w.stderr.log", tmp_path / "missing.log"])
    assert (turn.label, turn.input_tokens, turn.output_tokens) == ("", 5, 1)
    assert seat_turns([tmp_path / "missing.log"]) == []
