"""The plan policy: one pass over the sweep's trials counts them and names the missing ones."""

from __future__ import annotations

from buzz_operator.sweep.drive.plan import plan
from buzz_operator.sweep.trial_view import TrialState

from tests.support.sweep_ticks import inputs, tick, trial


def test_the_missing_trials_are_the_pairs_without_a_trial(tmp_path) -> None:  # type: ignore[no-untyped-def]
    mine = [trial("s-a", "reply-to-thread", 1), trial("s-b", "user-mention", 2, TrialState.RUNNING)]
    planned = plan(tick(mine=mine), inputs(tmp_path))
    assert planned.created == 2
    assert planned.missing.count == 2  # 2 tasks × 2 attempts, 2 exist
    assert {(p.task, p.attempt) for p in planned.missing.first} == {("user-mention", 1), ("reply-to-thread", 2)}


def test_the_plan_names_the_parallelism_and_as_many_again_plus_the_warm_pods(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Those admission may start now, and the next ones, whose pods are made and images pulled
    ahead (docs/warm-pods.md): never the whole sweep."""
    spec = {**inputs(tmp_path).spec.to_api(), "attempts": 5, "parallelism": 3}
    planned = plan(tick(), inputs(tmp_path, spec))
    assert planned.missing.count == 10 and len(planned.missing.first) == 6 and planned.created == 0
    warm = plan(tick(), inputs(tmp_path, {**spec, "warmPods": 2}))
    assert len(warm.missing.first) == 8
    assert [t.name for t in warm.missing.first[:6]] == [t.name for t in planned.missing.first]


def test_a_trial_of_a_task_no_longer_listed_is_counted_but_plans_nothing(tmp_path) -> None:  # type: ignore[no-untyped-def]
    planned = plan(tick(mine=[trial("s-x", "gone-task", 1)]), inputs(tmp_path))
    assert planned.created == 1 and planned.missing.count == 4
