"""Harbor's error policy of a trial document, and the operator's override (docs/harbor.md#error-policy).

Harbor 0.26 decides three things per recorded exception, by its ``exception_type`` alone
(``harbor.models.trial.error_policy``): retry it, grade the trial, and whether the reward it left
is valid. A trial's ``reward_valid`` — the only trials its metrics and pass@k count — is true when
the verifier wrote rewards and every recorded exception's policy says the reward is valid. A name
Harbor does not know counts as "retry, grade, valid": so a trial the operator classifies as infra
under a name of its own (``StorageUnavailable``) would be scored by Harbor. 0.26's cure is a
``policy_override`` on the exception, which the operator writes on every exception it records,
set to exactly the project's class (docs/failures.md#classes):

- infra: retried, not graded, no valid reward — the platform failed, not the team;
- outcome: graded, the reward stands — the team's own result, never retried;
- broken: graded, no valid reward — the verifier ran but its score cannot be trusted.

Harbor 0.25 ignores the override (its model has no such field); its statistics do not read the
policy at all, so they are computed apart (results/harbor_stats.py). Pure.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Final

from buzz_operator.api.trial import FailureClass

OVERRIDE_KEY = "policy_override"
POLICY_KEY = "policy"
FLAGS = ("should_retry", "should_grade", "has_valid_reward")


@dataclass(frozen=True, slots=True)
class ErrorPolicy:
    """Harbor ``ErrorPolicy``: what an exception means for the trial."""

    should_retry: bool
    should_grade: bool
    has_valid_reward: bool

    def to_json(self) -> dict[str, bool]:
        return {"should_retry": self.should_retry, "should_grade": self.should_grade,
                "has_valid_reward": self.has_valid_reward}  # fmt: skip


CLASS_POLICIES: Final[Mapping[FailureClass, ErrorPolicy]] = MappingProxyType({
    FailureClass.INFRA: ErrorPolicy(should_retry=True, should_grade=False, has_valid_reward=False),
    FailureClass.OUTCOME: ErrorPolicy(should_retry=False, should_grade=True, has_valid_reward=True),
    FailureClass.BROKEN: ErrorPolicy(should_retry=False, should_grade=True, has_valid_reward=False),
})  # fmt: skip

# Harbor 0.26.0's table (error_policy._POLICY_GROUPS), for documents that carry no override: the
# seed's, and this project's before it wrote one. The Harbor tier checks it against Harbor's own.
UNKNOWN_POLICY: Final = ErrorPolicy(should_retry=True, should_grade=True, has_valid_reward=True)
_GROUPS: Final[dict[ErrorPolicy, tuple[str, ...]]] = {
    ErrorPolicy(True, False, False): (
        "EnvironmentStartTimeoutError", "SandboxBuildFailedError", "AgentSetupTimeoutError", "HealthcheckError",
        "SandboxLikelyOutOfMemoryError", "MemoryLimitExceededError", "SSHAccessError", "GKEExecStreamClosedError",
        "GKEPodNotFoundError", "RuntimeRequestError", "AddTestsDirError", "DownloadVerifierDirError",
    ),
    ErrorPolicy(True, True, False): (
        "ApiError", "ApiRateLimitError", "ApiInternalServerError", "ApiOverloadedError", "ApiConnectionClosedError",
        "ApiResponseStalledError", "UnknownApiError", "NetworkConnectionError", "ApiConnectionError",
        "ApiUsageLimitError", "RateLimitError", "InternalServerError", "ServiceUnavailableError",
        "APIConnectionError", "APIError", "Timeout",
    ),
    ErrorPolicy(False, True, False): (
        "UnsupportedModelParametersError", "BadRequestError", "UnprocessableEntityError", "UnsupportedParamsError",
        "APIResponseValidationError", "BudgetExceededError", "VerifierTimeoutError", "RewardFileNotFoundError",
        "RewardFileEmptyError", "VerifierOutputParseError",
    ),
    ErrorPolicy(False, False, False): (
        "AgentAuthenticationError", "ModelNotFoundError", "ApiProviderResourceNotFoundError", "AuthenticationError",
        "PermissionDeniedError", "NotFoundError", "ServiceOperationsUnsupportedError", "VercelScopeError",
        "DspyImportError", "MissingExtraError", "RegradeError", "CancelledError",
    ),
    ErrorPolicy(False, True, True): (
        "NonZeroAgentExitCodeError", "AgentTimeoutError", "ContextWindowExceededError", "OutputTokenExceededError",
        "ContextLengthExceededError", "OutputLengthExceededError", "AgentSafetyRefusalError",
        "ContentPolicyViolationError",
    ),
}  # fmt: skip
HARBOR_POLICIES: Final[Mapping[str, ErrorPolicy]] = MappingProxyType(
    {name: policy for policy, names in _GROUPS.items() for name in names}
)


def class_override(failure_class: FailureClass) -> dict[str, bool]:
    """The ``policy_override`` the operator writes for an exception of this class: every flag set."""
    return CLASS_POLICIES[failure_class].to_json()


def policy_of(exception_info: Mapping[str, Any]) -> ErrorPolicy:
    """Harbor 0.26's ``ExceptionInfo.policy``: its table's policy for the name, the override's flags
    laid over it."""
    policy = HARBOR_POLICIES.get(str(exception_info.get("exception_type")), UNKNOWN_POLICY)
    override = exception_info.get(OVERRIDE_KEY)
    if not isinstance(override, Mapping):
        return policy
    flags = {flag: bool(override[flag]) if override.get(flag) is not None else getattr(policy, flag)
             for flag in FLAGS}  # fmt: skip
    return ErrorPolicy(**flags)


def recorded_exceptions(result: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """``TrialResult.recorded_exceptions``: the trial's exception, then each step's in order."""
    found = [result["exception_info"]] if isinstance(result.get("exception_info"), Mapping) else []
    for step in result.get("step_results") or []:
        if isinstance(step, Mapping) and isinstance(step.get("exception_info"), Mapping):
            found.append(step["exception_info"])
    return found


def reward_valid(result: Mapping[str, Any]) -> bool:
    """Harbor 0.26's ``TrialResult.reward_valid``: rewards written, and no recorded exception that
    says they do not stand."""
    verifier = result.get("verifier_result")
    rewards = verifier.get("rewards") if isinstance(verifier, Mapping) else None
    if not rewards:
        return False
    return all(policy_of(exception).has_valid_reward for exception in recorded_exceptions(result))
