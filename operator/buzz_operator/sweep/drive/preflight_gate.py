"""The preflight gate: before a sweep's first trial its checks run (docs/preflight.md), and a
failed check holds the sweep back, invalid with the check named. Its canary installs the stack
the trials will, and the lock records the digests it read; later the recorded result stands."""

from __future__ import annotations

from buzz_operator.api.sweep import PreflightStatus
from buzz_operator.preflight import checks
from buzz_operator.preflight.drive.runner import gate
from buzz_operator.sweep.drive.inputs import SweepInputs
from buzz_operator.sweep.drive.tick import Tick


async def pass_preflight(tick: Tick, read: SweepInputs) -> PreflightStatus | None:
    """status.preflight once the sweep may go on (None for a sweep whose trials predate it), or
    Stop with the failed check."""
    if not tick.mine.empty():
        return tick.previous.preflight
    preflight = await gate(
        tick.kube, tick.body, read.spec, read.manifest, read.tasks, tick.previous, tick.now, store=read.store,
        dataset=read.dataset, stack=tick.settings.stack, operator_image=tick.settings.operator_image)
    if blocked := checks.blocking(preflight):
        raise tick.invalid(checks.failure_message(blocked), reason=checks.failure_reason(blocked))
    return preflight
