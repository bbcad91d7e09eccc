"""A sweep that cannot run as written: the status that says why (phase Invalid, the reason and
a message naming the spec field), with the figures of the trials it already has kept."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any

from pydantic import ValidationError

from buzz_operator.api.patch import merge_patch
from buzz_operator.api.sweep import BuzzSweepStatus
from buzz_operator.sweep.admission import AdmissionDecision
from buzz_operator.sweep.rollup import rollup
from buzz_operator.sweep.status import next_sweep_status
from buzz_operator.sweep.trial_view import TrialView


def validation_message(error: ValidationError) -> str:
    """The first error of a spec pydantic refused, as `spec.<field>: <why>`."""
    first = error.errors()[0]
    where = ".".join(str(part) for part in first.get("loc", ())) or "spec"
    return f"spec.{where}: {first.get('msg', 'invalid')}"


def invalid_patch(
    previous: BuzzSweepStatus, message: str, mine: Iterable[TrialView], now: datetime, generation: int | None,
    *, reason: str = "InvalidSpec",
) -> dict[str, Any]:
    """The merge patch that marks the sweep invalid with `message`; no trial is admitted."""
    new = next_sweep_status(
        previous, rollup=rollup(mine, 1), decision=AdmissionDecision(), condition_name=None,
        condition_hash=previous.condition_hash, suspended=False, max_cost=None, invalid=message, now=now,
        generation=generation, invalid_reason=reason,
    )
    return merge_patch(previous.to_api(), new.to_api())
