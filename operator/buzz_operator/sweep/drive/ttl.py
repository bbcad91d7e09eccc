"""spec.ttlSecondsAfterFinished: a finished sweep past its time is deleted; its trials follow
by owner reference and its evidence stays in object storage."""

from __future__ import annotations

import logging

from buzz_operator.api.common import SWEEPS
from buzz_operator.api.sweep import BuzzSweepSpec
from buzz_operator.kube import resources
from buzz_operator.sweep.drive.tick import Stop, Tick
from buzz_operator.sweep.lifecycle import seconds_until_expiry

log = logging.getLogger(__name__)


async def expire(tick: Tick, spec: BuzzSweepSpec) -> None:
    """Delete the sweep and Stop with no status write when its time after finishing has passed."""
    if seconds_until_expiry(tick.previous.finished_at, spec.ttl_seconds_after_finished, tick.now) != 0:
        return
    await resources.delete(tick.kube, SWEEPS, tick.namespace, tick.name)
    log.info("sweep %s/%s: deleted (ttlSecondsAfterFinished passed)", tick.namespace, tick.name)
    raise Stop({})
