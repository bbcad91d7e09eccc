"""A TrialContext from a BuzzTrial object: its sweep's inputs read through the API, the task
loaded from the dataset and checked against the digest the trial was planned with (a dataset
edited mid-sweep must not change what a planned trial runs)."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from kubernetes_asyncio.client.exceptions import ApiException

from buzz_operator.api.common import SWEEPS
from buzz_operator.api.relay import is_loopback_url
from buzz_operator.api.sweep import BuzzSweepSpec
from buzz_operator.api.trial import BuzzTrialSpec
from buzz_operator.inputs.errors import InputError
from buzz_operator.inputs.fetch import datasets, resolve
from buzz_operator.kube import resources
from buzz_operator.kube.client import Kube
from buzz_operator.kube.secret_reads import SecretReads
from buzz_operator.trial.drive.context import RelayService, TrialContext


async def read_sweep(kube: Kube, namespace: str, name: str) -> dict[str, Any]:
    try:
        sweep = await resources.get(kube, SWEEPS, namespace, name)
    except ApiException as exc:
        raise InputError("spec.sweepName", f"BuzzSweep {name} cannot be read (HTTP {exc.status})") from exc
    if sweep is None:
        raise InputError("spec.sweepName", f"BuzzSweep {name} cannot be read (HTTP 404)")
    return sweep


def relay_service(spec: BuzzSweepSpec) -> RelayService | None:
    """The Service a loopback relay URL's forwarder targets; None for a direct URL (no forwarder)."""
    ref = spec.relay.service_ref
    return RelayService(ref.name, ref.port) if ref is not None and is_loopback_url(spec.relay.url) else None


async def load_context(kube: Kube, trial: Mapping[str, Any], *, workdir: Path) -> TrialContext:
    meta = trial["metadata"]
    namespace = meta["namespace"]
    spec = BuzzTrialSpec.model_validate(trial["spec"])
    sweep = await read_sweep(kube, namespace, spec.sweep_name)
    sweep_spec = BuzzSweepSpec.model_validate(sweep["spec"])
    reads = SecretReads()  # the drive's Secrets, each read once: these inputs' and its steps'
    condition = await resolve.load_condition(kube, namespace, sweep_spec)
    if condition.manifest.sha256 != spec.condition_hash:
        raise InputError("spec.conditionHash", "the sweep's condition changed after this trial was planned")
    # the keys are read here only to refuse a sweep whose Secret is gone; steps take them when used
    endpoints, _ = await resolve.load_endpoints(kube, namespace, sweep_spec, condition.manifest, read_secret=reads)
    store = await resolve.open_sweep_store(kube, namespace, sweep_spec, read_secret=reads)
    _, tasks = await datasets.load_tasks(kube, namespace, sweep_spec, store)
    task = next((t for t in tasks if t.name == spec.task), None)
    if task is None or task.digest != spec.task_digest:
        raise InputError("spec.taskDigest", f"task {spec.task} is missing or changed since planning")
    await asyncio.to_thread(workdir.mkdir, parents=True, exist_ok=True)
    return TrialContext(
        kube=kube, namespace=namespace, name=meta["name"], uid=meta["uid"], sweep_uid=sweep["metadata"]["uid"],
        spec=spec, labels=dict(meta.get("labels") or {}), manifest=condition.manifest, prompts=condition.prompts,
        endpoints=endpoints, task=task,
        api_key_secret=sweep_spec.endpoints.secret_ref.name if sweep_spec.endpoints and sweep_spec.endpoints.secret_ref
        else None,
        relay=await resolve.relay_target(kube, namespace, sweep_spec, read_secret=reads),
        relay_service=relay_service(sweep_spec),
        store_url=resolve.storage_url(sweep_spec), store=store, quarantine_prefix=resolve.quarantine_prefix(sweep_spec),
        workdir=workdir, secret_reads=reads,
    )
