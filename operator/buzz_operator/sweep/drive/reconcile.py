"""One level-based reconcile of a BuzzSweep: validate its spec and inputs, plan its trials,
create the ones admission lets start now (owned by the sweep), and compute its next status
from the trials that exist. Run by a timer, so a missed event or a restart only delays it.
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from pydantic import ValidationError

from buzz_operator.api.common import SWEEPS, TRIALS
from buzz_operator.api.labels import REGRADE, SETTLED
from buzz_operator.api.patch import merge_patch
from buzz_operator.api.stack import StackLayout, StackMount, StackSource
from buzz_operator.api.sweep import QUEUE_NAME, QUEUE_NAME_MAX, BuzzSweepSpec, BuzzSweepStatus
from buzz_operator.inputs.errors import InputError
from buzz_operator.inputs.fetch import datasets, resolve
from buzz_operator.kube import resources
from buzz_operator.kube.client import Kube
from buzz_operator.preflight import checks as preflight_checks
from buzz_operator.preflight.drive.runner import gate as preflight_gate
from buzz_operator.storage import ObjectStore, StorageError, StorageUnavailable
from buzz_operator.storage.bundle import set_aside
from buzz_operator.sweep.admission import AdmissionDecision, admit
from buzz_operator.sweep.drive import documents
from buzz_operator.sweep.known import SweepTrials
from buzz_operator.sweep.lifecycle import condition_drift, seconds_until_expiry
from buzz_operator.sweep.lock import sweep_config, sweep_lock
from buzz_operator.sweep.planner import Existing, plan_missing
from buzz_operator.sweep.rerun import select_regrades, select_reruns
from buzz_operator.sweep.rollup import Tally, rollup
from buzz_operator.sweep.status import next_sweep_status
from buzz_operator.sweep.summary import TrialSummary, just_created
from buzz_operator.sweep.summary_doc import results_digest, summary_due, summary_head
from buzz_operator.sweep.trialspec import build_trial_spec, roster_endpoints, trial_object

log = logging.getLogger(__name__)
CREATES_AT_ONCE = 8
# sweep uid -> when this process last wrote its summary.json (summary_doc.summary_due); a
# restarted operator writes at its first chance
_summary_written: dict[str, float] = {}
# The stand-in stack (images/stack, hack/images.sh) in the folder layout: the demo's default.
DEFAULT_STACK = StackSource(image="docker.io/buzz/stack:dev", layout=StackLayout.FOLDER)


@dataclass(frozen=True)
class OperatorSettings:
    """Operator-wide knobs (chart values / environment)."""

    stack: StackSource = field(default_factory=lambda: DEFAULT_STACK)
    operator_image: str = "docker.io/buzz/operator:dev"
    operator_cap: int | None = None
    endpoint_caps: Mapping[str, int] | None = None
    queue_name: str | None = None  # BUZZ_DEFAULT_QUEUE_NAME: the Kueue LocalQueue of sweeps that name none

    @classmethod
    def from_env(cls, environ: Mapping[str, str]) -> OperatorSettings:
        """BUZZ_STACK_IMAGE, BUZZ_STACK_LAYOUT (sprig | folder, default folder), BUZZ_STACK_MOUNT
        (copy | image, default copy), BUZZ_STACK_BINARY_PATH (sprig), BUZZ_OPERATOR_IMAGE, BUZZ_MAX_ACTIVE_TRIALS (operator-wide cap) and
        BUZZ_ENDPOINT_CAPS ("<endpoint>=<n>,...") and BUZZ_DEFAULT_QUEUE_NAME (the Kueue LocalQueue of
        sweeps without spec.queueName, docs/queueing.md); a malformed value stops the operator at
        start-up with the variable named, rather than running without the cap it was given."""
        def positive(name: str, text: str) -> int:
            if not text.strip().isdigit() or int(text) < 1:
                raise ValueError(f"{name}: {text!r} is not a positive integer")
            return int(text)

        caps: dict[str, int] = {}
        for item in filter(None, (part.strip() for part in environ.get("BUZZ_ENDPOINT_CAPS", "").split(","))):
            endpoint, sep, number = item.rpartition("=")
            if not sep or not endpoint:
                raise ValueError(f"BUZZ_ENDPOINT_CAPS: {item!r} is not <endpoint>=<n>")
            caps[endpoint.strip()] = positive("BUZZ_ENDPOINT_CAPS", number)
        cap = environ.get("BUZZ_MAX_ACTIVE_TRIALS", "").strip()
        queue = environ.get("BUZZ_DEFAULT_QUEUE_NAME", "").strip()
        if queue and (len(queue) > QUEUE_NAME_MAX or not re.match(QUEUE_NAME, queue)):
            raise ValueError(f"BUZZ_DEFAULT_QUEUE_NAME: {queue[:80]!r} is not a LocalQueue name that fits a label value")
        return cls(
            stack=default_stack(environ),
            operator_image=environ.get("BUZZ_OPERATOR_IMAGE") or cls.operator_image,
            operator_cap=positive("BUZZ_MAX_ACTIVE_TRIALS", cap) if cap else None,
            endpoint_caps=caps or None,
            queue_name=queue or None,
        )


def default_stack(environ: Mapping[str, str]) -> StackSource:
    """The operator's default stack (the chart's `stack` value) from its environment."""
    layout = environ.get("BUZZ_STACK_LAYOUT", "").strip() or StackLayout.FOLDER.value
    if layout not in {member.value for member in StackLayout}:
        raise ValueError(f"BUZZ_STACK_LAYOUT: {layout!r} is not one of sprig, folder")
    mount = environ.get("BUZZ_STACK_MOUNT", "").strip() or StackMount.COPY.value
    if mount not in {member.value for member in StackMount}:
        raise ValueError(f"BUZZ_STACK_MOUNT: {mount!r} is not one of copy, image")
    try:
        return StackSource(image=environ.get("BUZZ_STACK_IMAGE", "").strip() or DEFAULT_STACK.image,
                           layout=StackLayout(layout), mount=StackMount(mount),
                           binary_path=environ.get("BUZZ_STACK_BINARY_PATH", "").strip() or None)
    except ValidationError as error:
        raise ValueError(f"BUZZ_STACK_BINARY_PATH: {error.errors()[0].get('msg', 'invalid')}") from None


def validation_message(error: ValidationError) -> str:
    first = error.errors()[0]
    where = ".".join(str(part) for part in first.get("loc", ())) or "spec"
    return f"spec.{where}: {first.get('msg', 'invalid')}"


async def _create(kube: Kube, namespace: str, body: dict[str, Any]) -> None:
    # False (it exists): an earlier reconcile created it, so it is adopted as it is
    await resources.create(kube, TRIALS, namespace, body)
    log.info("sweep %s/%s: created trial %s", namespace, body["spec"]["sweepName"], body["metadata"]["name"])


async def _create_all(kube: Kube, namespace: str, bodies: Sequence[dict[str, Any]]) -> None:
    """The admitted trials, CREATES_AT_ONCE requests in flight: one at a time, a create's round
    trip (~30 ms) bounded admission at about 33 trials/s (bench/scale.py). Plan order is kept
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


async def reconcile(
    kube: Kube, body: Mapping[str, Any], watched: Sequence[TrialSummary], mine: SweepTrials,
    settings: OperatorSettings,
) -> dict[str, Any]:
    """The merge patch for the sweep's status ({} when nothing changed). `watched`: the trials
    kopf watches, of every sweep (the unsettled ones: all that can hold a slot); `mine`: this
    sweep's, settled ones too, read as a stream (sweep/known.py)."""
    meta = body["metadata"]
    name, namespace, uid = meta["name"], meta["namespace"], meta["uid"]
    generation = meta.get("generation")
    previous = BuzzSweepStatus.model_validate(body.get("status") or {})
    now = datetime.now(UTC)
    try:
        spec = BuzzSweepSpec.model_validate(body.get("spec") or {})
    except ValidationError as error:
        return _invalid(previous, validation_message(error), mine, now, generation)
    try:
        condition = await resolve.load_condition(kube, namespace, spec)
        await resolve.load_endpoints(kube, namespace, spec, condition.manifest)
        store = await resolve.open_sweep_store(kube, namespace, spec)
        dataset, tasks, origins = await datasets.load_source(kube, namespace, spec, store)
    except InputError as error:
        return _invalid(previous, str(error), mine, now, generation)
    manifest = condition.manifest
    if drift := condition_drift(previous.condition_hash, manifest.sha256):
        return _invalid(previous, f"spec.condition: {drift}", mine, now, generation)
    expiry = seconds_until_expiry(previous.finished_at, spec.ttl_seconds_after_finished, now)
    if expiry == 0:
        await _delete(kube, namespace, name)
        return {}
    # Preflight first: its canary installs the stack the trials will, and the lock records the
    # digests it read. It runs before the sweep's first trial only; later the recorded one stands.
    preflight = previous.preflight
    if mine.empty():
        preflight = await preflight_gate(
            kube, body, spec, manifest, tasks, previous, now, store=store, dataset=dataset,
            stack=settings.stack, operator_image=settings.operator_image)
        if blocked := preflight_checks.blocking(preflight):
            return _invalid(previous, preflight_checks.failure_message(blocked), mine, now, generation,
                            reason=preflight_checks.failure_reason(blocked))
    stack = spec.stack_source(settings.stack)
    lock = sweep_lock(
        manifest=manifest, dataset=dataset, tasks=tasks,
        task_images={t.name: t.image_ref(spec.task_image_registry, dataset) for t in tasks},
        stack=stack, stack_digests=preflight.stack if preflight is not None else None,
        operator_image=spec.operator_image or settings.operator_image, origins=origins,
    )
    digest = documents.lock_digest(lock)
    if previous.lock_digest != digest:
        try:
            drift = await documents.lock_storage(
                store, name, lock, sweep_config(name, namespace, body.get("spec") or {}, lock))
        except StorageUnavailable as error:  # unavailable storage is not the user's mistake: retry next tick
            log.warning("sweep %s/%s: storage %s: %s", namespace, name, store.url, error)
            return {}
        except StorageError as error:  # permanent (permissions, no bucket): say so instead of waiting silently
            return _invalid(previous, f"spec.storage.url: {store.url}: {error}"[:300], mine, now, generation)
        if drift:
            return _invalid(previous, f"spec.storage.url: {store.url}/{name}/lock.json belongs to a different "
                                      f"experiment: {drift}", mine, now, generation)
    if spec.rerun is not None and generation:
        for trial in select_reruns(mine, spec.rerun.reasons, generation):
            await _rerun(kube, store, namespace, name, trial.name, generation)
    if spec.regrade and generation:
        for trial in select_regrades(mine, generation):
            await _ask_regrade(kube, namespace, trial.name, generation)
    # one pass over the sweep's trials for the planner and the figures, nothing of them held
    task_names = [t.name for t in tasks]
    existing, counted = Existing(task_names, spec.attempts), Tally()
    for trial in mine:
        existing.add(trial.task, trial.attempt)
        counted.add(trial)
    created = counted.created
    missing = plan_missing(name, uid, manifest.sha256, task_names, spec.attempts, existing, limit=spec.parallelism)
    decision = admit(
        missing.first, watched, waiting=missing.count, parallelism=spec.parallelism,
        endpoint_caps=dict(settings.endpoint_caps or {}),
        operator_cap=settings.operator_cap, cost_so_far=counted.cost_ceiling,
        max_cost=spec.budget.max_cost_usd if spec.budget else None, suspended=spec.suspend,
        endpoints=roster_endpoints(manifest), namespace=namespace,
    )
    by_name = {t.name: t for t in tasks}
    bodies = [
        trial_object(planned_trial, build_trial_spec(
            planned_trial, task=by_name[planned_trial.task], manifest=manifest, condition_hash=manifest.sha256,
            sweep=spec, dataset=dataset, default_stack=settings.stack,
            default_operator_image=settings.operator_image, default_queue_name=settings.queue_name,
        ), namespace=namespace, sweep_uid=uid, generation=generation)
        for planned_trial in decision.admit
    ]
    await _create_all(kube, namespace, bodies)
    # the trials just created are pending ones now, not "not created": counted so, a sweep that
    # admits its next trial as its last one finishes stays Running instead of flapping to
    # NoTrialsActive for one tick (an Event and a status write per trial at spec.parallelism 1)
    for planned_trial in decision.admit:
        counted.add(just_created(planned_trial.name, planned_trial.sweep, planned_trial.task, planned_trial.attempt,
                                 namespace))
    figures = counted.figures(spec.attempts, planned=len(tasks) * spec.attempts)
    new = next_sweep_status(
        previous, rollup=figures, decision=decision, condition_name=manifest.condition,
        condition_hash=manifest.sha256, suspended=spec.suspend,
        max_cost=spec.budget.max_cost_usd if spec.budget else None, invalid=None, now=now, generation=generation,
    )
    new = new.model_copy(update={"lock_digest": digest})
    written = _summary_written.get(uid)
    since = None if written is None else time.monotonic() - written
    if (summary_due(created, figures.finished, since) and (results := results_digest(mine)) is not None
            and results != previous.summary_digest):
        head = summary_head(sweep=name, namespace=namespace, condition=manifest.condition,
                            condition_hash=manifest.sha256, rollup=figures, trials=mine,
                            attempts=spec.attempts, now=now)
        try:
            url = await documents.write_summary(store, name, head, mine.by_name())
            _summary_written[uid] = time.monotonic()
            new = new.model_copy(update={"summary_url": url, "summary_digest": results})
        except StorageError as error:  # summaryDigest unchanged: the next tick writes it
            log.warning("sweep %s/%s: summary.json not written: %s", namespace, name, error)
    return merge_patch(previous.to_api(), new.to_api())


async def _rerun(kube: Kube, store: ObjectStore, namespace: str, sweep: str, trial: str, generation: int) -> None:
    """spec.rerun: set the finished run aside in storage, then delete the trial; the planner
    creates it afresh (annotated with this generation) on a later tick."""
    try:
        moved = await set_aside(store, sweep, trial, generation)
    except StorageError as error:
        log.warning("sweep %s/%s: rerun of %s waits for storage: %s", namespace, sweep, trial, error)
        return
    await resources.delete(kube, TRIALS, namespace, trial)
    log.info("sweep %s/%s: re-running %s (%d files set aside under reruns/%d/)", namespace, sweep, trial,
             moved, generation)


async def _ask_regrade(kube: Kube, namespace: str, trial: str, generation: int) -> None:
    """The trial's own regrade handler (selected by this annotation) does the work; a settled
    trial is unlabelled in the same patch, so kopf watches it again until the regrade is
    recorded (docs/design.md#settled-trials)."""
    await resources.relabel(kube, TRIALS, namespace, trial, labels={SETTLED: None},
                            annotations={REGRADE: str(generation)})


async def _delete(kube: Kube, namespace: str, name: str) -> None:
    # Its trials follow by owner reference; the evidence stays in object storage.
    await resources.delete(kube, SWEEPS, namespace, name)
    log.info("sweep %s/%s: deleted (ttlSecondsAfterFinished passed)", namespace, name)


def _invalid(
    previous: BuzzSweepStatus, message: str, mine: Iterable[TrialSummary], now: datetime, generation: int | None,
    *, reason: str = "InvalidSpec",
) -> dict[str, Any]:
    new = next_sweep_status(
        previous, rollup=rollup(mine, 1), decision=AdmissionDecision(), condition_name=None,
        condition_hash=previous.condition_hash, suspended=False, max_cost=None, invalid=message, now=now,
        generation=generation, invalid_reason=reason,
    )
    return merge_patch(previous.to_api(), new.to_api())
