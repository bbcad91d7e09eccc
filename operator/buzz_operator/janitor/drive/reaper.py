"""One janitor tick for one sweep: delete orphaned trial pods and per-try Secrets in its
namespace and the warm pods it left behind once it starts no trial, and archive relay channels of
its trials whose try is over or whose trial is gone.

Bounded per tick (orphans.py limits), idempotent (404 on delete is done; archiving an archived
channel is a no-op), and never fatal: a tick that cannot reach the relay tries again next time.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import asyncpg
from kubernetes_asyncio.client.exceptions import ApiException
from pydantic import ValidationError

from buzz_operator.api import labels
from buzz_operator.api.common import TRIALS
from buzz_operator.api.naming import label_value
from buzz_operator.api.sweep import BuzzSweepSpec
from buzz_operator.api.trial import BuzzTrialStatus
from buzz_operator.inputs.errors import InputError
from buzz_operator.inputs.fetch import datasets, resolve
from buzz_operator.janitor import orphans
from buzz_operator.janitor.orphans import LiveTrial
from buzz_operator.kube import objects, resources
from buzz_operator.kube.client import Kube
from buzz_operator.relay import tenant
from buzz_operator.relay.tenant_models import ProvisioningError, TenantHandle
from buzz_operator.storage import StorageError
from buzz_operator.sweep.planner import trial_name
from buzz_operator.trial.state import RELEASED, is_terminal

log = logging.getLogger(__name__)
OURS = f"{labels.MANAGED_BY}={labels.MANAGER},{labels.TRIAL}"
UNSETTLED = f"!{labels.SETTLED}"
LOOKUPS_PER_TICK = orphans.MAX_DELETES_PER_TICK  # trials read one by one in a tick


@dataclass
class Reaped:
    pods: list[str]
    secrets: list[str]
    channels: list[str]


def _live(item: Mapping[str, Any]) -> LiveTrial:
    status = BuzzTrialStatus.model_validate(dict(item.get("status") or {}))
    settled = is_terminal(status) and any(c.type == RELEASED for c in status.conditions)
    meta = item["metadata"]
    return LiveTrial(meta["name"], meta["uid"], status.retries, settled)


async def _trials(kube: Kube, namespace: str, selector: str | None = None) -> list[LiveTrial]:
    # a page at a time, each trial folded to its LiveTrial at once (resources.iter_objects)
    return [_live(item) async for item in resources.iter_objects(kube, TRIALS, namespace, selector=selector)]


async def _trials_of(kube: Kube, namespace: str, objects: list[Mapping[str, Any]],
                     selector: str = UNSETTLED) -> tuple[list[LiveTrial], set[str]]:
    """The trials `objects` name: the unsettled ones listed (the active ones: few), each other
    one read by name — a settled trial's, or a trial gone — at most LOOKUPS_PER_TICK of them;
    and the names not read this tick. A list of every trial of the namespace each minute was a
    transient that grew with the sweeps (docs/performance.md#memory)."""
    trials = await _trials(kube, namespace, selector)  # listed after the objects: see orphans.py
    named = orphans.named_trials(objects, trials)
    for name in named[:LOOKUPS_PER_TICK]:
        if (body := await resources.get(kube, TRIALS, namespace, name)) is not None:
            trials.append(_live(body))
    return trials, set(named[LOOKUPS_PER_TICK:])


async def reap_objects(kube: Kube, namespace: str) -> tuple[list[str], list[str]]:
    """Trial pods and Secrets of the namespace whose BuzzTrial is gone."""
    pods = kube.api.sanitize_for_serialization(
        await kube.core.list_namespaced_pod(namespace, label_selector=OURS)).get("items", [])
    secrets = kube.api.sanitize_for_serialization(
        await kube.core.list_namespaced_secret(namespace, label_selector=OURS)).get("items", [])
    trials, unknown = await _trials_of(kube, namespace, [*pods, *secrets])
    dead_pods = orphans.orphaned(pods, trials, unknown=unknown)
    dead_secrets = orphans.orphaned(secrets, trials, unknown=unknown)
    for name in dead_pods:
        await objects.delete_pod(kube, namespace, name, grace_seconds=0)
    for name in dead_secrets:
        await objects.delete_secret(kube, namespace, name)
    return dead_pods, dead_secrets


async def reap_channels(kube: Kube, sweep: Mapping[str, Any]) -> list[str]:
    """Archive this sweep's unarchived relay channels that no running try uses."""
    meta = sweep["metadata"]
    namespace, name, uid = meta["namespace"], meta["name"], meta["uid"]
    try:
        spec = BuzzSweepSpec.model_validate(sweep.get("spec") or {})
        target = await resolve.relay_target(kube, namespace, spec)
    except (ValidationError, InputError):
        return []  # the sweep's own reconcile reports what is wrong with it
    try:
        conn = await asyncpg.connect(target.pg_dsn, timeout=10)
    except (OSError, asyncpg.PostgresError, TimeoutError) as error:
        log.info("janitor %s/%s: relay database unreachable (%s); next tick", namespace, name, type(error).__name__)
        return []
    try:
        rows = await conn.fetch("SELECT trial_id, handle FROM benchmark.trial_manifest "
                                "WHERE run_id = $1 AND archived_at IS NULL", name)
    except asyncpg.UndefinedTableError:
        return []
    finally:
        await conn.close()
    if not rows:
        return []
    # a running try's tenant is live: its trial is not settled, so the unsettled ones tell
    live = orphans.live_trial_ids(uid, await _trials(kube, namespace, f"{labels.SWEEP}={label_value(name)},{UNSETTLED}"))
    handles = {row["trial_id"]: row["handle"] for row in rows}
    candidates = {t for t in handles if t not in live}
    if not candidates:
        return []
    status = sweep.get("status") or {}
    # every name the sweep's trials have or its plan gives, read as a stream (a page of trials at
    # a time), keeping only the candidates' ids
    names: list[AsyncIterator[str] | Iterator[str]] = [_names(kube, namespace, name)]
    if status.get("conditionHash"):
        tasks = await _task_names(kube, namespace, spec)
        names.append(trial_name(name, status["conditionHash"], task, attempt)
                     for attempt in range(1, spec.attempts + 1) for task in tasks)
    ours: set[str] = set()
    for source in names:
        if isinstance(source, Iterator):
            ours |= orphans.sweep_trial_ids(uid, source, spec.retry.max_retries, among=candidates)
        else:
            async for trial in source:
                ours |= orphans.sweep_trial_ids(uid, (trial,), spec.retry.max_retries, among=candidates)
    archived = []
    for trial_id in orphans.unarchived_orphans(candidates, live=live, ours=ours):
        raw = handles[trial_id]
        handle = TenantHandle.from_json(raw if isinstance(raw, str) else str(raw))
        try:
            await tenant.teardown(target, handle, tenant.derive_secrets(target.owner_secret_hex, handle))
        except (ProvisioningError, OSError, asyncpg.PostgresError, TimeoutError) as error:
            log.info("janitor %s/%s: archiving %s failed (%s); next tick", namespace, name, trial_id, error)
            break
        archived.append(handle.channel_id)
    return archived


async def _names(kube: Kube, namespace: str, sweep: str) -> AsyncIterator[str]:
    async for item in resources.iter_objects(kube, TRIALS, namespace, selector=f"{labels.SWEEP}={label_value(sweep)}"):
        yield str(item["metadata"]["name"])


async def _task_names(kube: Kube, namespace: str, spec: BuzzSweepSpec) -> list[str]:
    """The sweep's task names, read as its reconcile reads them (any dataset source)."""
    try:
        store = await resolve.open_sweep_store(kube, namespace, spec)
        return [t.name for t in (await datasets.load_tasks(kube, namespace, spec, store))[1]]
    except (InputError, StorageError, ValueError):
        return []  # trials that still exist are covered by name; the sweep's reconcile reports the rest


def idle(sweep: Mapping[str, Any]) -> bool:
    """The sweep starts no trial any more: suspended, or Complete or Failed."""
    if (sweep.get("spec") or {}).get("suspend"):
        return True
    return any(c.get("type") in ("Complete", "Failed") and c.get("status") == "True"
               for c in (sweep.get("status") or {}).get("conditions") or [])


async def reap_warm(kube: Kube, sweep: Mapping[str, Any]) -> list[str]:
    """Warm pods an idle sweep left behind whose trial was never created (orphans.left_warm)."""
    if not idle(sweep):
        return []
    meta = sweep["metadata"]
    namespace = meta["namespace"]
    pods = kube.api.sanitize_for_serialization(await kube.core.list_namespaced_pod(
        namespace, label_selector=f"{labels.WARM}=true,{labels.SWEEP}={label_value(meta['name'])}")).get("items", [])
    if not pods:
        return []
    trials, unknown = await _trials_of(kube, namespace, pods, f"{labels.SWEEP}={label_value(meta['name'])},{UNSETTLED}")
    left = [name for name in orphans.left_warm(pods, trials, idle=True)
            if _trial_label(pods, name) not in unknown]
    for name in left:
        await objects.delete_pod(kube, namespace, name, grace_seconds=0)
    return left


def _trial_label(objects: list[Mapping[str, Any]], name: str) -> str | None:
    return next((((o.get("metadata") or {}).get("labels") or {}).get(labels.TRIAL)
                 for o in objects if (o.get("metadata") or {}).get("name") == name), None)


async def tick(kube: Kube, sweep: Mapping[str, Any]) -> Reaped:
    namespace = sweep["metadata"]["namespace"]
    try:
        pods, secrets = await reap_objects(kube, namespace)
        pods += await reap_warm(kube, sweep)
    except ApiException as error:
        log.info("janitor %s: listing failed (HTTP %s); next tick", namespace, error.status)
        pods, secrets = [], []
    channels = await reap_channels(kube, sweep)
    if pods or secrets or channels:
        log.warning("janitor %s: reaped pods %s, Secrets %s, channels %s", namespace, pods, secrets, channels)
    return Reaped(pods, secrets, channels)
