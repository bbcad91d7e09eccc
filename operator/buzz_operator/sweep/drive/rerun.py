"""spec.rerun: the trials whose failure reason the user named (sweep/rerun.py selects them, once
per generation) are set aside in storage and deleted; the planner creates them afresh."""

from __future__ import annotations

import logging

from buzz_operator.api.common import TRIALS
from buzz_operator.kube import resources
from buzz_operator.storage import StorageError
from buzz_operator.storage.bundle import set_aside
from buzz_operator.sweep.drive.inputs import SweepInputs
from buzz_operator.sweep.drive.tick import Tick
from buzz_operator.sweep.rerun import select_reruns

log = logging.getLogger(__name__)


async def rerun(tick: Tick, read: SweepInputs) -> None:
    if read.spec.rerun is None or not tick.generation:
        return
    for trial in select_reruns(tick.mine.by_name(), read.spec.rerun.reasons, tick.generation):
        await _rerun_one(tick, read, trial.name, tick.generation)


async def _rerun_one(tick: Tick, read: SweepInputs, trial: str, generation: int) -> None:
    """Set the finished run aside in storage, then delete the trial; the planner creates it
    afresh (annotated with this generation) on a later tick. Storage that fails leaves the
    trial as it is, for the next tick."""
    try:
        moved = await set_aside(read.store, tick.name, trial, generation)
    except StorageError as error:
        log.warning("sweep %s/%s: rerun of %s waits for storage: %s", tick.namespace, tick.name, trial, error)
        return
    await resources.delete(tick.kube, TRIALS, tick.namespace, trial)
    log.info("sweep %s/%s: re-running %s (%d files set aside under reruns/%d/)", tick.namespace, tick.name, trial,
             moved, generation)
