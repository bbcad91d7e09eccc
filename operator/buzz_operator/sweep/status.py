"""The sweep's next status from its rollup, the admission decision and the spec's flags."""

from __future__ import annotations

from datetime import datetime

from buzz_operator.api.common import CostRange, Waiting
from buzz_operator.api.conditions import is_true
from buzz_operator.api.sweep import BuzzSweepStatus
from buzz_operator.sweep.admission import AdmissionDecision
from buzz_operator.sweep.rollup import SweepRollup
from buzz_operator.sweep.status_conditions import COMPLETE, FAILED, sweep_conditions

SHORT_HASH = 8


def condition_short(condition_name: str, condition_hash: str) -> str:
    """'<condition>@<hash[:8]>', the grouping key the seed summariser prints."""
    return f"{condition_name}@{condition_hash[:SHORT_HASH]}"


def next_sweep_status(
    previous: BuzzSweepStatus,
    *,
    rollup: SweepRollup,
    decision: AdmissionDecision,
    condition_name: str | None,
    condition_hash: str | None,
    suspended: bool,
    max_cost: float | None,
    invalid: str | None,
    now: datetime,
    generation: int | None = None,
    summary_url: str | None = None,
    invalid_reason: str = "InvalidSpec",
) -> BuzzSweepStatus:
    conditions = sweep_conditions(
        previous.conditions,
        rollup=rollup,
        decision=decision,
        suspended=suspended,
        max_cost=max_cost,
        invalid=invalid,
        now=now,
        generation=generation,
        invalid_reason=invalid_reason,
    )
    started = previous.started_at
    if started is None and (decision.admit or rollup.total > rollup.not_created):
        started = now
    ended = is_true(conditions, COMPLETE) or is_true(conditions, FAILED)
    finished = (previous.finished_at or now) if ended else None
    waiting = (
        Waiting(reason=decision.waiting_reason, message=decision.waiting_message)
        if decision.waiting_reason
        else None
    )
    return previous.model_copy(
        update={
            "observed_generation": previous.observed_generation if generation is None else generation,
            "condition_hash": condition_hash,
            "condition_short": condition_short(condition_name, condition_hash)
            if condition_name and condition_hash
            else None,
            "pending": rollup.pending,
            "running": rollup.running,
            "succeeded": rollup.succeeded,
            "failed": rollup.failed,
            "broken": rollup.broken,
            "total": rollup.total,
            "mean_reward": rollup.mean_reward,
            "pass_at_k": dict(rollup.pass_at_k),
            "cost_usd": CostRange(floor=rollup.cost_floor, ceiling=rollup.cost_ceiling),
            "conditions": conditions,
            "waiting": waiting,
            "summary_url": summary_url or previous.summary_url,
            "started_at": started,
            "finished_at": finished,
        }
    )
