"""Fixture evidence for tasks/reply-to-thread and the dimensions each must fail."""

from __future__ import annotations

from tests.unit.tasks.evidence_builder import (
    ORCHESTRATOR,
    OTHER_CHANNEL_ID,
    USER,
    WORKER,
    Case,
    Snapshot,
)
from tests.unit.tasks.runner import TASKS_ROOT

TASK = "reply-to-thread"
REWARD_DIMENSIONS = (
    "evidence_complete",
    "expected_author",
    "same_channel",
    "reply_to_thread",
    "answer_correct",
)
DIAGNOSTIC_DIMENSIONS: tuple[str, ...] = ()
# The scored message is chosen by the orchestrator's pubkey, so its author can only be wrong
# when there is no scored message at all.
FAILS_ONLY_WITH = {"expected_author": frozenset(REWARD_DIMENSIONS) - {"expected_author"}}

PROMPT = (TASKS_ROOT / TASK / "instruction.md").read_text(encoding="utf-8")

LINES = "DONE:\nMonth 6 revenue: $160,811\nMonth 6 expenses: $84,462\nCumulative operating profit (months 1–6): $374,470"
ONE_LINE = "DONE: Month 6 revenue: $160,811; month 6 expenses: $84,462; cumulative operating profit: $374,470"
TABLE = """| Month | Revenue | Expenses | Profit | Running total |
|---|---|---|---|---|
| 1 | 126,000 | 76,500 | 49,500 | 49,500 |
| 2 | 132,300 | 78,030 | 54,270 | 103,770 |
| 3 | 138,915 | 79,591 | 59,324 | 163,094 |
| 4 | 145,861 | 81,182 | 64,678 | 227,773 |
| 5 | 153,154 | 82,806 | 70,348 | 298,120 |
| 6 | 160,811 | 84,462 | 76,349 | 374,470 |
"""
WORKED = f"DONE: here is the projection.\n\n{TABLE}\nMonth 6 revenue: $160,811\nMonth 6 expenses: $84,462\nCumulative operating profit: $374,470"
# Every table row is right (the running total even reaches 374,470), but the stated total is
# not: a verifier that accepted the numbers anywhere in the message would pass this.
WRONG_TOTAL = f"DONE: here is the projection.\n\n{TABLE}\nMonth 6 revenue: $160,811\nMonth 6 expenses: $84,462\nCumulative operating profit: $380,000"
SUMMARY_TABLE = """DONE:
| Figure | Amount |
|---|---|
| **Month 6 revenue** | $160,811 |
| **Month 6 expenses** | $84,462 |
| **Cumulative operating profit, months 1–6** | $374,470 |"""
SWAPPED = "DONE:\nMonth 6 revenue: $84,462\nMonth 6 expenses: $160,811\nCumulative operating profit: $374,470"


def _threaded(final: str, **final_kwargs: object) -> Snapshot:
    snap = Snapshot(TASK)
    root = snap.post("task", USER, PROMPT)
    snap.post("ack", ORCHESTRATOR, "On it — computing the projection now.", reply_to=root)
    kwargs = {"reply_to": root, **final_kwargs}
    snap.post("final", ORCHESTRATOR, final, **kwargs)
    return snap


def _cases() -> list[Case]:
    cases = [
        Case("positive-labelled-lines", _threaded(LINES).to_json()),
        Case("positive-one-line", _threaded(ONE_LINE).to_json()),
        Case("positive-worked-table", _threaded(WORKED).to_json()),
        Case("positive-summary-table", _threaded(SUMMARY_TABLE).to_json()),
        # The trap: correct numbers, but posted as a new top-level message.
        Case("top-level-reply", _threaded(LINES, reply_to=None).to_json(), frozenset({"reply_to_thread"})),
        Case("wrong-stated-total", _threaded(WRONG_TOTAL).to_json(), frozenset({"answer_correct"})),
        Case(
            "unlabelled-numbers",
            _threaded("DONE: 160,811 / 84,462 / 374,470").to_json(),
            frozenset({"answer_correct"}),
        ),
        # Each value must sit under its own label: the right numbers against the wrong names fail.
        Case("swapped-labels", _threaded(SWAPPED).to_json(), frozenset({"answer_correct"})),
        Case(
            "other-channel",
            _threaded(LINES, channel_id=OTHER_CHANNEL_ID).to_json(),
            frozenset({"same_channel"}),
        ),
    ]
    truncated = _threaded(LINES)
    truncated.truncated = True
    cases.append(Case("truncated-transcript", truncated.to_json(), frozenset({"evidence_complete"})))

    # The scored message is the orchestrator's last one: a worker's correct answer after it
    # does not count.
    worker_last = Snapshot(TASK, identities=[USER, ORCHESTRATOR, WORKER])
    root = worker_last.post("task", USER, PROMPT)
    worker_last.post("final", ORCHESTRATOR, "DONE: delegated to worker-1, see below.", reply_to=root)
    worker_last.post("worker", WORKER, LINES.removeprefix("DONE:\n"), reply_to=root)
    cases.append(Case("worker-answered-last", worker_last.to_json(), frozenset({"answer_correct"})))

    silent = Snapshot(TASK)
    silent.post("task", USER, PROMPT)
    cases.append(Case("no-orchestrator-reply", silent.to_json(), frozenset(REWARD_DIMENSIONS)))
    return cases


CASES = _cases()
