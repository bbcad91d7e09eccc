from __future__ import annotations

from datetime import UTC, datetime, timedelta

from buzz_operator.sweep.lifecycle import condition_drift, seconds_until_expiry
from buzz_operator.sweep.rerun import select_reruns
from buzz_operator.sweep.trial_view import TrialState, TrialView

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def _trial(name: str, state: TrialState, outcome: str | None, reason: str | None) -> TrialView:
    return TrialView(
        name=name, sweep="s", task="t", attempt=1, state=state, outcome=outcome, reason=reason
    )


TRIALS = [
    _trial("c", TrialState.FAILED, "launch", "ErrImagePull"),
    _trial("a", TrialState.SUCCEEDED, "timeout", "AgentTimeout"),
    _trial("b", TrialState.BROKEN, "broken", "VerifierBroken"),
    _trial("d", TrialState.RUNNING, "timeout", "AgentTimeout"),
    _trial("e", TrialState.SUCCEEDED, "ok", "Done"),
]


def test_reruns_match_outcomes_or_reasons_of_finished_trials() -> None:
    in_order = sorted(TRIALS, key=lambda t: t.name)  # as SweepTrials.by_name gives them
    assert [t.name for t in select_reruns(in_order, ["timeout", "VerifierBroken"])] == ["a", "b"]
    assert [t.name for t in select_reruns(in_order, ["ErrImagePull"])] == ["c"]
    assert list(select_reruns(in_order, ["NoSuchThing"])) == []


def test_ttl_counts_from_the_finish() -> None:
    assert seconds_until_expiry(None, 60, T0) is None
    assert seconds_until_expiry(T0, None, T0) is None
    assert seconds_until_expiry(T0, 60, T0 + timedelta(seconds=15)) == 45.0
    assert seconds_until_expiry(T0, 60, T0 + timedelta(hours=1)) == 0.0


def test_condition_drift_is_named() -> None:
    assert condition_drift(None, "a" * 64) is None
    assert condition_drift("a" * 64, "a" * 64) is None
    message = condition_drift("a" * 64, "b" * 64)
    assert message is not None and "aaaaaaaaaaaa → bbbbbbbbbbbb" in message


def test_a_trial_created_under_the_rerun_generation_is_not_rerun_again() -> None:

    rerun_already = TRIALS[1]._replace(created_generation=3)
    older = TRIALS[2]._replace(created_generation=2)
    chosen = select_reruns([rerun_already, older, TRIALS[0]], ["timeout", "broken", "launch"], generation=3)
    assert [t.name for t in chosen] == ["b", "c"]
    assert [t.name for t in select_reruns([rerun_already], ["timeout"], generation=4)] == ["a"]


def test_created_generation_is_read_from_the_trial_annotation() -> None:
    from buzz_operator.api.labels import CREATED_AT_GENERATION
    from buzz_operator.sweep.trial_view import view_trial

    body = {"metadata": {"name": "t", "annotations": {CREATED_AT_GENERATION: "7"}},
            "spec": {"sweepName": "s", "task": "x", "attempt": 1}}
    assert view_trial(body).created_generation == 7
    assert view_trial({"metadata": {"name": "t"}, "spec": {}}).created_generation is None


def test_regrade_selects_scored_finished_trials_once_per_generation() -> None:

    from buzz_operator.sweep.rerun import select_regrades

    done = TRIALS[4]._replace(scored=True)
    asked = done._replace(name="f", regrade_requested=5)
    asked_before = done._replace(name="g", regrade_requested=4)
    new = done._replace(name="h", created_generation=5)
    broken = TRIALS[2]  # not scored
    running = TRIALS[3]._replace(scored=True)
    chosen = select_regrades([done, asked, asked_before, new, broken, running], 5)
    assert [t.name for t in chosen] == ["e", "g"]
