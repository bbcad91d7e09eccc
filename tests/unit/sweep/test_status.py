"""Sweep conditions and the next status: reasons, transition times, waiting, start and finish."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from buzz_operator.api.conditions import find_condition
from buzz_operator.api.sweep import BuzzSweepStatus
from buzz_operator.sweep.admission import AdmissionDecision
from buzz_operator.sweep.planner import plan_trials
from buzz_operator.sweep.rollup import SweepRollup
from buzz_operator.sweep.status import next_sweep_status

T0 = datetime(2026, 1, 1, tzinfo=UTC)
HASH = "ef" * 32
NONE = AdmissionDecision()


def _status(previous: BuzzSweepStatus, rollup: SweepRollup, **overrides: object) -> BuzzSweepStatus:
    arguments: dict[str, object] = {
        "rollup": rollup,
        "decision": NONE,
        "condition_name": "standin-oracle",
        "condition_hash": HASH,
        "suspended": False,
        "max_cost": None,
        "invalid": None,
        "now": T0,
        "generation": 3,
    }
    arguments.update(overrides)
    return next_sweep_status(previous, **arguments)  # type: ignore[arg-type]


def _table(status: BuzzSweepStatus) -> list[tuple[str, str, str]]:
    return [(c.type, c.status.value, c.reason) for c in status.conditions]


def test_running_sweep_golden() -> None:
    waiting = AdmissionDecision(
        plan_trials("demo", "u", HASH, ["a"], 1), "ParallelismLimit", "3 trials waiting: …"
    )
    rollup = SweepRollup(pending=4, running=2, total=6, not_created=3, cost_floor=0.1, cost_ceiling=0.2)
    status = _status(BuzzSweepStatus(), rollup, decision=waiting)
    assert _table(status) == [
        ("Accepted", "True", "SpecValid"),
        ("Running", "True", "TrialsActive"),
        ("Suspended", "False", "NotSuspended"),
        ("BudgetExhausted", "False", "WithinBudget"),
        ("Complete", "False", "TrialsRemaining"),
        ("Failed", "False", "NoFailure"),
    ]
    api = status.to_api()
    api.pop("conditions")
    assert api == {
        "observedGeneration": 3,
        "conditionHash": HASH,
        "conditionShort": "standin-oracle@efefefef",
        "pending": 4,
        "running": 2,
        "succeeded": 0,
        "failed": 0,
        "broken": 0,
        "total": 6,
        "passAtK": {},
        "costUSD": {"floor": 0.1, "ceiling": 0.2},
        "waiting": {"reason": "ParallelismLimit", "message": "3 trials waiting: …"},
        "startedAt": "2026-01-01T00:00:00Z",
        "shown": {"cost": "$0.10–0.20"},
    }


def test_complete_sweep_keeps_its_times() -> None:
    running = _status(BuzzSweepStatus(), SweepRollup(running=1, total=1))
    done_rollup = SweepRollup(succeeded=1, total=1, scored=1, mean_reward=1.0, pass_at_k={"1": 1.0})
    later = T0 + timedelta(minutes=5)
    done = _status(running, done_rollup, now=later)
    complete = find_condition(done.conditions, "Complete")
    assert complete is not None and (complete.status.value, complete.reason, complete.message) == (
        "True",
        "AllTrialsFinished",
        "1 succeeded, 0 failed, 0 broken",
    )
    accepted = find_condition(done.conditions, "Accepted")
    assert accepted is not None and accepted.last_transition_time == T0  # unchanged status keeps its time
    assert (done.started_at, done.finished_at, done.mean_reward) == (T0, later, 1.0)
    again = _status(done, done_rollup, now=later + timedelta(minutes=1))
    assert again.finished_at == later


def test_budget_exhausted_with_nothing_running_fails_the_sweep() -> None:
    rollup = SweepRollup(pending=3, succeeded=1, total=4, not_created=3, cost_ceiling=5.0)
    decision = AdmissionDecision([], "BudgetExhausted", "3 trials not started: …")
    status = _status(BuzzSweepStatus(), rollup, decision=decision, max_cost=5.0)
    assert ("BudgetExhausted", "True", "MaxCostReached") in _table(status)
    assert ("Failed", "True", "BudgetExhausted") in _table(status)
    assert ("Running", "False", "BudgetExhausted") in _table(status)
    assert status.finished_at == T0


def test_budget_exhausted_while_trials_still_run_is_not_failed_yet() -> None:
    rollup = SweepRollup(pending=3, running=1, total=4, not_created=3, cost_ceiling=5.0)
    status = _status(BuzzSweepStatus(), rollup, max_cost=5.0)
    assert ("Failed", "False", "NoFailure") in _table(status)
    assert status.finished_at is None


def test_invalid_spec_is_not_accepted_and_failed() -> None:
    status = _status(
        BuzzSweepStatus(), SweepRollup(), invalid="spec.attempts: must be >= 1", condition_hash=None
    )
    assert ("Accepted", "False", "InvalidSpec") in _table(status)
    failed = find_condition(status.conditions, "Failed")
    assert failed is not None and failed.message == "spec.attempts: must be >= 1"
    assert status.condition_short is None


def test_suspended_sweep_says_so() -> None:
    decision = AdmissionDecision([], "Suspended", "2 trials waiting: spec.suspend is true")
    status = _status(
        BuzzSweepStatus(), SweepRollup(pending=2, total=2, not_created=2), decision=decision, suspended=True
    )
    assert ("Suspended", "True", "SuspendRequested") in _table(status)
    assert ("Running", "False", "Suspended") in _table(status)
    assert status.waiting is not None and status.waiting.reason == "Suspended"
    assert status.started_at is None
