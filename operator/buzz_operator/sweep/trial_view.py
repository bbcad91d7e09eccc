"""One line per BuzzTrial: what admission and the rollup need, and nothing else.

Summaries are built from BuzzTrial objects (typically a kopf index), so the sweep never lists
trials and its own status never holds per-trial detail. The operator holds one per trial it
knows, so a summary is a named tuple and its repeated words (namespace, sweep, task, endpoints, stack
digest) are interned: every trial of a sweep shares one copy of each instead of a copy per
parsed body (bench/scale.py attributes the operator's heap by type).
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from enum import StrEnum
from typing import Any, NamedTuple

from buzz_operator.api.labels import CREATED_AT_GENERATION, REGRADE
from buzz_operator.api.trial import BuzzTrialStatus, FailureClass, Phase

_RUNNING_PHASES = frozenset(
    {Phase.PROVISIONING, Phase.LAUNCHING, Phase.RUNNING, Phase.COLLECTING, Phase.GRADING, Phase.BUNDLING}
)


class TrialState(StrEnum):
    PENDING = "pending"
    RUNNING = "running"
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    BROKEN = "broken"


class TrialView(NamedTuple):
    """A named tuple, not a dataclass: settled trials' summaries are rebuilt from columns on every
    reconcile (sweep/columns.py), and a tuple is built three times faster."""

    name: str
    sweep: str
    task: str
    attempt: int
    state: TrialState
    reward: float | None = None
    scored: bool = False
    cost_floor: float = 0.0
    cost_ceiling: float = 0.0
    endpoints: tuple[str, ...] = ()
    namespace: str = ""
    outcome: str | None = None
    reason: str | None = None
    created_generation: int | None = None  # the sweep generation this trial was created under
    regrade_requested: int | None = None  # generation named by the trial's regrade annotation
    regraded_generation: int | None = None  # generation of its last finished regrade
    stack_digest: str | None = None  # the stack its current (or last) try installed

    @property
    def active(self) -> bool:
        """Holds a concurrency slot: created and not yet terminal (backing-off trials included)."""
        return self.state in {TrialState.PENDING, TrialState.RUNNING}


def just_created(name: str, sweep: str, task: str, attempt: int, namespace: str) -> TrialView:
    """A trial this reconcile created, before any watch has reported it: pending, nothing spent."""
    return TrialView(name=name, sweep=sweep, task=task, attempt=attempt, state=TrialState.PENDING,
                        namespace=namespace)


def trial_state(status: BuzzTrialStatus) -> TrialState:
    if status.phase is Phase.PENDING:
        return TrialState.PENDING
    if status.phase in _RUNNING_PHASES:
        return TrialState.RUNNING
    if status.phase is Phase.SUCCEEDED:
        return TrialState.SUCCEEDED
    if status.failure_class is FailureClass.BROKEN:
        return TrialState.BROKEN
    return TrialState.FAILED


def is_scored(status: BuzzTrialStatus) -> bool:
    """Counts toward mean reward and pass@k.

    Succeeded trials and trials that failed on their outcome (the team's result, reward 0 if
    the verifier gave none) are scored. Broken trials and trials whose infra retries ran out
    say nothing about the team and are left out, as the seed's resume treated them.
    """
    if status.phase is Phase.SUCCEEDED:
        return True
    return status.phase is Phase.FAILED and status.failure_class is FailureClass.OUTCOME


def view_trial(body: Mapping[str, Any]) -> TrialView:
    """Summary of a BuzzTrial object as the API server returns it."""
    metadata = body.get("metadata") or {}
    annotations = metadata.get("annotations") or {}
    created, regrade = annotations.get(CREATED_AT_GENERATION), annotations.get(REGRADE)
    spec = body.get("spec") or {}
    status = BuzzTrialStatus.model_validate(body.get("status") or {})
    scored = is_scored(status)
    return TrialView(
        name=sys.intern(str(metadata.get("name", ""))),  # shared with the metrics and the log filter
        namespace=sys.intern(str(metadata.get("namespace", ""))),
        sweep=sys.intern(str(spec.get("sweepName", ""))),
        task=sys.intern(str(spec.get("task", ""))),
        attempt=int(spec.get("attempt", 0)),
        state=trial_state(status),
        reward=(status.reward if status.reward is not None else 0.0) if scored else status.reward,
        scored=scored,
        cost_floor=status.cost_usd.floor,
        cost_ceiling=status.cost_usd.ceiling,
        endpoints=tuple(sys.intern(str(e)) for e in spec.get("endpoints") or ()),
        outcome=status.outcome.value if status.outcome else None,
        reason=status.reason,
        created_generation=int(created) if created and created.isdigit() else None,
        regrade_requested=int(regrade) if regrade and regrade.isdigit() else None,
        regraded_generation=status.regrade.generation if status.regrade else None,
        stack_digest=sys.intern(status.stack.digest) if status.stack else None,
    )
