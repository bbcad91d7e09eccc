"""Harbor 0.26's error policy as the operator writes and reads it (docs/harbor.md#error-policy):
every exception the operator records carries an override equal to the project's class, so
Harbor's ``reward_valid`` agrees with what the project scores whatever name Harbor sees; that
Harbor's own code computes the same is tests/harbor's part."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from buzz_operator.api.trial import BuzzTrialStatus, FailureClass, Outcome
from buzz_operator.ledger import TrialException
from buzz_operator.ledger.harbor_policy import HARBOR_POLICIES, policy_of, reward_valid
from buzz_operator.scoring.failures import BROKEN_REASONS, INFRA_REASONS, OUTCOME_REASONS, classify_reason
from buzz_operator.trial.steps.bundle import _exception

T0 = datetime(2026, 12, 5, 9, 0, tzinfo=UTC)
FLAGS = {  # the project's class → (retry, grade, valid reward)
    FailureClass.INFRA: (True, False, False),
    FailureClass.OUTCOME: (False, True, True),
    FailureClass.BROKEN: (False, True, False),
}


def _flags(document: dict) -> tuple[bool, bool, bool]:
    return (document["should_retry"], document["should_grade"], document["has_valid_reward"])


@pytest.mark.parametrize("reason", sorted(INFRA_REASONS | OUTCOME_REASONS | BROKEN_REASONS))
def test_every_reason_carries_its_class_as_the_override(reason: str) -> None:
    failure_class = classify_reason(reason)
    info = TrialException.for_reason(reason, "why", T0, failure_class).to_json()
    assert _flags(info["policy_override"]) == _flags(info["policy"]) == FLAGS[failure_class]
    assert list(info)[-1] == "buzz_reason" and info["buzz_reason"] == reason
    result = {"verifier_result": {"rewards": {"reward": 1.0}}, "exception_info": info}
    assert reward_valid(result) is (failure_class is FailureClass.OUTCOME)


def test_an_unknown_name_without_override_reads_as_a_valid_reward() -> None:
    """What a Harbor 0.26 reader did to this project's infra trials before the override."""
    info = {"exception_type": "StorageUnavailable"}
    assert _flags(policy_of(info).to_json()) == (True, True, True)
    assert reward_valid({"verifier_result": {"rewards": {"reward": 0.0}}, "exception_info": info})


def test_the_table_and_a_partial_override() -> None:
    assert HARBOR_POLICIES["AgentTimeoutError"].has_valid_reward
    assert not HARBOR_POLICIES["VerifierTimeoutError"].has_valid_reward
    partial = {"exception_type": "VerifierTimeoutError", "policy_override": {"has_valid_reward": True}}
    assert _flags(policy_of(partial).to_json()) == (False, True, True)


def test_no_rewards_are_never_valid_and_every_step_counts() -> None:
    assert not reward_valid({"verifier_result": None})
    assert not reward_valid({"verifier_result": {"rewards": {}}})
    step = {"exception_info": {"exception_type": "HealthcheckError"}}
    assert not reward_valid({"verifier_result": {"rewards": {"r": 1}}, "step_results": [step]})


def _status(outcome: Outcome, failure_class: FailureClass | None, reason: str | None) -> BuzzTrialStatus:
    return BuzzTrialStatus(outcome=outcome, failure_class=failure_class, reason=reason, message=reason)


def test_a_team_timeout_is_harbors_agent_timeout_with_the_outcome_class() -> None:
    info = _exception(_status(Outcome.TIMEOUT, None, "AgentTimeout"), T0)
    assert info is not None
    document = info.to_json()
    assert document["exception_type"] == "AgentTimeoutError" and "buzz_reason" not in document
    assert _flags(document["policy_override"]) == FLAGS[FailureClass.OUTCOME]


@pytest.mark.parametrize(("reason", "harbor"), [("ScheduleTimeout", "EnvironmentStartTimeoutError"),
                                                 ("StepTimeout", "StepTimeout")])  # fmt: skip
def test_an_infra_timeout_keeps_its_reason(reason: str, harbor: str) -> None:
    """The outcome word of an infra reason naming a timeout is "timeout"; it was written as the
    team's AgentTimeoutError, which Harbor and the project's own readers both scored."""
    info = _exception(_status(Outcome.TIMEOUT, FailureClass.INFRA, reason), T0)
    assert info is not None
    document = info.to_json()
    assert (document["exception_type"], document["buzz_reason"]) == (harbor, reason)
    assert _flags(document["policy"]) == FLAGS[FailureClass.INFRA]
