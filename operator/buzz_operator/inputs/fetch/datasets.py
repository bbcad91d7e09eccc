"""A sweep's dataset on local disk, whatever its source: the builtin suite shipped in the
operator image, a ConfigMap of small task directories, a prefix in the sweep's object store
(where `buzzctl dataset push` puts one), or Harbor's registry and git-repository forms
(inputs/fetch/git_datasets.py). The task loader (dataset room) then reads it as it reads
any Harbor task directory.

Materialised copies are content-addressed (ConfigMap) or keyed by the listing (object store),
so a sweep tick every few seconds does not download anything twice, and a trial planned from
one copy is checked against its planned task digest when it starts.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import shutil
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from buzz_operator.api.sweep import BuzzSweepSpec
from buzz_operator.dataset import TaskError, builtin_dataset_path, load_dataset
from buzz_operator.dataset.task import Task
from buzz_operator.inputs.errors import InputError
from buzz_operator.inputs.fetch import git_datasets, resolve
from buzz_operator.kube.client import Kube
from buzz_operator.storage import ObjectStore, StorageError

CACHE_ENV = "BUZZ_DATASET_CACHE"
CONFIG_MAP_SEPARATOR = "__"
LISTING_TTL_S = 300.0
_listings: dict[tuple[str, str], tuple[tuple[str, ...], Path, float]] = {}


def cache_root() -> Path:
    override = os.environ.get(CACHE_ENV)
    return Path(override) if override else Path(tempfile.gettempdir()) / "buzz-operator-datasets"


def config_map_files(data: Mapping[str, str]) -> dict[str, str]:
    """`{relative path: text}` from ConfigMap keys that spell paths with '__' for '/'.

    Keys that would climb out of the dataset (`..`) or name nothing are refused: a ConfigMap
    is user input like any other.
    """
    files: dict[str, str] = {}
    for key, text in data.items():
        parts = key.split(CONFIG_MAP_SEPARATOR)
        if any(part in ("", ".", "..") for part in parts):
            raise InputError("spec.dataset.configMapRef", f"key {key!r} is not a task file path "
                                    f"(use '{CONFIG_MAP_SEPARATOR}' for '/', e.g. hello__task.toml)")
        files["/".join(parts)] = text
    return files


def _write_once(target: Path, files: Mapping[str, bytes]) -> Path:
    if target.is_dir():
        return target
    staging = Path(tempfile.mkdtemp(dir=target.parent, prefix=".staging-"))
    try:
        for rel, body in files.items():
            path = staging / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(body)
        staging.rename(target)
    except OSError:
        shutil.rmtree(staging, ignore_errors=True)
        if not target.is_dir():
            raise
    return target


def materialize_config_map(data: Mapping[str, str], root: Path) -> Path:
    files = {rel: text.encode() for rel, text in config_map_files(data).items()}
    digest = hashlib.sha256()
    for rel in sorted(files):
        digest.update(rel.encode() + b"\0" + files[rel] + b"\0")
    root.mkdir(parents=True, exist_ok=True)
    return _write_once(root / f"configmap-{digest.hexdigest()[:16]}", files)


async def materialize_prefix(store: ObjectStore, prefix: str, root: Path) -> Path:
    """The tasks under `prefix` of `store`, downloaded once per listing."""
    cached = _listings.get((store.url, prefix))
    if cached and time.monotonic() - cached[2] < LISTING_TTL_S and cached[1].is_dir():
        return cached[1]
    try:
        keys = tuple(await store.list(prefix))
    except StorageError as exc:
        raise InputError("spec.dataset.objectStore", f"cannot list {store.url}/{prefix}: {exc}") from exc
    if not keys:
        raise InputError("spec.dataset.objectStore.prefix", f"no objects under {store.url}/{prefix}")
    if cached and cached[0] == keys and cached[1].is_dir():
        _listings[(store.url, prefix)] = (keys, cached[1], time.monotonic())
        return cached[1]
    name = hashlib.sha256(f"{store.url}\0{prefix}\0{time.time_ns()}".encode()).hexdigest()[:16]
    await asyncio.to_thread(root.mkdir, parents=True, exist_ok=True)
    target = root / f"store-{name}"
    try:
        await store.get_dir(prefix, target)
    except StorageError as exc:
        await asyncio.to_thread(shutil.rmtree, target, True)
        raise InputError("spec.dataset.objectStore", f"cannot download {store.url}/{prefix}: {exc}") from exc
    _listings[(store.url, prefix)] = (keys, target, time.monotonic())
    return target


def _dataset_name(prefix: str) -> str:
    return prefix.strip("/").rsplit("/", 1)[-1]


async def load_tasks(kube: Kube, namespace: str, spec: BuzzSweepSpec, store: ObjectStore) -> tuple[str, list[Task]]:
    """(dataset name, tasks after include/exclude). The name goes into task image references
    (<registry>/<dataset>-<task>:<digest>) and lock.json."""
    name, tasks, _ = await load_source(kube, namespace, spec, store)
    return name, tasks


async def load_source(
    kube: Kube, namespace: str, spec: BuzzSweepSpec, store: ObjectStore
) -> tuple[str, list[Task], dict[str, dict[str, Any]]]:
    """As load_tasks, and each git-fetched task's Harbor TaskConfig by task name (registry and
    package datasets; empty for the others), which the sweep's config.json records."""
    source, root = spec.dataset, cache_root()
    origins: dict[str, dict[str, Any]] = {}
    try:
        if source.builtin is not None:
            name, path = "builtin", builtin_dataset_path()
        elif source.config_map_ref is not None:
            name = source.config_map_ref.name
            data = await resolve.config_map(kube, namespace, name, "spec.dataset.configMapRef")
            path = await asyncio.to_thread(materialize_config_map, data, root)
        elif source.registry is not None:
            fetched = await git_datasets.load_registry(kube, namespace, source.registry, root)
            name, path, origins = fetched.name, fetched.path, fetched.origins
        elif source.package is not None:
            fetched = await git_datasets.load_package(source.package, root)
            name, path, origins = fetched.name, fetched.path, fetched.origins
        else:
            assert source.object_store is not None  # the model guarantees exactly one source
            prefix = source.object_store.prefix.strip("/")
            name, path = _dataset_name(prefix), await materialize_prefix(store, prefix, root)
        tasks = await asyncio.to_thread(load_dataset, path, spec.include, spec.exclude)
    except TaskError as exc:
        raise InputError("spec.dataset", str(exc)) from exc
    if not tasks:
        raise InputError("spec.include", "no task of the dataset matches include/exclude")
    return name, tasks, {task.name: origins[task.name] for task in tasks if task.name in origins}
