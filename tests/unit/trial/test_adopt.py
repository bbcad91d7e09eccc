"""A trial resumed into storage that already holds its committed bundle takes that bundle's
result instead of running again."""

from __future__ import annotations

from datetime import UTC, datetime

from buzz_operator.api.trial import BuzzTrialStatus, FailureClass, Outcome, Phase
from buzz_operator.sweep.trial_view import TrialState, is_scored, trial_state
from buzz_operator.trial.adopt import adopted_status
from buzz_operator.trial.drive.driver import settled

NOW = datetime(2026, 11, 30, 3, 0, tzinfo=UTC)
URL = "file:///store/s/s-abc"


def _result(exception: dict | None = None, rewards: dict | None = None) -> dict:
    return {
        "agent_result": {"cost_usd": 0.25, "n_input_tokens": 1000, "n_output_tokens": 20, "metadata": {}},
        "verifier_result": {"rewards": rewards} if rewards is not None else None,
        "exception_info": exception,
    }


def test_a_passed_trial_is_adopted_as_succeeded_and_settled() -> None:
    status = adopted_status(BuzzTrialStatus(), _result(rewards={"reward": 1.0, "note": "x"}), URL, NOW)
    assert (status.phase, status.outcome, status.failure_class) == (Phase.SUCCEEDED, Outcome.OK, None)
    assert status.reward == 1.0 and status.rewards == {"reward": 1.0}
    assert status.cost_usd.floor == 0.25 and status.tokens.input == 1000 and status.bundle_url == URL
    assert settled(status) and trial_state(status) is TrialState.SUCCEEDED and is_scored(status)
    released = next(c for c in status.conditions if c.type == "Released")
    assert released.reason == "Adopted" and URL in released.message


def test_a_timed_out_trial_keeps_its_timeout_and_score() -> None:
    exception = {"exception_type": "AgentTimeoutError", "exception_message": "no DONE"}
    status = adopted_status(BuzzTrialStatus(), _result(exception, {"reward": 0.0}), URL, NOW)
    assert (status.phase, status.outcome, status.reward) == (Phase.SUCCEEDED, Outcome.TIMEOUT, 0.0)


def test_a_broken_trial_stays_broken_and_unscored() -> None:
    exception = {"exception_type": "EvidenceExportFailed", "exception_message": "relay gone"}
    status = adopted_status(BuzzTrialStatus(), _result(exception), URL, NOW)
    assert status.phase is Phase.FAILED and status.failure_class is FailureClass.BROKEN
    assert status.reason == "EvidenceExportFailed" and not is_scored(status)
    assert any(c.type == "Failed" and c.status == "True" for c in status.conditions)


def test_a_reason_this_build_does_not_know_is_flagged_not_scored() -> None:
    status = adopted_status(BuzzTrialStatus(), _result({"exception_type": "Martian"}), URL, NOW)
    assert status.failure_class is FailureClass.BROKEN and status.reason == "UnknownRecordedFailure"
    assert "Martian" in (status.message or "") and status.reward is None
