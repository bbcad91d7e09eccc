"""The edge of Harbor's dataset forms: `spec.dataset.registry` (a registry.json by URL or
ConfigMap, `name@version` in it) and `spec.dataset.package` (a git repository, Harbor's
`--repo` form). The resolution itself is pure (dataset/registry.py); here are its reads — the
registry.json over HTTP or from the ConfigMap, the remote's refs, the commit's tree over git
(inputs/fetch/git.py) — and the cache on disk.

A task folder is fetched once per (commit, path) and kept under the dataset cache; a sweep that
resolves again (every reconcile tick, every trial start) reads the registry and, for a pinned
commit, touches no git server. Unpinned refs and registry URLs are read again after a minute.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import shutil
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from buzz_operator.api.sweep import PackageDataset, RegistryDataset
from buzz_operator.dataset import registry as ref
from buzz_operator.dataset.task import CONFIG
from buzz_operator.inputs.errors import InputError
from buzz_operator.inputs.fetch import git, resolve
from buzz_operator.kube.client import Kube

REGISTRY = "spec.dataset.registry"
PACKAGE = "spec.dataset.package"
READ_TTL_S = 60.0
HTTP_TIMEOUT_S = 10
MAX_REGISTRY_BYTES = 32 << 20
_registries: dict[str, tuple[bytes, float]] = {}
_refs: dict[str, tuple[dict[str, str], float]] = {}


@dataclass(frozen=True)
class GitDataset:
    """A resolved dataset: its name (lock.json, image references), the materialised directory
    the task loader reads, and each task's Harbor TaskConfig (config.json)."""

    name: str
    path: Path
    origins: dict[str, dict[str, Any]]


def _refused(error: ref.DatasetRefError) -> InputError:
    return InputError(error.field, error.message)


def _http_get(url: str) -> bytes:
    cached = _registries.get(url)
    if cached and time.monotonic() - cached[1] < READ_TTL_S:
        return cached[0]
    try:
        with urllib.request.urlopen(url, timeout=HTTP_TIMEOUT_S) as answer:
            body = answer.read(MAX_REGISTRY_BYTES + 1)
    except urllib.error.HTTPError as error:
        raise InputError(f"{REGISTRY}.url", f"cannot read {url}: HTTP {error.code} {error.reason}") from error
    except (urllib.error.URLError, OSError, ValueError) as error:
        reason = getattr(error, "reason", error)
        raise InputError(f"{REGISTRY}.url", f"cannot read {url}: {reason}") from error
    if len(body) > MAX_REGISTRY_BYTES:
        raise InputError(f"{REGISTRY}.url", f"{url} is larger than {MAX_REGISTRY_BYTES >> 20} MiB")
    _registries[url] = (body, time.monotonic())
    return body


def _refs_of(url: str, field: str) -> dict[str, str]:
    cached = _refs.get(url)
    if cached and time.monotonic() - cached[1] < READ_TTL_S:
        return cached[0]
    try:
        refs = git.remote_refs(url)
    except git.GitError as error:
        raise InputError(field, str(error)) from error
    _refs[url] = (refs, time.monotonic())
    return refs


def _commit(url: str, wanted: str | None, *, reach_field: str, ref_field: str) -> str:
    """`wanted` when it is a commit already; else what the remote's refs say it is."""
    if ref.is_commit(wanted):
        assert wanted is not None
        return wanted.lower()
    try:
        return ref.select_ref(_refs_of(url, reach_field), wanted, field=ref_field, git_url=url)
    except ref.DatasetRefError as error:
        raise _refused(error) from error


def _stage(target: Path, fill: Callable[[Path], None]) -> Path:
    """`target` made once: filled in a staging directory beside it, then renamed into place,
    so a reader never sees half a folder and two resolving at once both end with one."""
    if target.is_dir():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(dir=target.parent, prefix=".staging-"))
    try:
        fill(staging)
        staging.rename(target)
    except OSError:
        if not target.is_dir():
            raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return target


def _write_files(files: dict[str, bytes]) -> Callable[[Path], None]:
    def fill(into: Path) -> None:
        for rel, body in files.items():
            path = into / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(body)
    return fill


def _cached_json(root: Path, key: str, compute: Callable[[], Any]) -> Any:
    """A small fact about a commit (its task folders, its registry.json), kept on disk: a
    commit never changes, so neither does what was read from it."""
    path = root / "git-facts" / f"{hashlib.sha256(key.encode()).hexdigest()[:24]}.json"
    if path.is_file():
        return json.loads(path.read_text())
    value = compute()
    path.parent.mkdir(parents=True, exist_ok=True)
    staging = path.with_name(f".{path.name}.{time.time_ns()}")
    staging.write_text(json.dumps(value))
    staging.replace(path)
    return value


def _cache_task(fetched: git.Fetched, task: ref.GitTask, target: Path) -> None:
    files = fetched.files(task.path)
    if not files:
        raise git.GitError(f"{fetched.url} has an empty folder {task.path!r} at {fetched.commit}")
    _stage(target, _write_files(files))


def materialise(tasks: Sequence[ref.GitTask], commits: dict[ref.GitTask, str], root: Path, field: str) -> Path:
    """The dataset directory of `tasks` (one folder each, named as the task), every folder
    fetched once per (commit, path) into the cache and copied from there. Blocking."""
    cache = root / "git-tasks"
    keys = {task: ref.task_cache_key(task, commits[task]) for task in tasks}
    missing: dict[tuple[str, str], list[ref.GitTask]] = {}
    for task in tasks:
        if not (cache / keys[task]).is_dir():
            missing.setdefault((task.git_url, commits[task]), []).append(task)
    for (url, commit), group in missing.items():
        try:
            with git.Fetched(url, commit) as fetched:
                fetched.prefetch(task.path for task in group)
                for task in group:
                    _cache_task(fetched, task, cache / keys[task])
        except git.GitError as error:
            raise InputError(field, str(error)) from error
    digest = hashlib.sha256("\0".join(f"{t.name}={keys[t]}" for t in sorted(tasks, key=lambda t: t.name)).encode())

    def assemble(into: Path) -> None:
        for task in tasks:
            shutil.copytree(cache / keys[task], into / task.name)

    return _stage(root / f"git-{digest.hexdigest()[:16]}", assemble)


def _registry_text(data: dict[str, str], source: RegistryDataset) -> str:
    assert source.config_map_ref is not None
    key, name = source.config_map_ref.key, source.config_map_ref.name
    if key not in data:
        raise InputError(f"{REGISTRY}.configMapRef.key", f"ConfigMap {name} has no key {key!r}; its keys: "
                                                                f"{', '.join(sorted(data)) or 'none'}")
    return data[key]


async def load_registry(kube: Kube, namespace: str, source: RegistryDataset, root: Path) -> GitDataset:
    """`spec.dataset.registry`: the dataset name@version of the registry.json, fetched."""
    if source.url is not None:
        origin, text = source.url, await asyncio.to_thread(_http_get, source.url)
    else:
        assert source.config_map_ref is not None  # the model guarantees exactly one source
        data = await resolve.config_map(kube, namespace, source.config_map_ref.name, f"{REGISTRY}.configMapRef")
        origin = f"ConfigMap {source.config_map_ref.name} key {source.config_map_ref.key}"
        text = _registry_text(data, source)
    try:
        specs = ref.parse_registry(text, field=f"{REGISTRY}.{'url' if source.url else 'configMapRef'}", origin=origin)
        spec = ref.select_dataset(specs, source.name, field=f"{REGISTRY}.name", origin=origin)
        # Harbor's registry client records the bare name as each task's source
        tasks = ref.registry_tasks(spec, field=f"{REGISTRY}.name", source=spec.name)
    except ref.DatasetRefError as error:
        raise _refused(error) from error
    return await asyncio.to_thread(_fetch_all, spec.name, tasks, root, REGISTRY)


def _fetch_all(name: str, tasks: list[ref.GitTask], root: Path, field: str) -> GitDataset:
    commits = {task: _commit(task.git_url, task.commit, reach_field=field, ref_field=field) for task in tasks}
    path = materialise(tasks, commits, root, field)
    return GitDataset(name, path, {task.name: task.harbor_task() for task in tasks})


async def load_package(source: PackageDataset, root: Path) -> GitDataset:
    """`spec.dataset.package`: org/name[@ref] at gitBase, as Harbor's `--repo` reads it."""
    return await asyncio.to_thread(_resolve_package, source, root)


def _resolve_package(source: PackageDataset, root: Path) -> GitDataset:
    try:
        repo = ref.parse_package(source.name, source.git_base, field=f"{PACKAGE}.name")
    except ref.DatasetRefError as error:
        raise _refused(error) from error
    commit = _commit(repo.git_url, repo.ref, reach_field=f"{PACKAGE}.gitBase", ref_field=f"{PACKAGE}.name")
    tasks_dir = source.path.strip("/") or "."
    try:
        if source.dataset is not None:
            origin = f"{ref.REGISTRY_FILE} of {repo.git_url} at {commit}"
            text = _cached_json(root, f"file\0{commit}\0{ref.REGISTRY_FILE}",
                                lambda: _read_repo_file(repo.git_url, commit, ref.REGISTRY_FILE))
            if text is None:
                raise ref.DatasetRefError(f"{PACKAGE}.dataset", f"{repo.git_url} has no {ref.REGISTRY_FILE} at {commit}")
            spec = ref.select_dataset(ref.parse_registry(text, field=f"{PACKAGE}.dataset", origin=origin),
                                      source.dataset, field=f"{PACKAGE}.dataset", origin=origin)
            tasks = ref.registry_tasks(spec, field=f"{PACKAGE}.dataset", source=spec.name,
                                       default_url=repo.git_url, default_commit=commit)
        else:
            folders = _cached_json(root, f"folders\0{commit}\0{tasks_dir}",
                                   lambda: _task_folders(repo, commit, tasks_dir, root))
            host = urlsplit(source.git_base).hostname or ""
            _, tasks = ref.implicit_tasks(repo, commit, folders, tasks_dir, field=f"{PACKAGE}.path", host=host)
    except ref.DatasetRefError as error:
        raise _refused(error) from error
    return _fetch_all(repo.name, tasks, root, PACKAGE)


def _task_folders(repo: ref.RepoRef, commit: str, tasks_dir: str, root: Path) -> list[str]:
    """The task folders under `tasks_dir`; the one fetch that lists them caches them too."""
    try:
        with git.Fetched(repo.git_url, commit) as fetched:
            folders = sorted(fetched.folders_with(tasks_dir, CONFIG))
            _, tasks = ref.implicit_tasks(repo, commit, folders, tasks_dir, field=f"{PACKAGE}.path", host="")
            fetched.prefetch(task.path for task in tasks)
            for task in tasks:
                _cache_task(fetched, task, root / "git-tasks" / ref.task_cache_key(task, commit))
            return folders
    except ref.DatasetRefError as error:
        raise _refused(error) from error
    except git.NoSuchFolder as error:
        raise InputError(f"{PACKAGE}.path", str(error)) from error
    except git.GitError as error:
        raise InputError(PACKAGE, str(error)) from error


def _read_repo_file(url: str, commit: str, path: str) -> str | None:
    try:
        with git.Fetched(url, commit) as fetched:
            data = fetched.read_file(path)
    except git.GitError as error:
        raise InputError(PACKAGE, str(error)) from error
    return data.decode("utf-8", errors="replace") if data is not None else None
