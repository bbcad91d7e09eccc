"""kopf registrations, and nothing else: each handler is a few lines over the rooms.

BuzzSweep: a timer reconciles it level-based (validate → plan → admit → create trials → roll
up). BuzzTrial: a daemon per trial drives the corridor with trial.drive.driver.drive, writing status
before every next step, and settles the trial at the end: labelled settled, out of kopf's watch
(docs/design.md#settled-trials). An index of the trials kopf watches, and the settled trials'
summaries (sweep/drive/settled.py), feed admission and rollups without listing trials on
every tick.
"""

from __future__ import annotations

import dataclasses
import functools
import logging
import os
import tempfile
import traceback
from collections.abc import Awaitable, Callable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, NoReturn, TypeVar

import kopf

from buzz_operator.api import escapes, labels
from buzz_operator.api.common import GROUP, SWEEPS, TRIALS, VERSION
from buzz_operator.api.trial import BuzzTrialStatus, Phase
from buzz_operator.inputs.errors import InputError
from buzz_operator.janitor.drive import reaper
from buzz_operator.kube import client as kube_client
from buzz_operator.kube import objects, resources
from buzz_operator.kube.client import Kube
from buzz_operator.kube.inflight import InFlight
from buzz_operator.observability import events, logs, memory, metrics
from buzz_operator.scoring.failures import StepFailure
from buzz_operator.sweep.drive import reconcile as sweep_reconcile  # a module: tests replace its reconcile
from buzz_operator.sweep.drive.mapped import MappedStore
from buzz_operator.sweep.drive.settled import SettledTrials
from buzz_operator.sweep.known import SweepTrials
from buzz_operator.sweep.settings import OperatorSettings
from buzz_operator.sweep.status_conditions import ACCEPTED
from buzz_operator.sweep.trial_view import TrialView, view_trial
from buzz_operator.trial.drive import driver as trial_driver
from buzz_operator.trial.drive.setup import load_context
from buzz_operator.trial.state import status_patch
from buzz_operator.trial.steps import regrade as regrade_step

FINALIZER = labels.FINALIZER
SWEEP_INTERVAL_S = float(os.environ.get("BUZZ_SWEEP_INTERVAL_S", "5"))
REGRADE_INTERVAL_S = float(os.environ.get("BUZZ_REGRADE_INTERVAL_S", "5"))
JANITOR_INTERVAL_S = float(os.environ.get("BUZZ_JANITOR_INTERVAL_S", "60"))
# within the chart's 30 s terminationGracePeriodSeconds, with room for the rest of the shutdown
DRAIN_S = 15.0
log = logging.getLogger(__name__)
R = TypeVar("R")


def _held(handler: Callable[..., Awaitable[R]]) -> Callable[..., Awaitable[R]]:
    """The handler's run counted in flight: the cleanup closes the API client after it ends
    (kube/inflight.py)."""
    @functools.wraps(handler)
    async def run(*args: Any, memo: kopf.Memo, **kwargs: Any) -> R:
        async with memo.inflight.hold():
            return await handler(*args, memo=memo, **kwargs)
    return run


@kopf.on.login()
def login(**kwargs: Any) -> kopf.ConnectionInfo | None:
    # kopf's kubeconfig reader resolves KUBECONFIG now, not at import time
    in_pod = kopf.login_with_service_account(**kwargs)
    host, port = os.environ.get("KUBERNETES_SERVICE_HOST"), os.environ.get("KUBERNETES_SERVICE_PORT")
    if in_pod is not None and host and port:
        # kopf names the apiserver kubernetes.default.svc, which needs cluster DNS; the env the
        # kubelet sets works everywhere (client-go's in-cluster config does the same)
        return dataclasses.replace(in_pod, server=f"https://{_bracket(host)}:{port}")
    return in_pod or kopf.login_with_kubeconfig(**kwargs)


def _bracket(host: str) -> str:
    return f"[{host}]" if ":" in host else host


class NoDiffBase(kopf.DiffBaseStorage):
    """No last-handled configuration is kept. kopf diffs an object against it only for on.create,
    on.update, on.resume and on.field handlers, and this operator registers none (timers, one
    daemon, on.delete): the annotation was one PATCH per trial and per sweep written for nothing
    (bench/trial.py). Each event then reads as a creation no handler matches; deletion is told
    by deletionTimestamp, not by the diff, so release_trial runs as before.

    Nor is an essence built to diff against nothing: kopf's own build deep-copies the whole
    body on every event of every trial and sweep, 10 ms each (bench/profiled_operator.py: 0.42 of
    6.95 CPU-s). Only the diff's emptiness is read, by timers with idle=, which none has. A
    resource with on.field handlers (kopf's extra fields) keeps kopf's build: those handlers
    fire on the field's value in it, and any operator sharing kopf's registry in one process
    (the local-stack test's probe operator) would never see its field change."""

    def build(self, *, body: kopf.Body, extra_fields: Any = None) -> kopf.BodyEssence:
        if extra_fields:
            return super().build(body=body, extra_fields=extra_fields)
        return kopf.BodyEssence()

    def fetch(self, *, body: kopf.Body) -> None:
        return None

    def store(self, *, body: kopf.Body, patch: kopf.Patch, essence: Any) -> None:
        return None


@kopf.on.startup()
async def startup(settings: kopf.OperatorSettings, memo: kopf.Memo, **_: Any) -> None:
    # docs/design.md#bounded-watches: bounded watches and requests (kopf #204/#698 silent stalls)
    settings.watching.server_timeout = 120
    settings.watching.client_timeout = 150
    settings.watching.connect_timeout = 5
    settings.networking.request_timeout = 10
    settings.persistence.progress_storage = kopf.StatusProgressStorage(
        field="status.kopf.progress", touch_field="status.kopf.dummy")
    settings.persistence.diffbase_storage = NoDiffBase()
    settings.persistence.finalizer = FINALIZER
    # settled trials leave kopf's watch, and with it kopf's memory of them (docs/design.md#settled-trials)
    settings.watching.label_selectors[GROUP, TRIALS] = f"!{labels.SETTLED}"
    memo.workdir = Path(os.environ.get("BUZZ_WORKDIR") or Path(tempfile.gettempdir()) / "buzz-operator")
    # their columns in files the operator maps, not in its heap (sweep/drive/mapped.py)
    memo.settled = SettledTrials(record=metrics.trial_record, records=metrics.record_table,
                                 store=MappedStore(memo.workdir / ".settled"))
    metrics.SNAPSHOT.settled = memo.settled
    settings.posting.level = logging.WARNING
    memo.reporter = (settings.posting.reporting_component, settings.posting.reporting_instance)
    memo.inflight = InFlight()
    memo.kube = await kube_client.connect()
    memo.settings = OperatorSettings.from_env(os.environ)


@kopf.on.cleanup()
async def cleanup(memo: kopf.Memo, **_: Any) -> None:
    inflight = getattr(memo, "inflight", None)
    if isinstance(inflight, InFlight) and not await inflight.drained(DRAIN_S):
        log.warning("stopping with %d handler runs still in flight after %.0f s", inflight.count, DRAIN_S)
    if isinstance(getattr(memo, "settled", None), SettledTrials):
        await memo.settled.close()
    if isinstance(getattr(memo, "kube", None), Kube):
        await memo.kube.close()


@kopf.index(GROUP, VERSION, TRIALS)
def trial_views(body: kopf.Body, **_: Any) -> dict[None, TrialView]:
    summary = view_trial(body)
    metrics.SNAPSHOT.observe_trial(body)
    logs.remember_trial(summary.namespace, summary.name, summary.sweep)
    return {None: summary}


@kopf.on.probe(id="trials")
def trials_known(trial_views: kopf.Index[None, TrialView], memo: kopf.Memo, **_: Any) -> int:
    settled = getattr(memo, "settled", None)
    return len(trial_views.get(None, [])) + (len(settled) if settled is not None else 0)


def _of_sweep(trial: TrialView | None, sweep: str) -> TrialView | None:
    """`trial` if it is one of `sweep`'s (names are unique in a namespace, not per sweep)."""
    return trial if trial is not None and trial.sweep == sweep else None


@kopf.timer(GROUP, VERSION, SWEEPS, interval=SWEEP_INTERVAL_S)
@_held
async def reconcile_sweep(
    body: kopf.Body, memo: kopf.Memo, trial_views: kopf.Index[None, TrialView], **_: Any
) -> None:
    logs.CURRENT.set((body.metadata.name, None))
    old = dict(body.get("status") or {})
    try:
        # a restarted operator sees every settled trial before it plans (nothing created twice)
        await memo.settled.ready(memo.kube, body.metadata.namespace)
        watched = list(trial_views.get(None, []))
        # settled trials hold no slot: admission needs only kopf's; the sweep's own settled ones
        # are read from columns a summary at a time, whenever the reconcile reads the sweep
        namespace, name = body.metadata.namespace, body.metadata.name
        mine = SweepTrials([t for t in watched if t.sweep == name and t.namespace == namespace],
                           settled=lambda: memo.settled.summaries(namespace, name),
                           settled_by_name=lambda: memo.settled.summaries_by_name(namespace, name),
                           settled_get=lambda trial: _of_sweep(memo.settled.get(namespace, trial), name),
                           settled_sums=lambda: memo.settled.sums(namespace, name))
        watched_keys = [(t.namespace, t.name) for t in watched]
        metrics.SNAPSHOT.retain_trials(watched_keys)
        logs.retain_trials(watched_keys)
        patch = await sweep_reconcile.reconcile(memo.kube, body, watched, mine, memo.settings)
        del mine
        patch = escapes.with_recovery(old, patch, _now(), generation=body.metadata.get("generation"))
        if patch:
            await _patch_status(memo, body, SWEEPS, patch)
    except Exception as error:
        await _escaped(memo, body, SWEEPS, "reconcile", error, also=(ACCEPTED,))
    metrics.SNAPSHOT.observe_sweep(body.metadata.namespace, body.metadata.name, {**old, **patch})
    if patch:
        events.post(_plain(body), events.sweep_events(old, patch))
    memo.settled.rest()
    memory.trim()


@kopf.timer(GROUP, VERSION, SWEEPS, interval=JANITOR_INTERVAL_S, initial_delay=JANITOR_INTERVAL_S)
@_held
async def janitor(body: kopf.Body, memo: kopf.Memo, **_: Any) -> None:
    """Orphaned trial pods and Secrets of the sweep's namespace, its unarchived relay channels."""
    try:
        await reaper.tick(memo.kube, _plain(body))
        recovered = escapes.recovered_patch(body.get("status"), _now(), type_=escapes.JANITOR_READY)
        if recovered:
            await _patch_status(memo, body, SWEEPS, recovered)
    except Exception as error:
        await _escaped(memo, body, SWEEPS, "janitor", error, type_=escapes.JANITOR_READY)


async def _settle(memo: kopf.Memo, body: kopf.Body, status: BuzzTrialStatus) -> None:
    """Label the trial settled and take kopf's finalizer off (docs/design.md#settled-trials): kopf
    then forgets it, and the settled trials' watch keeps its summary — kept here first, so no
    reconcile finds it in neither. Not while a regrade is still to run on it. A Ready=False an
    earlier failure to settle left is set True first: after the label no handler sees the trial."""
    if trial_driver.regrade_wanted(status, body.metadata.annotations) is not None:
        return
    if recovered := escapes.recovered_patch(status.to_api(), _now(), generation=body.metadata.get("generation")):
        await _patch_status(memo, body, TRIALS, recovered)
    meta = _plain(body)["metadata"]
    memo.settled.add({"metadata": {**meta, "labels": {**(meta.get("labels") or {}), labels.SETTLED: "true"}},
                      "spec": dict(body.spec), "status": status.to_api()})
    try:
        await resources.relabel(memo.kube, TRIALS, body.metadata.namespace, body.metadata.name,
                                labels={labels.SETTLED: "true"}, drop_finalizer=FINALIZER)
    except BaseException:  # not labelled (cancelled too): kopf keeps it, and a later daemon settles it
        memo.settled.discard(body.metadata.namespace, body.metadata.name)
        raise


@kopf.daemon(GROUP, VERSION, TRIALS, cancellation_timeout=2.0)
@_held
async def drive_trial(body: kopf.Body, memo: kopf.Memo, **_: Any) -> None:
    status = BuzzTrialStatus.model_validate(dict(body.get("status") or {}))
    if trial_driver.settled(status):
        try:  # settled before this operator labelled it (a restart in between, or an older operator)
            await _settle(memo, body, status)
        except Exception as error:
            await _escaped(memo, _plain(body), TRIALS, "trial", error)
        return
    name, namespace = body.metadata.name, body.metadata.namespace
    logs.CURRENT.set((str(body.spec.get("sweepName", "")), name))
    latest = status.to_api()  # what the escape path patches: the last status this daemon wrote

    async def write(old: BuzzTrialStatus, new: BuzzTrialStatus) -> None:
        nonlocal latest
        patch = status_patch(old, new)
        patch = escapes.with_recovery(latest, patch, _now(), generation=body.metadata.get("generation"))
        await _patch_status(memo, body, TRIALS, patch)
        latest = {**new.to_api(), **({"conditions": patch["conditions"]} if "conditions" in patch else {})}
        metrics.phase_change(old, new, namespace=namespace, condition_hash=body.spec.get("conditionHash"))
        events.post(_plain(body), events.trial_events(old, new))

    if status.phase is Phase.PENDING and status.phase_times.provisioning is None and not status.retries:
        await _announce(memo, _plain(body))
    try:
        ctx = await load_context(memo.kube, _plain(body), workdir=memo.workdir / namespace / name)
        status = await trial_driver.drive(ctx, status, write)
        await _settle(memo, body, status)
    except Exception as error:
        await _escaped(memo, {**_plain(body), "status": latest}, TRIALS, "trial", error)


async def _announce(memo: kopf.Memo, body: Mapping[str, Any]) -> None:
    """A fresh trial's Admitted Event, posted and awaited before its first write (the reason it
    is not queued to kopf: observability/events.py `announcement`). Posted again by a daemon that
    finds the trial still fresh, it meets its own name and is not repeated. An Event is
    auxiliary: one the API refused is a warning in the log, and the trial goes on."""
    component, instance = getattr(memo, "reporter", ("kopf", "dev"))
    event = events.announcement(body, events.admitted(body.get("spec") or {}), now=_now(),
                                component=component, instance=instance)
    try:
        await objects.create_event(memo.kube, body["metadata"]["namespace"], event)
    except Exception as error:
        log.warning("trial %s: Admitted Event not posted (%s: %s)", body["metadata"]["name"],
                    type(error).__name__, error)


@kopf.timer(GROUP, VERSION, TRIALS, interval=REGRADE_INTERVAL_S, annotations={labels.REGRADE: kopf.PRESENT})
@_held
async def regrade_trial(body: kopf.Body, memo: kopf.Memo, **_: Any) -> None:
    """spec.regrade, on a finished trial its sweep annotated: the verifier once more on the
    recorded evidence (trial/steps/regrade.py); done when status.regrade names the generation."""
    status = BuzzTrialStatus.model_validate(dict(body.get("status") or {}))
    wanted = trial_driver.regrade_wanted(status, body.metadata.annotations)
    if wanted is None:
        if trial_driver.settled(status) and labels.SETTLED not in body.metadata.labels:
            try:  # regraded, and its settling did not go through
                await _settle(memo, body, status)
            except Exception as error:
                await _escaped(memo, body, TRIALS, "regrade", error)
        return
    name, namespace = body.metadata.name, body.metadata.namespace
    try:
        ctx = await load_context(memo.kube, _plain(body), workdir=memo.workdir / namespace / name)
        new = await regrade_step.regrade(ctx, status, wanted)
        patch = escapes.with_recovery(body.get("status"), status_patch(status, new), _now())
        await _patch_status(memo, body, TRIALS, patch)
    except Exception as error:
        await _escaped(memo, body, TRIALS, "regrade", error)
    events.post(_plain(body), events.regraded(status, new))
    try:  # the regrade recorded, the trial leaves kopf's watch again
        await _settle(memo, body, new)
    except Exception as error:
        await _escaped(memo, body, TRIALS, "regrade", error)


@kopf.on.delete(GROUP, VERSION, TRIALS)
@_held
async def release_trial(body: kopf.Body, memo: kopf.Memo, logger: logging.Logger, **_: Any) -> None:
    """A trial deleted before its teardown still gets its channel archived (pods and Secrets
    go with it by owner reference); without its sweep there is no relay to talk to."""
    status = BuzzTrialStatus.model_validate(dict(body.get("status") or {}))
    if trial_driver.settled(status) or not status.trial_id:
        return
    name, namespace = body.metadata.name, body.metadata.namespace
    try:
        ctx = await load_context(memo.kube, _plain(body), workdir=memo.workdir / namespace / name)
        await trial_driver.release(ctx, status)
    except (InputError, StepFailure) as error:
        logger.warning(f"trial {name} deleted without archiving its channel: {error}")


async def _patch_status(memo: kopf.Memo, body: Mapping[str, Any], plural: str, patch: Mapping[str, Any]) -> None:
    meta = body["metadata"]
    await resources.patch_status(memo.kube, plural, meta["namespace"], meta["name"], patch)


async def _escaped(
    memo: kopf.Memo, body: Mapping[str, Any], plural: str, where: str, error: Exception, *,
    type_: str = escapes.READY, also: tuple[str, ...] = (),
) -> NoReturn:
    """What escaped a handler goes into status first, then a Warning Event, then kopf retries
    after a backoff that grows with how long the object has been failing (api/escapes.py)."""
    now, status = _now(), dict(body.get("status") or {})
    escape = escapes.classify(error, where)
    # where it was raised, for a bug; frames only, since the exception's own text may hold a secret
    frames = "".join(traceback.format_tb(error.__traceback__)) if escape.reason == "InternalError" else ""
    log.warning("%s %s/%s: %s%s", where, body["metadata"]["namespace"], body["metadata"]["name"], escape.message,
                f"\n{frames}" if frames else "")
    patch = escapes.escape_patch(status, escape, now, generation=body["metadata"].get("generation"), type_=type_,
                                 also=() if escape.retryable else also)
    try:
        await _patch_status(memo, body, plural, patch)
    except Exception as write_error:  # the API server may be what failed: the Event and log still tell
        log.warning("%s: status not written (%s: %s)", where, type(write_error).__name__, write_error)
    events.post(_plain(body), [events.escaped(escape)])
    # from None: kopf must not log the unscrubbed original as this error's context
    raise kopf.TemporaryError(escape.message, delay=escapes.retry_delay_s(escapes.conditions_of(status), now)) from None


def _now() -> datetime:
    return datetime.now(UTC)


def _plain(body: Mapping[str, Any]) -> dict[str, Any]:
    return {key: body[key] for key in ("apiVersion", "kind", "metadata", "spec", "status") if key in body}
