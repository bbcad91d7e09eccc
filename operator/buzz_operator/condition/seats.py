"""Seats: the individual agents a roster expands into (docs/condition.md#seats).

Seat ids are ``<class_id>-<n>`` (n from 1), orchestrator classes first, then the other
classes in roster order. The order matters beyond naming: it is the order agents are
launched, listed in teammates' tables and written to receipts and summaries.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from buzz_operator.condition.manifest import ExperimentManifest, Harness


@dataclass(frozen=True, slots=True)
class Seat:
    """One agent of a trial; ``role`` is the manifest role shown to teammates."""

    seat_id: str
    class_id: str
    kind: Literal["orchestrator", "worker"]
    role: str
    endpoint: str
    model_revision: str
    harness: Harness
    include_platform_prompt: bool
    index: int


def plan_seats(manifest: ExperimentManifest) -> list[Seat]:
    # Stable sort on "not an orchestrator", exactly as the seed's `_mint_credentials`.
    ordered = sorted(manifest.roster, key=lambda entry: entry.kind != "orchestrator")
    return [
        Seat(
            seat_id=f"{entry.id}-{index}",
            class_id=entry.id,
            kind=entry.kind,
            role=entry.role,
            endpoint=entry.endpoint,
            model_revision=entry.model_revision,
            harness=entry.harness,
            include_platform_prompt=entry.include_platform_prompt,
            index=index,
        )
        for entry in ordered
        for index in range(1, entry.count + 1)
    ]


def orchestrator_seat(seats: list[Seat]) -> Seat:
    return next(seat for seat in seats if seat.kind == "orchestrator")
