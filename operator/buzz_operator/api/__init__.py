"""The BuzzSweep / BuzzTrial API (bench.buzz.dev/v1alpha1): pydantic models that are the
single source of the CRD schemas (see crdgen), plus validation with field-named errors."""

from buzz_operator.api.common import API_VERSION, GROUP, VERSION, Condition, ConditionStatus, CostRange
from buzz_operator.api.sweep import BuzzSweepSpec, BuzzSweepStatus, RetryPolicy
from buzz_operator.api.trial import (
    BuzzTrialSpec,
    BuzzTrialStatus,
    FailedTry,
    FailureClass,
    Outcome,
    Phase,
    TrialDeadlines,
    TrialResources,
)
from buzz_operator.api.validation import SpecError, validate_sweep_spec, validate_trial_spec

__all__ = [
    "API_VERSION",
    "GROUP",
    "VERSION",
    "BuzzSweepSpec",
    "BuzzSweepStatus",
    "BuzzTrialSpec",
    "BuzzTrialStatus",
    "Condition",
    "ConditionStatus",
    "CostRange",
    "FailedTry",
    "FailureClass",
    "Outcome",
    "Phase",
    "RetryPolicy",
    "SpecError",
    "TrialDeadlines",
    "TrialResources",
    "validate_sweep_spec",
    "validate_trial_spec",
]
