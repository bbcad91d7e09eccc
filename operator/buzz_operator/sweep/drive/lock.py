"""The sweep's lock (sweep/lock.py): what this experiment is — condition, dataset, task images,
stack and its digests, operator image — written to `<sweep>/lock.json` when it changes, so two
sweeps of different experiments never share a folder of results (docs/bundle.md#layout)."""

from __future__ import annotations

import logging
from typing import Any

from buzz_operator.api.sweep import PreflightStatus
from buzz_operator.storage import StorageError, StorageUnavailable
from buzz_operator.sweep.drive import documents
from buzz_operator.sweep.drive.inputs import SweepInputs
from buzz_operator.sweep.drive.tick import Stop, Tick
from buzz_operator.sweep.lock import sweep_config, sweep_lock

log = logging.getLogger(__name__)


def lock_of(tick: Tick, read: SweepInputs, preflight: PreflightStatus | None) -> dict[str, Any]:
    """The lock document of this tick's inputs."""
    spec = read.spec
    return sweep_lock(
        manifest=read.manifest, dataset=read.dataset, tasks=read.tasks,
        task_images={t.name: t.image_ref(spec.task_image_registry, read.dataset) for t in read.tasks},
        stack=spec.stack_source(tick.settings.stack), stack_digests=preflight.stack if preflight is not None else None,
        operator_image=spec.operator_image or tick.settings.operator_image, origins=read.origins,
        headroom=spec.headroom(tick.settings.limit_multiple),
    )


async def record_lock(tick: Tick, read: SweepInputs, preflight: PreflightStatus | None) -> str:
    """The lock's digest, its document written first when it differs from the recorded one.
    Stop: storage unavailable (no write; the next tick tries again), refused for good, or a
    folder that holds another experiment's lock (invalid, naming spec.storage.url)."""
    lock = lock_of(tick, read, preflight)
    digest = documents.lock_digest(lock)
    if tick.previous.lock_digest == digest:
        return digest
    store, name = read.store, tick.name
    try:
        drift = await documents.lock_storage(
            store, name, lock, sweep_config(name, tick.namespace, tick.body.get("spec") or {}, lock))
    except StorageUnavailable as error:  # unavailable storage is not the user's mistake: retry next tick
        log.warning("sweep %s/%s: storage %s: %s", tick.namespace, name, store.url, error)
        raise Stop({}) from None
    except StorageError as error:  # permanent (permissions, no bucket): say so instead of waiting silently
        raise tick.invalid(f"spec.storage.url: {store.url}: {error}"[:300]) from None
    if drift:
        raise tick.invalid(f"spec.storage.url: {store.url}/{name}/lock.json belongs to a different experiment: {drift}")
    return digest
