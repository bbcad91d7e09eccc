"""One reconcile of one sweep: what every policy of the pipeline reads (the sweep's identity,
its status as it was, the trials, the operator's settings, the clock), and `Stop`, which a
policy raises to end the tick with the patch it has decided on (docs/design.md#plan-and-execute)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from buzz_operator.api.sweep import BuzzSweepStatus
from buzz_operator.kube.client import Kube
from buzz_operator.sweep.invalid import invalid_patch
from buzz_operator.sweep.known import SweepTrials
from buzz_operator.sweep.settings import OperatorSettings
from buzz_operator.sweep.trial_view import TrialView


class Stop(Exception):
    """End this tick with `patch` ({} for no status write); the next tick starts over."""

    def __init__(self, patch: dict[str, Any]) -> None:
        super().__init__("the tick stops here")
        self.patch = patch


@dataclass(frozen=True)
class Tick:
    """`watched`: the trials kopf watches, of every sweep (the unsettled ones: all that can hold
    a slot); `mine`: this sweep's, settled ones too, read as a stream (sweep/known.py)."""

    kube: Kube
    body: Mapping[str, Any]
    watched: Sequence[TrialView]
    mine: SweepTrials
    settings: OperatorSettings
    previous: BuzzSweepStatus
    now: datetime

    @classmethod
    def start(cls, kube: Kube, body: Mapping[str, Any], watched: Sequence[TrialView], mine: SweepTrials,
              settings: OperatorSettings) -> Tick:
        previous = BuzzSweepStatus.model_validate(body.get("status") or {})
        return cls(kube, body, watched, mine, settings, previous, datetime.now(UTC))

    @property
    def name(self) -> str:
        return str(self.body["metadata"]["name"])

    @property
    def namespace(self) -> str:
        return str(self.body["metadata"]["namespace"])

    @property
    def uid(self) -> str:
        return str(self.body["metadata"]["uid"])

    @property
    def generation(self) -> int | None:
        return self.body["metadata"].get("generation")

    def invalid(self, message: str, *, reason: str = "InvalidSpec") -> Stop:
        """The Stop that marks the sweep invalid with `message` (raise it)."""
        return Stop(invalid_patch(self.previous, message, self.mine, self.now, self.generation, reason=reason))
