"""The project's failure reasons under Harbor's exception names (docs/harbor.md#exceptions).

Harbor files a trial's failure by ``exception_info.exception_type`` alone: its policy table
(``harbor.models.trial.error_policy``) says who failed (sandbox, model provider, the agent's
budget, the verifier, …), whether to retry and whether the reward stands; a name it does not know
is "unclassified". So a reason with a Harbor name of the same meaning is written under that name,
and the reason itself stays beside it as ``buzz_reason`` — a key Harbor's ``ExceptionInfo``
ignores — which the project's own readers prefer. A reason with no Harbor equivalent keeps its
own name (Harbor: unclassified). Pure.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

REASON_KEY = "buzz_reason"

# reason → Harbor exception type. Each target is in Harbor 0.25.0's policy table; why each fits:
HARBOR_EXCEPTION_TYPES: Mapping[str, str] = {
    # the agents' deadline passed (Harbor: agent exhausted its budget; the reward stands)
    "AgentTimeout": "AgentTimeoutError",
    # the verifier's own deadline, and a reward file missing or unreadable (Harbor: verifier failed)
    "VerifierTimeout": "VerifierTimeoutError",
    "RewardMissing": "RewardFileNotFoundError",
    "RewardInvalid": "VerifierOutputParseError",
    # the sandbox never came up or went away (Harbor: sandbox failed, retried, not graded)
    "ScheduleTimeout": "EnvironmentStartTimeoutError",
    # a queued pod Kueue did not admit in time: the sandbox never came up, as above
    "QueueWaitExceeded": "EnvironmentStartTimeoutError",
    "ImagePullFailed": "SandboxBuildFailedError",
    "ErrImagePull": "SandboxBuildFailedError",
    "ImagePullBackOff": "SandboxBuildFailedError",
    "AgentsNotReady": "AgentSetupTimeoutError",
    "PodLost": "GKEPodNotFoundError",
    "PodDeleted": "GKEPodNotFoundError",
    "PodEvicted": "GKEPodNotFoundError",
    "NodeLost": "GKEPodNotFoundError",
    "Preempted": "GKEPodNotFoundError",
    "ExecStreamBroken": "GKEExecStreamClosedError",
    # a container killed at its memory limit (Harbor: sandbox failed, retried, not graded)
    "OOMKilled": "MemoryLimitExceededError",
    # the relay (and its database) is the trial environment's service: its health check failed
    "RelayUnavailable": "HealthcheckError",
    # task.toml's own healthcheck: Harbor's very name
    "HealthcheckFailed": "HealthcheckError",
    # a compose service that crashed or never became healthy (Harbor's `up --wait` fails on its health)
    "ServiceFailed": "HealthcheckError",
    "PostgresUnavailable": "HealthcheckError",
    # the agent processes ended before DONE: (Harbor: non-zero agent exit, unclassified but named)
    "AgentsExitedEarly": "NonZeroAgentExitCodeError",
}


def harbor_exception_type(reason: str) -> str:
    """The name Harbor knows for ``reason``; the reason itself when Harbor has none."""
    return HARBOR_EXCEPTION_TYPES.get(reason, reason)


def recorded_reason(exception_info: Mapping[str, Any] | None) -> str | None:
    """The project's reason for a result.json ``exception_info``: ``buzz_reason`` when written
    (this build), else ``exception_type`` (earlier builds wrote the reason there)."""
    if not exception_info:
        return None
    reason = exception_info.get(REASON_KEY) or exception_info.get("exception_type")
    return str(reason) if reason else None


def as_recorded(exception_info: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """``exception_info`` with the project's reason back in ``exception_type``: what the seed's
    readers (outcome words, resume) classify, so their verdicts do not move with Harbor's names."""
    if not exception_info:
        return None
    document = {k: v for k, v in exception_info.items() if k != REASON_KEY}
    if reason := recorded_reason(exception_info):
        document["exception_type"] = reason
    return document
