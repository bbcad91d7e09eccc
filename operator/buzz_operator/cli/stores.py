"""Reading a sweep's bundles from its object store, for the commands that work without a
cluster (summary, export, report, trial logs|evidence|bundle).

The store is named by ``--store URL`` (or BUZZCTL_STORE): file:///path or s3://bucket/prefix,
with S3 credentials from the usual AWS_* environment (AWS_ENDPOINT_URL for S3-compatible
servers). Without it the sweep's own spec.storage.url is read from the cluster.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable
from typing import Annotated, Any

import typer

from buzz_operator.cli.exits import fail, unreachable
from buzz_operator.results.files import CONFIG, QUARANTINED, RESULT, fallback_needs, split_trial_key
from buzz_operator.results.trial import load_json, needs_fallback
from buzz_operator.storage import (
    FileStore,
    InvalidKey,
    ObjectNotFound,
    ObjectStore,
    StorageError,
    StorageUnavailable,
    validate_key,
)
from buzz_operator.storage.url import open_store

STORE_ENV = "BUZZCTL_STORE"
# Bundles are many small files; a few dozen requests in flight hide per-request latency
FETCH_CONCURRENCY = 32

StoreOption = Annotated[
    str | None,
    typer.Option(
        "--store",
        envvar=STORE_ENV,
        help="Object store holding the bundles (file:///path or s3://bucket/prefix); "
        "default: the sweep's spec.storage.url read from the cluster.",
        show_default=False,
    ),
]


def store_for(url: str) -> ObjectStore:
    try:
        return open_store(
            url, endpoint=os.environ.get("AWS_ENDPOINT_URL") if url.startswith("s3://") else None
        )
    except StorageError as error:
        fail(f"--store: {error}")


async def guarded(what: str, coro: Any) -> Any:
    """Await a store operation, mapping its failures to buzzctl's exit codes."""
    try:
        return await coro
    except StorageUnavailable as error:
        unreachable(f"{what}: {error}")
    except (InvalidKey, ObjectNotFound) as error:
        fail(f"{what}: {error}")
    except StorageError as error:
        # bad credentials or a missing bucket: the store answered, but not with our data
        unreachable(f"{what}: {error}")


def _read_local(store: FileStore, keys: list[str]) -> dict[str, bytes]:
    found: dict[str, bytes] = {}
    for key in keys:
        try:
            found[key] = (store.root / validate_key(key)).read_bytes()
        except FileNotFoundError:
            raise ObjectNotFound(key) from None
        except OSError as error:
            raise StorageError(f"file store get {key!r} under {store.root}: {error}") from error
    return found


async def fetch(store: ObjectStore, keys: list[str]) -> dict[str, bytes]:
    """Every key's bytes. A local store is read in one worker thread: a summary reads thousands
    of small files, and a thread hop per file would cost more than the reads themselves."""
    if isinstance(store, FileStore):
        return await asyncio.to_thread(_read_local, store, keys)
    gate = asyncio.Semaphore(FETCH_CONCURRENCY)

    async def one(key: str) -> tuple[str, bytes]:
        async with gate:
            return key, await store.get(key)

    return dict(await asyncio.gather(*(one(key) for key in keys)))


async def sweep_keys(store: ObjectStore, sweep: str) -> list[str]:
    """Every key under the sweep, relative to the sweep's prefix."""
    if not sweep or "/" in sweep or sweep in (".", ".."):
        fail(f"NAME: {sweep!r} is not a sweep name")
    keys = await guarded(f"listing {store.url}/{sweep}", store.list(sweep))
    return [key[len(sweep) + 1 :] for key in keys]


async def load_sweep(
    store: ObjectStore, sweep: str, wanted: Callable[[str], bool]
) -> tuple[dict[str, dict[str, bytes]], dict[str, Any]]:
    """(trial → {path → bytes} for the wanted paths, the sweep's config.json or {}).

    A sweep with no object at all under its prefix is a user error (a typo'd name or the wrong
    store); one with only unfinished trials is simply early."""
    rel_keys = await sweep_keys(store, sweep)
    if not rel_keys:
        fail(f"no bundles for sweep {sweep!r} under {store.url}")
    trials: dict[str, dict[str, bytes]] = {}
    present: dict[str, list[str]] = {}
    needed: list[str] = [CONFIG] if CONFIG in rel_keys else []
    for rel in rel_keys:
        split = split_trial_key(rel)
        if split is None:
            continue
        trial, path = split
        trials.setdefault(trial, {})
        present.setdefault(trial, []).append(path)
        if wanted(path):
            needed.append(rel)
    sweep_config = await _read_into(store, sweep, needed, trials)
    followed = await _read_quarantined(store, sweep, present, trials, wanted)
    # a trial that died before naming its condition: read the bundle's manifest.json as well
    fallback = [
        f"{trial}/{path}"
        for trial, files in trials.items()
        if needs_fallback(files) and trial not in followed
        for path in present[trial]
        if fallback_needs(path)
    ]
    if fallback:
        await _read_into(store, sweep, fallback, trials)
    return trials, sweep_config


async def _read_quarantined(
    store: ObjectStore,
    sweep: str,
    present: dict[str, list[str]],
    trials: dict[str, dict[str, bytes]],
    wanted: Callable[[str], bool],
) -> set[str]:
    """Trials whose bundle had suspected secrets and went under the sweep's quarantine prefix
    (their own directory holds only quarantined.json, naming it): read from there, so they are
    scored and flagged SECRETS like any other. A reader who may not list the quarantine (a
    bucket policy, as intended) sees them as not committed. The trials read this way."""
    followed: set[str] = set()
    for trial, paths in present.items():
        if QUARANTINED not in paths or RESULT in paths:
            continue
        pointer = load_json((await guarded(f"reading {store.url}/{sweep}/{trial}",
                                           fetch(store, [f"{sweep}/{trial}/{QUARANTINED}"])))
                            [f"{sweep}/{trial}/{QUARANTINED}"])
        prefix = pointer.get("quarantine_prefix")
        try:
            base = f"{validate_key(prefix)}/{sweep}/{trial}"
            keys = await store.list(base)
        except (InvalidKey, StorageError):
            continue
        rels = [key[len(base) + 1 :] for key in keys]
        if RESULT not in rels:
            continue
        files = _wanted_or_fallback(rels, wanted)
        blobs = await guarded(f"reading {store.url}/{base}", fetch(store, [f"{base}/{rel}" for rel in files]))
        trials[trial] = {key[len(base) + 1 :]: data for key, data in blobs.items()}
        present[trial] = rels
        followed.add(trial)
    return followed


def _wanted_or_fallback(rels: list[str], wanted: Callable[[str], bool]) -> list[str]:
    # one read per quarantined trial: its manifest.json too, in case nothing else names its condition
    return [rel for rel in rels if wanted(rel) or fallback_needs(rel)]


async def _read_into(
    store: ObjectStore, sweep: str, rels: list[str], trials: dict[str, dict[str, bytes]]
) -> dict[str, Any]:
    """Fetch sweep-relative keys into ``trials``; the sweep's config.json if it was among them."""
    blobs = await guarded(f"reading {store.url}/{sweep}", fetch(store, [f"{sweep}/{rel}" for rel in rels]))
    sweep_config: dict[str, Any] = {}
    for key, data in blobs.items():
        split = split_trial_key(key[len(sweep) + 1 :])
        if split is None:
            sweep_config = load_json(data)
        else:
            trials[split[0]][split[1]] = data
    return sweep_config
