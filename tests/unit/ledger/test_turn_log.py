"""TurnLog: Block's solo completion rule (block/buzz #6487) read incrementally from buzz-acp logs."""

from __future__ import annotations

import pytest
from buzz_operator.ledger.turn_log import TurnLog

CHANNEL = "0b5c9f2e-4d7a-4e61-9c3f-8a2d6b1e7f40"
TASK, LEDGER, RISK = "a" * 64, "b" * 64, "c" * 64
START = f"2026-08-21T16:00:00.000001Z  INFO pool::prompt: turn starting for channel {CHANNEL}\n"
END = f"2026-08-21T16:00:03.000001Z  INFO pool::prompt: turn complete for channel {CHANNEL}: end_turn\n"


def receipt(*ids: str) -> str:
    return (f"2026-08-21T16:00:03.000002Z  INFO pool::prompt: turn delivered Buzz events for channel "
            f"{CHANNEL}: {','.join(sorted(ids))}\n")


def test_no_scripted_events_finish_at_the_first_turn_end() -> None:
    log = TurnLog()
    log.feed(START)
    assert not log.finished(frozenset())
    log.feed(END)
    assert log.finished(frozenset())


def test_scripted_events_need_idle_and_every_receipt() -> None:
    scripted = frozenset({LEDGER, RISK})
    log = TurnLog()
    log.feed(START + receipt(TASK) + END)
    assert log.idle and not log.finished(scripted)
    assert log.unacknowledged(scripted) == {LEDGER, RISK}
    log.feed(START + receipt(LEDGER, RISK))  # every receipt, but the turn is still running
    assert log.delivered >= scripted and not log.finished(scripted)
    log.feed(END)
    assert log.finished(scripted)


def test_a_steered_event_counts_only_when_the_ack_succeeded() -> None:
    log = TurnLog()
    failed = f"INFO buzz_acp: non-cancelling steer ack received channel={CHANNEL} event_id={RISK} ack=Ok(Err(\"x\"))\n"
    landed = (f"INFO buzz_acp: non-cancelling steer ack received channel={CHANNEL} event_id={LEDGER} "
              "ack=Ok(Success { session_id: \"s\" })\n")
    log.feed(START + failed + landed + END)
    assert log.delivered == {LEDGER}


@pytest.mark.parametrize("size", [1, 7, 64, 10_000])
def test_any_chunking_reads_the_same(size: int) -> None:
    text = "\x1b[32m" + START + "\x1b[0m" + receipt(TASK, LEDGER) + END + START + receipt(RISK) + END
    log = TurnLog()
    for at in range(0, len(text), size):
        log.feed(text[at : at + size])
    assert (log.starts, log.ends, log.delivered) == (2, 2, {TASK, LEDGER, RISK})
    assert log.finished(frozenset({LEDGER, RISK}))


def test_an_unfinished_last_line_is_not_read_yet() -> None:
    log = TurnLog()
    log.feed(END[:-1])
    assert log.ends == 0
    log.feed("\n")
    assert log.ends == 1
