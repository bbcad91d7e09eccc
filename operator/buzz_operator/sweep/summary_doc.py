"""The sweep's summary.json: the status figures plus one line per trial — what the status
cannot hold (its size must not grow with trials) but a reader of storage wants first. Pure."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from buzz_operator.sweep.rollup import SweepRollup
from buzz_operator.sweep.summary import TrialSummary

SUMMARY_VERSION = 1


def summary_document(
    *,
    sweep: str,
    namespace: str,
    condition: str,
    condition_hash: str,
    rollup: SweepRollup,
    trials: Sequence[TrialSummary],
    now: datetime,
) -> dict[str, Any]:
    return {
        "version": SUMMARY_VERSION,
        "sweep": sweep,
        "namespace": namespace,
        "condition": condition,
        "conditionHash": condition_hash,
        "updatedAt": now.isoformat().replace("+00:00", "Z"),
        "finished": rollup.finished,
        "counts": {
            "total": rollup.total, "pending": rollup.pending, "running": rollup.running,
            "succeeded": rollup.succeeded, "failed": rollup.failed, "broken": rollup.broken,
            "scored": rollup.scored,
        },
        "meanReward": rollup.mean_reward,
        "passAtK": dict(rollup.pass_at_k),
        "costUSD": {"floor": rollup.cost_floor, "ceiling": rollup.cost_ceiling},
        "trials": [
            {
                "name": t.name, "task": t.task, "attempt": t.attempt, "state": t.state.value,
                "outcome": t.outcome, "reason": t.reason, "reward": t.reward, "scored": t.scored,
                "costUSD": {"floor": t.cost_floor, "ceiling": t.cost_ceiling},
            }
            for t in sorted(trials, key=lambda t: t.name)
        ],
    }


def results_digest(trials: Sequence[TrialSummary]) -> str | None:
    """What summary.json says about finished trials, as a short digest; None while none has
    finished. summary.json is rewritten when it changes — a trial finished, was re-run or
    regraded — and only then: rewriting an unchanged file every tick would cost hours of I/O,
    and a failed write is retried because the recorded digest only moves with a write that landed."""
    finished = sorted(
        (t.name, t.state.value, t.outcome, t.reward, t.cost_floor, t.cost_ceiling) for t in trials if not t.active
    )
    if not finished:
        return None
    return hashlib.sha256(json.dumps(finished, separators=(",", ":")).encode()).hexdigest()[:16]
