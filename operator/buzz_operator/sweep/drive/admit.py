"""Admission and creation: of the planned trials, those the caps let start now (sweep/admission.py:
parallelism, the endpoints' and the operator's caps, the budget, suspension) are created, owned
by the sweep, and counted as pending at once."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from typing import Any

from buzz_operator.api.common import TRIALS
from buzz_operator.api.trial import BuzzTrialSpec
from buzz_operator.kube import resources
from buzz_operator.kube.client import Kube
from buzz_operator.sweep.admission import AdmissionDecision, admit
from buzz_operator.sweep.drive.inputs import SweepInputs
from buzz_operator.sweep.drive.plan import Plan
from buzz_operator.sweep.drive.tick import Tick
from buzz_operator.sweep.planner import PlannedTrial
from buzz_operator.sweep.trial_view import just_created
from buzz_operator.sweep.trialspec import build_trial_spec, roster_endpoints, trial_object

log = logging.getLogger(__name__)
# trial creates a reconcile keeps in flight: the apiserver and etcd batch concurrent writes, so
# more in flight admit faster while the machine has CPU left. bench/kwok.py at 10,000 trials on
# this project's 2-core machine (one run each, docs/performance.md#scale-with-pods-kwok):
# 8 in flight, 17.2 trials/s with 15 % of the machine idle; 32, 21.1 trials/s with 5 % idle
CREATES_AT_ONCE = 32


def decide(tick: Tick, read: SweepInputs, planned: Plan) -> AdmissionDecision:
    spec, settings = read.spec, tick.settings
    return admit(
        planned.missing.first, tick.watched, waiting=planned.missing.count, parallelism=spec.parallelism,
        endpoint_caps=dict(settings.endpoint_caps or {}),
        operator_cap=settings.operator_cap, cost_so_far=planned.counted.cost_ceiling,
        max_cost=spec.budget.max_cost_usd if spec.budget else None, suspended=spec.suspend,
        endpoints=roster_endpoints(read.manifest), namespace=tick.namespace,
    )


def trial_spec_of(tick: Tick, read: SweepInputs, planned_trial: PlannedTrial) -> BuzzTrialSpec:
    """The spec the planned trial is (or will be) created with."""
    task = next(t for t in read.tasks if t.name == planned_trial.task)
    settings = tick.settings
    return build_trial_spec(
        planned_trial, task=task, manifest=read.manifest,
        condition_hash=read.manifest.sha256, sweep=read.spec, dataset=read.dataset,
        default_stack=settings.stack, default_operator_image=settings.operator_image,
        default_queue_name=settings.queue_name, default_limit_multiple=settings.limit_multiple,
    )


def trial_bodies(tick: Tick, read: SweepInputs, decision: AdmissionDecision) -> list[dict[str, Any]]:
    """The BuzzTrial objects of the admitted trials, owned by the sweep."""
    return [trial_object(planned_trial, trial_spec_of(tick, read, planned_trial), namespace=tick.namespace,
                         sweep_uid=tick.uid, generation=tick.generation)
            for planned_trial in decision.admit]


async def admit_trials(tick: Tick, read: SweepInputs, planned: Plan) -> AdmissionDecision:
    decision = decide(tick, read, planned)
    await create_all(tick.kube, tick.namespace, trial_bodies(tick, read, decision))
    # the trials just created are pending ones now, not "not created": counted so, a sweep that
    # admits its next trial as its last one finishes stays Running instead of flapping to
    # NoTrialsActive for one tick (an Event and a status write per trial at spec.parallelism 1)
    for trial in decision.admit:
        planned.counted.add(just_created(trial.name, trial.sweep, trial.task, trial.attempt, tick.namespace))
    return decision


async def _create(kube: Kube, namespace: str, body: dict[str, Any]) -> None:
    # False (it exists): an earlier reconcile created it, so it is adopted as it is
    await resources.create(kube, TRIALS, namespace, body)
    log.info("sweep %s/%s: created trial %s", namespace, body["spec"]["sweepName"], body["metadata"]["name"])


async def create_all(kube: Kube, namespace: str, bodies: Sequence[dict[str, Any]]) -> None:
    """The admitted trials, CREATES_AT_ONCE requests in flight: one at a time, a create's round
    trip (~30 ms idle, ~350 ms under a sweep's pod traffic) bounded admission (bench/scale.py,
    bench/kwok.py). Plan order is kept
    within a few; the first failure cancels the rest, and the next tick creates what is missing."""
    gate = asyncio.Semaphore(CREATES_AT_ONCE)

    async def one(body: dict[str, Any]) -> None:
        async with gate:
            await _create(kube, namespace, body)

    try:
        async with asyncio.TaskGroup() as group:
            for body in bodies:
                group.create_task(one(body))
    except ExceptionGroup as failed:  # the first failure as it came, as a sequential create raised it
        raise failed.exceptions[0] from None
