"""Uploading trial bundles with result.json as the commit marker.

A reader (the rollup, `buzzctl`, Harbor's viewer, a resumed operator) treats a trial as finished
exactly when its result.json exists, so result.json is written only after every other file of the
bundle is stored, and a committed bundle is never written again. A try that failed on infra keeps its
evidence under retries/<n>/ by the same rule, so a later try never overwrites it."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from .errors import AlreadyCommitted, InvalidKey, ObjectNotFound, StorageError
from .keys import join_key, validate_key
from .layout import (
    RERUNS_DIR,
    RESULT,
    RETRIES_DIR,
    quarantine_pointer_key,
    rerun_prefix,
    retry_prefix,
    trial_prefix,
    trial_result_key,
)
from .prefixed import PrefixedStore
from .store import ObjectStore
from .tree import local_files, upload_files


async def is_committed(store: ObjectStore, sweep: str, trial: str) -> bool:
    """Whether the trial's bundle is complete (its result.json is stored)."""
    return await store.exists(trial_result_key(sweep, trial))


async def upload_bundle(store: ObjectStore, sweep: str, trial: str, local_dir: Path | str) -> list[str]:
    """Upload the trial directory `local_dir` (config.json, agent/buzz/…, verifier/…, result.json)
    to the trial's prefix, result.json last and only if it is present locally. Returns the keys
    written, result.json (if any) last. Raises AlreadyCommitted when the trial is committed; an
    interrupted earlier upload (no result.json yet) is simply written over."""
    prefix = trial_prefix(sweep, trial)
    files = await asyncio.to_thread(local_files, local_dir)
    if clash := [rel for rel, _ in files if rel.split("/", 1)[0] == RETRIES_DIR]:
        raise StorageError(
            f"local_dir {str(local_dir)!r} holds {clash[0]!r}: {RETRIES_DIR}/ keeps earlier tries' "
            "evidence and is written only by upload_failed_try"
        )
    return await _upload_with_marker(store, prefix, files, f"trial {sweep}/{trial}")


async def upload_failed_try(
    store: ObjectStore, sweep: str, trial: str, failed_try: int, local_dir: Path | str
) -> list[str]:
    """Keep the evidence of the `failed_try`-th try that failed on infra (from 1) under
    <trial>/retries/<failed_try>/, with the same commit rule: its result.json (exception_info)
    last; a committed failed try is never written again."""
    prefix = retry_prefix(sweep, trial, failed_try)
    files = await asyncio.to_thread(local_files, local_dir)
    return await _upload_with_marker(store, prefix, files, f"failed try {failed_try} of trial {sweep}/{trial}")


async def recorded_failed_tries(store: ObjectStore, sweep: str, trial: str) -> list[int]:
    """The numbers of the failed tries that have evidence under retries/, ascending."""
    base = join_key(trial_prefix(sweep, trial), RETRIES_DIR)
    numbers = {key[len(base) + 1 :].split("/", 1)[0] for key in await store.list(base)}
    return sorted(int(n) for n in numbers if n.isdigit())


async def _upload_with_marker(
    store: ObjectStore, prefix: str, files: list[tuple[str, Path]], what: str
) -> list[str]:
    marker_key = join_key(prefix, RESULT)
    if await store.exists(marker_key):
        raise AlreadyCommitted(f"{what} is already committed ({marker_key} exists); its files are final")
    body = [(rel, path) for rel, path in files if rel != RESULT]
    marker = [path for rel, path in files if rel == RESULT]
    # upload_files raises only after every started upload has finished, so the marker is never
    # written while part of the body is missing or still in flight
    keys = await upload_files(store.put_file, prefix, body)
    if marker:
        await store.put_file(marker_key, marker[0])
        keys.append(marker_key)
    return keys


async def write_quarantine_pointer(
    store: ObjectStore, sweep: str, trial: str, prefix: str, findings: dict[str, Any]
) -> str:
    """Say at the trial's own place where its quarantined bundle is. Written after that bundle
    committed, so a reader that finds the pointer finds the bundle (when it may read there).
    `findings` is what may be shown without the bundle: counts by kind, never a matched string."""
    key = quarantine_pointer_key(sweep, trial)
    document = {"quarantine_prefix": validate_key(prefix, field="quarantine prefix"), "secret_findings": findings}
    await store.put(key, json.dumps(document, indent=2, sort_keys=True).encode() + b"\n")
    return key


async def quarantine_of(store: ObjectStore, sweep: str, trial: str) -> str | None:
    """The quarantine prefix the trial's bundle went to, when its pointer says so."""
    try:
        document = json.loads(await store.get(quarantine_pointer_key(sweep, trial)))
        return validate_key(document["quarantine_prefix"], field="quarantine prefix")
    except ObjectNotFound:
        return None
    except (ValueError, KeyError, TypeError, InvalidKey) as error:
        raise StorageError(f"{quarantine_pointer_key(sweep, trial)} is not a quarantine pointer: {error}") from error


async def bundle_store(store: ObjectStore, sweep: str, trial: str) -> ObjectStore:
    """The store holding the trial's bundle: the sweep's own, or its quarantine (the pointer's)."""
    prefix = await quarantine_of(store, sweep, trial)
    return store if prefix is None else PrefixedStore(store, prefix)


async def set_aside(store: ObjectStore, sweep: str, trial: str, generation: int) -> int:
    """spec.rerun for a trial whose bundle may be quarantined: the quarantined run is set aside
    in the quarantine (it must not leave it, and a new run's bundle must find its place free),
    then the trial's own files, the pointer among them. The number of files moved."""
    moved = 0
    if (prefix := await quarantine_of(store, sweep, trial)) is not None:
        moved += await _set_aside(PrefixedStore(store, prefix), sweep, trial, generation)
    return moved + await _set_aside(store, sweep, trial, generation)


async def _set_aside(store: ObjectStore, sweep: str, trial: str, generation: int) -> int:
    """Move the trial's run (bundle, retries/, regrades/) under reruns/<generation>/ so it can run again
    (spec.rerun). Copies first, result.json last; then un-commits the original (result.json
    first) and removes the rest. Idempotent: after a crash part-way, running it again finishes
    the move. The number of files moved."""
    source = trial_prefix(sweep, trial)
    target = rerun_prefix(sweep, trial, generation)
    # everything of the run moves — its retries/ and regrades/ too, or the new run's try 1 would
    # find the old try 1 committed; only earlier set-asides stay where they are
    keys = [k for k in await store.list(source) if k[len(source) + 1 :].split("/", 1)[0] != RERUNS_DIR]
    ordered = sorted(keys, key=lambda k: k.endswith("/" + RESULT) and k.count("/") == source.count("/") + 1)
    for key in ordered:
        await store.put(join_key(target, key[len(source) + 1 :]), await store.get(key))
    for key in sorted(keys, key=lambda k: k != join_key(source, RESULT)):
        await store.delete(key)
    return len(keys)
