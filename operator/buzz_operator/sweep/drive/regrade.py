"""spec.regrade: each scored trial of the sweep is asked, once per generation, to grade its
recorded evidence again (sweep/rerun.py selects them; trial/steps/regrade.py does it)."""

from __future__ import annotations

from buzz_operator.api.common import TRIALS
from buzz_operator.api.labels import REGRADE, SETTLED
from buzz_operator.kube import resources
from buzz_operator.sweep.drive.inputs import SweepInputs
from buzz_operator.sweep.drive.tick import Tick
from buzz_operator.sweep.rerun import select_regrades


async def regrade(tick: Tick, read: SweepInputs) -> None:
    if not read.spec.regrade or not tick.generation:
        return
    for trial in select_regrades(tick.mine.by_name(), tick.generation):
        # The trial's own regrade handler (selected by this annotation) does the work; a settled
        # trial is unlabelled in the same patch, so kopf watches it again until the regrade is
        # recorded (docs/design.md#settled-trials).
        await resources.relabel(tick.kube, TRIALS, tick.namespace, trial.name, labels={SETTLED: None},
                                annotations={REGRADE: str(tick.generation)})
