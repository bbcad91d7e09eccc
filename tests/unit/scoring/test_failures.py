"""Failure classes decide retry vs score vs exclude; the table follows docs/failures.md#classes."""

from __future__ import annotations

import pytest
from buzz_operator.api.trial import FailureClass, Outcome
from buzz_operator.scoring.failures import (
    StepFailure,
    classify_failure,
    exception_reason,
    failure_outcome,
)


@pytest.mark.parametrize(
    ("reason", "expected"),
    [
        ("PodLost", FailureClass.INFRA),
        ("PodEvicted", FailureClass.INFRA),
        ("ErrImagePull", FailureClass.INFRA),
        ("ImagePullBackOff", FailureClass.INFRA),
        ("RelayUnavailable", FailureClass.INFRA),
        ("PostgresUnavailable", FailureClass.INFRA),
        ("StorageUnavailable", FailureClass.INFRA),
        ("ExecStreamBroken", FailureClass.INFRA),
        ("AgentTimeout", FailureClass.OUTCOME),
        ("NoDone", FailureClass.OUTCOME),
        ("VerifierFailed", FailureClass.OUTCOME),
        ("RewardMissing", FailureClass.OUTCOME),
        ("EvidenceExportFailed", FailureClass.BROKEN),
        ("VerifierBroken", FailureClass.BROKEN),
        ("AccountingUnreconciled", FailureClass.BROKEN),
    ],
)
def test_reasons_are_classified(reason: str, expected: FailureClass) -> None:
    assert classify_failure(reason) is expected
    assert classify_failure(StepFailure(reason)) is expected


@pytest.mark.parametrize(
    ("error", "reason", "expected"),
    [
        (TimeoutError(), "StepTimeout", FailureClass.INFRA),
        (TimeoutError(), "StepTimeout", FailureClass.INFRA),
        (ConnectionRefusedError(), "ServiceUnavailable", FailureClass.INFRA),
        (BrokenPipeError(), "ExecStreamBroken", FailureClass.INFRA),
        (KeyError("x"), "InternalError", FailureClass.INFRA),
    ],
)
def test_exceptions_are_classified_by_type(error: BaseException, reason: str, expected: FailureClass) -> None:
    assert exception_reason(error) == reason
    assert classify_failure(error) is expected


def test_unknown_reasons_are_refused_where_raised() -> None:
    with pytest.raises(ValueError, match="unknown failure reason 'PodLsot'"):
        StepFailure("PodLsot")
    with pytest.raises(ValueError, match="unknown failure reason"):
        classify_failure("Whatever")


def test_step_failure_carries_message_and_partial_bundle() -> None:
    failure = StepFailure("PodLost", "node went away", bundle_url="file:///b/t/retry-0")
    assert str(failure) == "PodLost: node went away"
    assert failure.bundle_url == "file:///b/t/retry-0"


@pytest.mark.parametrize(
    ("reason", "timed_out", "outcome"),
    [
        ("EvidenceExportFailed", True, Outcome.BROKEN),
        ("VerifierTimeout", False, Outcome.TIMEOUT),
        ("VerifierFailed", True, Outcome.TIMEOUT),
        ("VerifierFailed", False, Outcome.ERROR),
        ("ErrImagePull", False, Outcome.LAUNCH),
        ("AgentsNotReady", False, Outcome.LAUNCH),
        ("PodLost", False, Outcome.ERROR),
    ],
)
def test_failure_outcomes_use_the_seed_vocabulary(reason: str, timed_out: bool, outcome: Outcome) -> None:
    assert failure_outcome(reason, timed_out=timed_out) is outcome
