"""What kind of failure stopped a trial step: infra, outcome or broken.

The class decides what happens next (docs/failures.md#classes):
- infra: the platform failed, not the team (pod lost or evicted, image missing, relay,
  Postgres or storage unavailable, exec stream broken). Retried with backoff up to
  spec.retry.maxRetries as a fresh try; the failed try stays on record.
- outcome: the team's own result (agent timeout, no DONE, verifier failed or gave no
  reward). Final and scored — retrying would select on luck (Harbor's exclude_exceptions).
- broken: the trial ran but its score cannot be trusted (evidence export failed on a
  native task, verifier health markers, unreconciled accounting, prompt pin mismatch).
  Final and excluded from scores, as the seed summariser's VERIFIER-BROKEN flag.

Reasons are CamelCase words shared with conditions and events. Runtime steps raise a
`StepFailure` naming one; anything else is classified by exception type.
"""

from __future__ import annotations

import asyncio

from buzz_operator.api.trial import FailureClass, Outcome

INFRA_REASONS = frozenset(
    {
        "PodLost",
        "PodEvicted",
        "PodDeleted",
        "NodeLost",
        "Preempted",
        "Unschedulable",
        "ScheduleTimeout",
        # the pod waited past spec.queueWaitSeconds for Kueue's admission: the cluster had no
        # room, the team never started (docs/queueing.md#waiting-bound)
        "QueueWaitExceeded",
        "ImagePullFailed",
        "ErrImagePull",
        "ImagePullBackOff",
        "ContainerCrashed",
        # a compose service's container crashed or its healthcheck never passed: the task's
        # environment was not there for the team (docs/task-toml.md#compose)
        "ServiceFailed",
        # a container of the trial pod killed by the kernel at its memory limit: the sandbox's
        # size decided, so it is retried and never graded (docs/resources.md#oom)
        "OOMKilled",
        "StackInstallFailed",
        "ForwarderFailed",
        "AgentsNotReady",
        # task.toml's [environment.healthcheck] never passed: the box was not ready (Harbor's
        # HealthcheckError, a sandbox failure)
        "HealthcheckFailed",
        # task.toml's [agent] user is not in the task image (or it has no su): the team never ran
        "AgentUserMissing",
        "AgentsExitedEarly",
        "RelayUnavailable",
        "PostgresUnavailable",
        "StorageUnavailable",
        "ApiServerUnavailable",
        "ServiceUnavailable",
        "ExecStreamBroken",
        "StepTimeout",
        "InternalError",
    }
)
OUTCOME_REASONS = frozenset(
    {
        "AgentTimeout",
        "NoDone",
        "VerifierFailed",
        "VerifierTimeout",
        "RewardMissing",
        "RewardInvalid",
        "TrialBudgetExhausted",
    }
)
BROKEN_REASONS = frozenset(
    {
        "EvidenceExportFailed",
        "VerifierBroken",
        "AccountingUnreconciled",
        "PromptHashMismatch",
        # the verifier's own run was cut short by the box: OOM-killed processes, or a timeout
        # while throttled for most of its CPU periods (docs/resources.md#verifier) — never a zero
        "VerifierOutOfMemory",
        "VerifierStarved",
    }
)

_CLASSES: dict[str, FailureClass] = {
    **dict.fromkeys(INFRA_REASONS, FailureClass.INFRA),
    **dict.fromkeys(OUTCOME_REASONS, FailureClass.OUTCOME),
    **dict.fromkeys(BROKEN_REASONS, FailureClass.BROKEN),
}

# The trial pod, or its task container, is gone: nothing of the run is left to collect or grade
# in it, so after the run these start a fresh try instead of retrying the step in place
# (docs/failures.md#classes).
POD_GONE_REASONS = frozenset(
    {"PodLost", "PodEvicted", "PodDeleted", "NodeLost", "Preempted", "ContainerCrashed", "OOMKilled", "ServiceFailed"}
)

# Failures before the task message was posted mean the team never started ("launch" in
# the seed's outcome vocabulary); later ones are errors of the run.
LAUNCH_REASONS = frozenset(
    {
        "Unschedulable",
        "ScheduleTimeout",
        "QueueWaitExceeded",
        "ImagePullFailed",
        "ErrImagePull",
        "ImagePullBackOff",
        "StackInstallFailed",
        "ForwarderFailed",
        "AgentsNotReady",
        "HealthcheckFailed",
        "AgentUserMissing",
        "PromptHashMismatch",
    }
)


class StepFailure(Exception):
    """Raised by a runtime step to say precisely why it failed."""

    def __init__(self, reason: str, message: str = "", *, bundle_url: str | None = None) -> None:
        classify_reason(reason)  # refuse unknown reasons where they are raised, not later
        self.reason = reason
        self.message = message
        self.bundle_url = bundle_url
        super().__init__(f"{reason}: {message}" if message else reason)


def classify_reason(reason: str) -> FailureClass:
    try:
        return _CLASSES[reason]
    except KeyError:
        raise ValueError(f"unknown failure reason {reason!r}") from None


def exception_reason(error: BaseException) -> str:
    """The reason word for an exception that is not a StepFailure."""
    if isinstance(error, StepFailure):
        return error.reason
    if isinstance(error, TimeoutError | asyncio.TimeoutError):
        return "StepTimeout"
    if isinstance(error, ConnectionError | OSError):
        # Sockets, DNS, refused connections: the network or a service, never the team.
        return "ExecStreamBroken" if isinstance(error, BrokenPipeError) else "ServiceUnavailable"
    # An unexpected exception is most likely a bug or a transient platform problem; infra
    # retries it a bounded number of times, and the reason says it was not understood.
    return "InternalError"


def classify_failure(failure: BaseException | str) -> FailureClass:
    """infra, outcome or broken, for a reason word or an exception."""
    reason = failure if isinstance(failure, str) else exception_reason(failure)
    return classify_reason(reason)


def failure_outcome(reason: str, *, timed_out: bool) -> Outcome:
    """The seed's outcome word for a trial that ended on this failure (docs/failures.md#outcome-words)."""
    failure_class = classify_reason(reason)
    if failure_class is FailureClass.BROKEN:
        return Outcome.BROKEN
    if timed_out or "Timeout" in reason:
        # The seed classified any exception mentioning a timeout as "timeout" first.
        return Outcome.TIMEOUT
    if reason in LAUNCH_REASONS:
        return Outcome.LAUNCH
    return Outcome.ERROR
