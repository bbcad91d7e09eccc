"""One level-based reconcile of a BuzzSweep, as a pipeline of policies, one module each: read and
validate its inputs, expire it (ttl), gate it on the preflight, record its lock, judge its size
against the comparison it is for, rerun and regrade what the user asked for, plan its trials, admit and create those that may start now,
keep warm pods for the next trials and pull their images ahead, then compute its next status and
write its summary.json when due. Any policy may end the tick
early with the patch it decided on (tick.Stop). Run by a timer, so a missed event or a restart
only delays it (docs/design.md#plan-and-execute)."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any

from kubernetes_asyncio.client.exceptions import ApiException

from buzz_operator.api.patch import merge_patch
from buzz_operator.api.sweep import ImagesStatus
from buzz_operator.kube.client import Kube
from buzz_operator.sweep.admission import AdmissionDecision
from buzz_operator.sweep.drive.admit import admit_trials
from buzz_operator.sweep.drive.inputs import SweepInputs, read_inputs
from buzz_operator.sweep.drive.lock import record_lock
from buzz_operator.sweep.drive.plan import Plan, plan
from buzz_operator.sweep.drive.power_check import check_power
from buzz_operator.sweep.drive.preflight_gate import pass_preflight
from buzz_operator.sweep.drive.prepull import prepull
from buzz_operator.sweep.drive.regrade import regrade
from buzz_operator.sweep.drive.rerun import rerun
from buzz_operator.sweep.drive.summary import write_summary
from buzz_operator.sweep.drive.tick import Stop, Tick
from buzz_operator.sweep.drive.ttl import expire
from buzz_operator.sweep.drive.warm import keep_warm
from buzz_operator.sweep.known import SweepTrials
from buzz_operator.sweep.settings import OperatorSettings
from buzz_operator.sweep.status import next_sweep_status
from buzz_operator.sweep.trial_view import TrialView

log = logging.getLogger(__name__)


async def ahead(tick: Tick, read: SweepInputs, planned: Plan, decision: AdmissionDecision) -> ImagesStatus | None:
    """Warm pods, then images pulled ahead (docs/warm-pods.md, docs/registry.md#images-pulled-ahead).
    Neither is needed for a trial to run: a call the API refuses leaves the status as it was and
    the trials start cold, as they would without them."""
    try:
        warm = await keep_warm(tick, read, planned, decision)
        return await prepull(tick, read, planned, warm=warm)
    except ApiException as error:
        log.warning("sweep %s/%s: warm pods or pulls ahead skipped this tick (HTTP %s)",
                    tick.namespace, tick.name, error.status)
        return tick.previous.images


async def reconcile(
    kube: Kube, body: Mapping[str, Any], watched: Sequence[TrialView], mine: SweepTrials,
    settings: OperatorSettings,
) -> dict[str, Any]:
    """The merge patch for the sweep's status ({} when nothing changed); `watched` and `mine` as
    in tick.Tick."""
    tick = Tick.start(kube, body, watched, mine, settings)
    try:
        read = await read_inputs(tick)
        await expire(tick, read.spec)
        digest = await record_lock(tick, read, await pass_preflight(tick, read))
        power = await check_power(tick, read)
        await rerun(tick, read)
        await regrade(tick, read)
        planned = plan(tick, read)
        decision = await admit_trials(tick, read, planned)
        images = await ahead(tick, read, planned, decision)
    except Stop as stop:
        return stop.patch
    spec, manifest = read.spec, read.manifest
    figures = planned.counted.figures(spec.attempts, planned=len(read.tasks) * spec.attempts)
    new = next_sweep_status(
        tick.previous, rollup=figures, decision=decision, condition_name=manifest.condition,
        condition_hash=manifest.sha256, suspended=spec.suspend, max_cost=spec.budget.max_cost_usd if spec.budget else None,
        invalid=None, now=tick.now, generation=tick.generation,
    ).model_copy(update={"lock_digest": digest, "images": images, "power": power})
    new = await write_summary(tick, read, planned, figures, new)
    return merge_patch(tick.previous.to_api(), new.to_api())
