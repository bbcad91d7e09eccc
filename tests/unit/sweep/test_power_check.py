"""A sweep's size judged against the comparison it is for (sweep/power_check.py,
docs/statistics.md#planning): from a baseline's summary.json or an assumed rate, never a refusal;
when it is judged again; and the Events its verdicts post."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from buzz_operator.api.sweep import Comparison, PowerStatus
from buzz_operator.observability.events import Event, sweep_events
from buzz_operator.results.power import Design, tasks_needed
from buzz_operator.sweep.power_check import REREAD_S, assumed_spread, baseline_counts, due, judge

NOW = datetime(2026, 12, 6, tzinfo=UTC)


def _comparison(**values: object) -> Comparison:
    return Comparison.model_validate(values)


def test_baseline_counts_take_the_scored_trials_per_task() -> None:
    summary = {"trials": [
        {"task": "a", "scored": True, "reward": 1.0}, {"task": "a", "scored": True, "reward": 0.5},
        {"task": "a", "scored": False, "reward": None}, {"task": "b", "scored": True, "reward": 0.0},
        {"task": "b", "scored": True, "reward": None}, "not a trial", {"scored": True, "reward": 1.0},
    ]}
    # a partial reward does not pass (scoring/passing.py), an unscored trial is not counted
    assert baseline_counts(summary) == {"a": (2, 1), "b": (2, 0)}
    assert baseline_counts({}) == {}


def test_a_size_below_the_plan_is_underpowered_and_says_how_many_tasks() -> None:
    baseline = {f"t{i}": (4, 2) for i in range(10)}  # every task 0.5
    comparison = _comparison(baseline="pilot", difference=0.2)
    needed = tasks_needed((0.5,) * 10, 0.2, 3, Design()).tasks
    assert needed is not None and needed > 10
    verdict = judge(comparison, 10, 3, NOW, baseline=baseline, baseline_finished=True)
    assert (verdict.enough, verdict.tasks_needed, verdict.baseline_scored) == (False, needed, 40)
    assert 0 < (verdict.power or 0) < 0.8
    assert "10 tasks × 3 attempts do not detect a difference of +0.2" in verdict.message
    assert f"{needed} tasks are needed" in verdict.message and "baseline pilot's 10 tasks (40 scored trials)" in verdict.message
    enough = judge(comparison, needed, 3, NOW, baseline=baseline, baseline_finished=True)
    assert enough.enough is True and (enough.power or 0) >= 0.8


def test_an_assumed_rate_uses_buzzctl_plans_spread() -> None:
    comparison = _comparison(passRate=0.5, difference=-0.3)
    assert assumed_spread(comparison) == 0.25 and assumed_spread(_comparison(passRate=0.95, difference=-0.1)) < 0.25
    verdict = judge(comparison, 200, 5, NOW)
    assert verdict.enough is True and verdict.baseline_scored is None and "assumed pass rate of 0.5" in verdict.message


def test_what_cannot_be_judged_says_why_and_is_never_a_verdict() -> None:
    empty = judge(_comparison(baseline="pilot", difference=0.1), 10, 1, NOW, baseline={}, baseline_finished=False)
    assert empty.enough is None and "baseline pilot has no scored trial of the tasks this sweep runs" in empty.message
    # a baseline that passed everything leaves no room to do better
    full = judge(_comparison(baseline="pilot", difference=0.1), 10, 1, NOW, baseline={"a": (3, 3)})
    assert full.enough is None and "spec.comparison.difference" in full.message


def test_judged_again_when_the_size_changes_or_a_running_baseline_ages() -> None:
    judged = PowerStatus(tasks=10, attempts=3, checked_at=NOW, baseline_finished=False, enough=False)
    assert not due(judged, 10, 3, NOW + timedelta(seconds=REREAD_S - 1))
    assert due(judged, 10, 3, NOW + timedelta(seconds=REREAD_S))
    assert due(judged, 11, 3, NOW) and due(judged, 10, 4, NOW) and due(None, 10, 3, NOW)
    final = judged.model_copy(update={"baseline_finished": True})
    assert not due(final, 10, 3, NOW + timedelta(days=1))


@pytest.mark.parametrize(("was", "now", "posted"), [
    ({}, {"enough": False, "message": "m"}, [Event("Warning", "Underpowered", "m")]),
    ({}, {"enough": True, "message": "m"}, [Event("Normal", "PowerEnough", "m")]),
    ({}, {"message": "cannot judge: x"}, [Event("Normal", "PowerUnknown", "cannot judge: x")]),
    # judged again, same verdict: no news
    ({"enough": False, "message": "m"}, {"checkedAt": "t", "message": "m2"}, []),
    ({"enough": None, "message": "cannot judge: x"}, {"checkedAt": "t"}, []),
    # the verdict changed
    ({"enough": False, "message": "m"}, {"enough": True, "message": "m3"}, [Event("Normal", "PowerEnough", "m3")]),
])  # fmt: skip
def test_events_post_a_verdict_when_it_is_new(was: dict, now: dict, posted: list[Event]) -> None:
    old = {"power": was} if was else {}
    assert sweep_events(old, {"power": now}) == posted
