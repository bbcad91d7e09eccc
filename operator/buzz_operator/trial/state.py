"""The trial corridor as pure transitions over BuzzTrialStatus.

Pending → Provisioning → Launching → Running → Collecting → Grading → Bundling → Succeeded | Failed

A runtime step does its work and reports what it made (a fact below) or raises a
StepFailure; these functions turn "status so far + that report" into the next status, and
`status_patch` into the merge patch to write. Because the status is written after every step
and a fact only applies in the phase that produced it, re-running a step after an operator
restart either repeats idempotent work or is refused here — it can never apply twice.

Failures follow their class (scoring/failures.py):
- infra before the task's results exist (Pending…Running): a fresh try after backoff, up
  to retry.maxRetries; the failed try is appended to status.failedTries.
- infra after the run (Collecting, Grading, Bundling): the same step again after backoff
  (stepRetries) — rerunning the agents would waste their spend and select on luck. When
  those retries run out the corridor still goes on to Bundling, so whatever was gathered is
  kept; a failed Bundling ends the trial.
- outcome: recorded, and the corridor goes on (a timed-out team is still collected, graded
  and bundled); the trial ends Failed but scored.
- broken: recorded, grading is skipped, the corridor goes on to Bundling; ends Failed and
  excluded from scores.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from buzz_operator.api.common import Condition, ConditionStatus, CostRange
from buzz_operator.api.conditions import set_condition
from buzz_operator.api.patch import merge_patch
from buzz_operator.api.stack import StackDigests
from buzz_operator.api.sweep import RetryPolicy
from buzz_operator.api.trial import (
    BuzzTrialStatus,
    FailedTry,
    FailureClass,
    Outcome,
    Phase,
    PhaseTimes,
    PodStart,
    ResourceUsage,
    Tokens,
    TrialResourceUsage,
)
from buzz_operator.scoring.failures import POD_GONE_REASONS, StepFailure, classify_reason, failure_outcome
from buzz_operator.trial import pressure, secret_findings
from buzz_operator.trial.backoff import retry_delay
from buzz_operator.trial.secret_findings import SecretFindings

CORRIDOR = (
    Phase.PENDING,
    Phase.PROVISIONING,
    Phase.LAUNCHING,
    Phase.RUNNING,
    Phase.COLLECTING,
    Phase.GRADING,
    Phase.BUNDLING,
)
TERMINAL = frozenset({Phase.SUCCEEDED, Phase.FAILED})
# Phases whose infra failures invalidate the team's run (a fresh try is needed).
BEFORE_RESULTS = frozenset({Phase.PENDING, Phase.PROVISIONING, Phase.LAUNCHING, Phase.RUNNING})
# After the run, the steps that still read the pod: losing it there leaves nothing to grade, so a
# fresh try is the only way on (a graded trial only writes its bundle, and keeps its result).
NEEDS_THE_POD = frozenset({Phase.COLLECTING, Phase.GRADING})

# The condition each step sets when its work is done.
STEP_CONDITIONS: dict[Phase, tuple[str, str]] = {
    Phase.PROVISIONING: ("Provisioned", "TenantProvisioned"),
    Phase.LAUNCHING: ("Launched", "AgentsSubscribed"),
    Phase.RUNNING: ("AgentsFinished", "AgentsStopped"),
    Phase.COLLECTING: ("Collected", "EvidenceCollected"),
    Phase.GRADING: ("Verified", "VerifierFinished"),
    Phase.BUNDLING: ("Bundled", "BundleWritten"),
}
RETRYING = "Retrying"
FAILED = "Failed"
RELEASED = "Released"


@dataclass(frozen=True)
class Provisioned:
    """Relay tenant ready: identities, channel, per-try Secret."""

    trial_id: str
    tenant_secret: str
    channel_id: str


@dataclass(frozen=True)
class Launched:
    """Pod running, stack installed (with the digests it left), forwarder up, every agent subscribed."""

    pod: str
    stack: StackDigests | None = None
    pod_start: PodStart | None = None


@dataclass(frozen=True)
class Ran:
    """Task posted and the run ended: DONE seen, the agents stopped without DONE, or timed out."""

    task_event_id: str
    completion_message_id: str | None
    timed_out: bool = False
    note: str | None = None  # why a timeout happened, when the run step knows (unacknowledged scripted events)


@dataclass(frozen=True)
class Spend:
    """Reconciled usage of one try (relay receipts)."""

    tokens_input: int = 0
    tokens_output: int = 0
    cost_floor: float = 0.0
    cost_ceiling: float = 0.0


@dataclass(frozen=True)
class Collected:
    """Agents stopped, logs and evidence gathered, usage reconciled; what the task container used
    until then (None where its cgroup could not be read)."""

    spend: Spend
    resources: ResourceUsage | None = None


@dataclass(frozen=True)
class Graded:
    """Verifier finished with a reward; what its run used (None where the cgroup could not be read)."""

    reward: float
    rewards: dict[str, float] = field(default_factory=dict)
    resources: ResourceUsage | None = None


@dataclass(frozen=True)
class Bundled:
    bundle_url: str
    # the bundle's secret scan (trial/secret_findings.py); None from callers that did not scan
    secrets: SecretFindings | None = None


Fact = Provisioned | Launched | Ran | Collected | Graded | Bundled

_FACT_PHASE: dict[type, Phase] = {
    Provisioned: Phase.PROVISIONING,
    Launched: Phase.LAUNCHING,
    Ran: Phase.RUNNING,
    Collected: Phase.COLLECTING,
    Graded: Phase.GRADING,
    Bundled: Phase.BUNDLING,
}


def next_phase(phase: Phase) -> Phase:
    """The phase after ``phase`` on the straight corridor (Bundling → Succeeded)."""
    if phase in TERMINAL:
        raise ValueError(f"{phase} is terminal")
    index = CORRIDOR.index(phase)
    return CORRIDOR[index + 1] if index + 1 < len(CORRIDOR) else Phase.SUCCEEDED


def is_terminal(status: BuzzTrialStatus) -> bool:
    return status.phase in TERMINAL


def seconds_until_ready(status: BuzzTrialStatus, now: datetime) -> float:
    """How long a backoff still holds the trial; 0 when the next step may run now."""
    if status.retry_after is None:
        return 0.0
    return max(0.0, (status.retry_after - now).total_seconds())


def _observed(status: BuzzTrialStatus, generation: int | None) -> dict[str, Any]:
    # Callers that do not know the generation leave the recorded one alone.
    return {"observed_generation": status.observed_generation if generation is None else generation}


def _stamp(times: PhaseTimes, phase: Phase, now: datetime) -> PhaseTimes:
    key = "finished" if phase in TERMINAL else phase.value.lower()
    return times.model_copy(update={key: now})


def _enter(status: BuzzTrialStatus, phase: Phase, now: datetime, **changes: Any) -> BuzzTrialStatus:
    return status.model_copy(
        update={
            **changes,
            "phase": phase,
            "phase_times": _stamp(changes.get("phase_times", status.phase_times), phase, now),
            "step_retries": 0,
            "retry_after": None,
        }
    )


def begin(status: BuzzTrialStatus, now: datetime, *, generation: int | None = None) -> BuzzTrialStatus:
    """Pending → Provisioning once any retry backoff has passed (unchanged before that)."""
    if status.phase is not Phase.PENDING:
        raise ValueError(f"begin applies to a Pending trial, not {status.phase}")
    if seconds_until_ready(status, now) > 0:
        return status
    conditions = status.conditions
    if status.retries:
        conditions = set_condition(
            conditions,
            RETRYING,
            False,
            "TryStarted",
            f"try {status.retries + 1} started",
            now=now,
            generation=generation,
        )
    return _enter(status, Phase.PROVISIONING, now, conditions=conditions, **_observed(status, generation))


def _after_done(status: BuzzTrialStatus) -> Phase:
    nxt = next_phase(status.phase)
    if nxt is Phase.GRADING and status.failure_class is FailureClass.BROKEN:
        return Phase.BUNDLING
    if nxt is Phase.SUCCEEDED and status.failure_class is not None:
        return Phase.FAILED
    return nxt


def advance(
    status: BuzzTrialStatus, fact: Fact, now: datetime, *, generation: int | None = None
) -> BuzzTrialStatus:
    """Record what the current step made and move to the next phase."""
    expected = _step_of(status, fact, now)
    changes: dict[str, Any] = _observed(status, generation) | _fact_changes(status, fact)
    condition_type, reason = STEP_CONDITIONS[expected]
    conditions = set_condition(
        status.conditions, condition_type, True, reason, "", now=now, generation=generation
    )
    if isinstance(fact, Bundled) and fact.secrets is not None:
        changes |= {"secret_findings": fact.secrets if secret_findings.is_notable(fact.secrets) else None}
        conditions = _with_secrets_condition(conditions, fact.secrets, fact.bundle_url, now, generation)
    if isinstance(fact, Collected) and (pressed := pressure.condition(fact.resources)) is not None:
        conditions = set_condition(conditions, pressure.RESOURCE_PRESSURE, True, *pressed, now=now, generation=generation)
    moved = status.model_copy(update={**changes, "conditions": conditions})
    target = _after_done(moved)
    if target is Phase.FAILED:
        # a failure recorded earlier on the corridor ends the trial here, as a failed step would
        return _end(moved, now, generation)
    return _enter(moved, target, now)


def _step_of(status: BuzzTrialStatus, fact: Fact, now: datetime) -> Phase:
    """The phase that made ``fact``; refuses a fact from another phase or one that arrives during a backoff."""
    expected = _FACT_PHASE[type(fact)]
    if status.phase is not expected:
        raise ValueError(
            f"{type(fact).__name__} is the result of {expected}, but the trial is {status.phase}"
        )
    if seconds_until_ready(status, now) > 0:
        raise ValueError(f"the trial is backing off until {status.retry_after}")
    return expected


def _fact_changes(status: BuzzTrialStatus, fact: Fact) -> dict[str, Any]:
    changes: dict[str, Any] = {}
    match fact:
        case Provisioned():
            changes |= {
                "trial_id": fact.trial_id,
                "tenant_secret": fact.tenant_secret,
                "channel_id": fact.channel_id,
            }
        case Launched():
            changes |= {"pod": fact.pod, "stack": fact.stack, "pod_start": fact.pod_start}
        case Ran():
            changes |= _run_changes(fact)
        case Collected():
            changes |= _with_spend(status, fact.spend) | {"resource_usage": _used(None, agents=fact.resources)}
        case Graded():
            changes |= {"reward": fact.reward, "rewards": dict(fact.rewards),
                        "resource_usage": _used(status.resource_usage, verifier=fact.resources)}
        case Bundled():
            changes |= {"bundle_url": fact.bundle_url}
    return changes


def _used(recorded: TrialResourceUsage | None, **phase: ResourceUsage | None) -> TrialResourceUsage | None:
    """The try's resource use with one phase's added; None while no phase could be read."""
    used = (recorded or TrialResourceUsage()).model_copy(update=phase)
    return used if used.agents is not None or used.verifier is not None else None


def _run_changes(fact: Ran) -> dict[str, Any]:
    changes: dict[str, Any] = {
        "task_event_id": fact.task_event_id,
        "completion_message_id": fact.completion_message_id,
    }
    if fact.timed_out:
        changes |= {"outcome": Outcome.TIMEOUT, "reason": "AgentTimeout"}
        if fact.note:
            changes |= {"message": fact.note}
    else:
        changes |= {
            "outcome": Outcome.OK,
            "reason": "Done" if fact.completion_message_id else "NoDone",
        }
    return changes


def _with_secrets_condition(
    conditions: list[Condition], secrets: SecretFindings, bundle_url: str, now: datetime, generation: int | None
) -> list[Condition]:
    found, why, message = secret_findings.condition(secrets, bundle_url)
    return set_condition(
        conditions, secret_findings.SECRETS_FOUND, ConditionStatus.UNKNOWN if found is None else found,
        why, message, now=now, generation=generation,
    )


# Entering these phases need not be written at once: what leads there is redone exactly by a
# restarted operator that finds the phase before — beginning a try (it only stamps the time),
# provisioning (it returns the stored tenant and keeps an existing Secret), collecting — and the
# next write carries their facts. So a trial's first write is its Running. Running, Collecting
# and Bundling stay written: the agents' clock counts from Running, the run's end is what
# collecting reads, and a verifier must not run twice.
UNWRITTEN_ENTRIES = frozenset({Phase.PROVISIONING, Phase.LAUNCHING, Phase.GRADING})


def write_can_wait(written: BuzzTrialStatus, new: BuzzTrialStatus) -> bool:
    """Whether `new` (plain steps forward from the status last written, each into a phase of
    UNWRITTEN_ENTRIES) may go unwritten until a later step's status — or `new` is the finish
    the bundle led to, not yet released, which rides on the Released write: a restarted operator
    that finds Bundling reads the committed bundle back instead of the torn-down pod
    (steps/bundle.py). Saves four status writes per trial (bench/trial.py)."""
    if new.phase in TERMINAL:
        return (written.phase is Phase.BUNDLING and not any(c.type == RELEASED for c in new.conditions)
                and new.failure_class == written.failure_class and new.retries == written.retries)
    if (written.phase is new.phase or written.phase in TERMINAL
            or new.failure_class is not None or new.retries != written.retries or new.step_retries != 0):
        return False
    phase = written.phase
    while phase is not new.phase:
        phase = next_phase(phase)
        if phase not in UNWRITTEN_ENTRIES:
            return False
    return True


def _with_spend(status: BuzzTrialStatus, spend: Spend) -> dict[str, Any]:
    # Totals over every try: infra-failed tries spent real money too.
    return {
        "tokens": Tokens(
            input=status.tokens.input + spend.tokens_input,
            output=status.tokens.output + spend.tokens_output,
        ),
        "cost_usd": CostRange(
            floor=status.cost_usd.floor + spend.cost_floor,
            ceiling=status.cost_usd.ceiling + spend.cost_ceiling,
        ),
    }


def fail(
    status: BuzzTrialStatus,
    failure: StepFailure,
    now: datetime,
    *,
    retry: RetryPolicy,
    spend: Spend | None = None,
    generation: int | None = None,
) -> BuzzTrialStatus:
    """Apply a failed step: retry, carry on down the corridor, or end the trial."""
    if status.phase in TERMINAL:
        raise ValueError(f"the trial already ended ({status.phase})")
    failure_class = classify_reason(failure.reason)
    base = status.model_copy(update=_observed(status, generation))
    if spend is not None:
        base = base.model_copy(update=_with_spend(base, spend))
    if failure_class is FailureClass.INFRA:
        if status.phase in BEFORE_RESULTS or (status.phase in NEEDS_THE_POD and failure.reason in POD_GONE_REASONS):
            return _new_try(base, failure, now, retry, generation)
        return _step_retry(base, failure, now, retry, generation)
    return _record_and_carry_on(base, failure, failure_class, now, generation)


def _record_and_carry_on(
    status: BuzzTrialStatus,
    failure: StepFailure,
    failure_class: FailureClass,
    now: datetime,
    generation: int | None,
) -> BuzzTrialStatus:
    first = status.failure_class is None
    recorded = status.model_copy(
        update={
            # The first failure explains the trial; later ones are consequences of it.
            "failure_class": failure_class if first else status.failure_class,
            "reason": failure.reason if first else status.reason,
            "message": failure.message if first else status.message,
            "outcome": failure_outcome(failure.reason, timed_out=status.outcome is Outcome.TIMEOUT)
            if first
            else status.outcome,
            "bundle_url": failure.bundle_url or status.bundle_url,
        }
    )
    if status.phase is Phase.BUNDLING:
        return _end(recorded, now, generation)
    if failure_class is FailureClass.OUTCOME and status.phase in {Phase.RUNNING, Phase.COLLECTING}:
        # The team's result stands: still collect it and let the verifier score it.
        return _enter(recorded, next_phase(status.phase), now)
    # Nothing (more) to grade: write what exists and end.
    return _enter(recorded, Phase.BUNDLING, now)


def _end(status: BuzzTrialStatus, now: datetime, generation: int | None) -> BuzzTrialStatus:
    conditions = set_condition(
        status.conditions,
        FAILED,
        True,
        status.reason or "Failed",
        status.message or "",
        now=now,
        generation=generation,
    )
    return _enter(status.model_copy(update={"conditions": conditions}), Phase.FAILED, now)


def _step_retry(
    status: BuzzTrialStatus, failure: StepFailure, now: datetime, retry: RetryPolicy, generation: int | None
) -> BuzzTrialStatus:
    if status.step_retries < retry.max_retries:
        count = status.step_retries + 1
        delay = retry_delay(count, retry.backoff_seconds, retry.max_backoff_seconds)
        return status.model_copy(
            update={
                "step_retries": count,
                "retry_after": now + timedelta(seconds=delay),
                "conditions": set_condition(
                    status.conditions,
                    RETRYING,
                    True,
                    failure.reason,
                    f"{status.phase} retry {count} of {retry.max_retries}: {failure.message}".rstrip(": "),
                    now=now,
                    generation=generation,
                ),
            }
        )
    # Out of step retries: keep what was gathered by still writing the bundle.
    return _record_and_carry_on(status, failure, FailureClass.INFRA, now, generation)


def _new_try(
    status: BuzzTrialStatus, failure: StepFailure, now: datetime, retry: RetryPolicy, generation: int | None
) -> BuzzTrialStatus:
    record = FailedTry(
        retry=status.retries,
        phase=status.phase,
        reason=failure.reason,
        failure_class=FailureClass.INFRA,
        message=failure.message,
        pod=status.pod,
        bundle_url=failure.bundle_url,
        finished_at=now,
    )
    failed_tries = [*status.failed_tries, record]
    if status.retries >= retry.max_retries:
        ended = status.model_copy(
            update={
                "failed_tries": failed_tries,
                "failure_class": FailureClass.INFRA,
                "reason": failure.reason,
                "message": f"retries exhausted ({retry.max_retries}): {failure.message}".rstrip(": "),
                "outcome": failure_outcome(failure.reason, timed_out=False),
                "bundle_url": failure.bundle_url or status.bundle_url,
            }
        )
        return _end(ended, now, generation)
    count = status.retries + 1
    delay = retry_delay(count, retry.backoff_seconds, retry.max_backoff_seconds)
    # Step conditions described the failed try; the new try earns its own.
    conditions = [c for c in status.conditions if c.type not in {t for t, _ in STEP_CONDITIONS.values()}]
    conditions = set_condition(
        conditions,
        RETRYING,
        True,
        failure.reason,
        f"try {count + 1} of {retry.max_retries + 1} after {failure.reason}",
        now=now,
        generation=generation,
    )
    fresh = status.model_copy(
        update={
            "failed_tries": failed_tries,
            "retries": count,
            "conditions": conditions,
            "trial_id": None,
            "tenant_secret": None,
            "channel_id": None,
            "pod": None, "pod_start": None,
            "stack": None,
            "resource_usage": None,
            "task_event_id": None,
            "completion_message_id": None,
            "outcome": None,
            "reason": failure.reason,
            "message": failure.message,
            "phase_times": PhaseTimes(),
        }
    )
    entered = _enter(fresh, Phase.PENDING, now)
    return entered.model_copy(update={"retry_after": now + timedelta(seconds=delay)})


def released(status: BuzzTrialStatus, now: datetime, *, generation: int | None = None) -> BuzzTrialStatus:
    """Teardown finished: pod deleted, relay tenant archived, per-try Secret removed."""
    if status.phase not in TERMINAL:
        raise ValueError(f"teardown follows a terminal phase, not {status.phase}")
    conditions = set_condition(
        status.conditions, RELEASED, ConditionStatus.TRUE, "TornDown", "", now=now, generation=generation
    )
    return status.model_copy(update={"conditions": conditions})


def status_patch(old: BuzzTrialStatus, new: BuzzTrialStatus) -> dict[str, Any]:
    """JSON merge patch (RFC 7396) from ``old`` to ``new``: changed fields only, null for cleared ones.
    A status read under the old name of its failed tries (`attempts`) gets them written anew."""
    before = old.to_api()
    if old._legacy_tries:
        before.pop("failedTries", None)
    return merge_patch(before, new.to_api())
