"""sweep watch's screen from API objects: counts, running trials with age, why waiting."""

from __future__ import annotations

from datetime import UTC, datetime

from buzz_operator.cli.sweep_watch import render, state_of
from rich.console import Console

NOW = datetime(2026, 11, 30, 2, 0, 0, tzinfo=UTC)


def sweep(**status: object) -> dict:
    base = {"pending": 3, "running": 2, "succeeded": 4, "failed": 1, "broken": 0, "total": 10,
            "costUSD": {"floor": 0.5, "ceiling": 0.75}, "conditionShort": "team@6ef824b8", "meanReward": 0.8}  # fmt: skip
    base.update(status)
    return {"metadata": {"name": "s"}, "spec": {"budget": {"maxCostUSD": 5}, "suspend": True}, "status": base}


def trial(name: str, phase: str, since: str, **status: object) -> dict:
    return {
        "metadata": {"name": name, "creationTimestamp": "2026-11-30T01:00:00Z"},
        "spec": {"task": "hello-file", "attempt": 1},
        "status": {"phase": phase, "phaseTimes": {phase.lower(): since}, **status},
    }


def test_state_and_screen() -> None:
    trials = [
        trial("t-run", "Running", "2026-11-30T01:58:30Z"),
        trial("t-pend", "Pending", "2026-11-30T01:59:50Z", pod="t-pend-0"),
        trial("t-done", "Succeeded", "2026-11-30T01:00:00Z"),
    ]
    waiting = {"reason": "ParallelismLimit", "message": "3 trials wait: parallelism 2 reached"}
    state = state_of(
        sweep(waiting=waiting),
        trials,
        {"t-pend": "Unschedulable: 0/1 nodes are available: 1 Insufficient cpu."},
        NOW,
    )
    assert state.done == 5 and state.total == 10 and state.budget == 5
    assert [(t.name, t.phase, t.age_seconds) for t in state.active] == [
        ("t-pend", "Pending", 10.0),
        ("t-run", "Running", 90.0),
    ]
    assert state.waiting == [
        "Suspended: spec.suspend is true, no new trials start",
        "ParallelismLimit: 3 trials wait: parallelism 2 reached",
        "t-pend: Unschedulable: 0/1 nodes are available: 1 Insufficient cpu.",
    ]
    assert state.finished is None
    console = Console(width=160, record=True)
    console.print(render(state))
    screen = console.export_text()
    assert "5/10 done" in screen and "$0.5000–$0.7500 of $5.00 budget" in screen and "1m30s" in screen
    assert "waiting: ParallelismLimit" in screen


def test_finished_sweep() -> None:
    done = sweep(
        conditions=[
            {"type": "Complete", "status": "True", "reason": "AllTrialsFinished", "message": "10 of 10"}
        ]
    )
    assert state_of(done, [], {}, NOW).finished == "Complete: 10 of 10"
