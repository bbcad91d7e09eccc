"""Harbor's dataset references, resolved without any I/O: a `registry.json` (Harbor 0.25.0's
format, `harbor.models.registry.DatasetSpec` rows) and `name[@version]` in it, and a git
repository named `org/name[@ref]` (Harbor's `--repo` form, `registry/client/git_repo.py`).

What comes out is a list of `GitTask`s — a task folder at a path of a git origin — which the
edge (inputs/fetch/git_datasets.py) fetches and hands to the task loader like any other dataset.
Every refusal is a `DatasetRefError` naming the spec field and, for a name or version that is
not there, what is. Pure: imports nothing from kube, storage or the network.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any

from packaging.version import InvalidVersion, Version
from pydantic import BaseModel, ConfigDict, Field, ValidationError

# Harbor's _GIT_COMMIT_RE (tasks/client.py): a full sha1 or sha256 object name.
_COMMIT = re.compile(r"^[0-9a-fA-F]{40}$|^[0-9a-fA-F]{64}$")
DEFAULT_TASKS_DIR = "tasks"
REGISTRY_FILE = "registry.json"
# How many names an error lists before it says "and N more": a registry may hold hundreds.
_LISTED = 20


class DatasetRefError(ValueError):
    """A dataset reference that cannot be resolved; ``field`` is the spec field to change."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


class _Row(BaseModel):
    model_config = ConfigDict(extra="ignore")


class RegistryTask(_Row):
    """Harbor's RegistryTaskId: a task folder at `path` of `git_url` at `git_commit_id`."""

    name: str
    git_url: str | None = None
    git_commit_id: str | None = None
    path: str


class RegistryDatasetSpec(_Row):
    """Harbor's DatasetSpec: one version of one dataset."""

    name: str
    version: str
    description: str
    tasks: list[RegistryTask]
    metrics: list[dict[str, Any]] = Field(default_factory=list)


@dataclass(frozen=True)
class GitTask:
    """One task to fetch: the folder `path` of `git_url` at `commit` (None: the remote's HEAD,
    as Harbor fetches a registry task without `git_commit_id`). `source` is what Harbor records
    as the task's source (its evals key)."""

    git_url: str
    commit: str | None
    path: str
    source: str

    @property
    def name(self) -> str:
        """The task's name, as Harbor's GitTaskId.get_name(): the folder's last segment."""
        return PurePosixPath(self.path).name

    def harbor_task(self) -> dict[str, Any]:
        """Harbor's TaskConfig of this git task, as its registry and repo clients write it."""
        return {"path": self.path, "git_url": self.git_url, "git_commit_id": self.commit, "source": self.source}


@dataclass(frozen=True)
class RepoRef:
    """A repository named `org/name[@ref]`: its clone URL and the ref (None: HEAD)."""

    org: str
    name: str
    git_url: str
    ref: str | None

    @property
    def pinned(self) -> str | None:
        """The ref when it is already a commit (no ls-remote needed), as Harbor's resolved_sha."""
        return self.ref if is_commit(self.ref) else None


def is_commit(ref: str | None) -> bool:
    return bool(ref and _COMMIT.fullmatch(ref))


def _listing(names: Sequence[str]) -> str:
    shown = ", ".join(names[:_LISTED])
    return shown + (f" and {len(names) - _LISTED} more" if len(names) > _LISTED else "")


def parse_registry(text: str | bytes, *, field: str, origin: str) -> list[RegistryDatasetSpec]:
    """A registry.json: a JSON list of DatasetSpec rows (Harbor's Registry.from_url/from_path)."""
    try:
        rows = json.loads(text)
    except (ValueError, UnicodeDecodeError) as error:
        raise DatasetRefError(field, f"{origin} is not JSON: {error}") from error
    if not isinstance(rows, list):
        raise DatasetRefError(field, f"{origin} is not a registry.json (a JSON list of datasets, Harbor's "
                                     f"DatasetSpec), it is a JSON {type(rows).__name__}")
    specs = []
    for index, row in enumerate(rows):
        try:
            specs.append(RegistryDatasetSpec.model_validate(row))
        except ValidationError as error:
            problems = "; ".join(f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in error.errors())
            raise DatasetRefError(field, f"{origin}: dataset [{index}]: {problems}") from error
    return specs


def split_version(reference: str) -> tuple[str, str | None]:
    """`name@version` → (name, version); `name` → (name, None). Harbor splits at the first '@'."""
    name, at, version = reference.partition("@")
    return name, (version if at else None)


def resolve_version(versions: Sequence[str]) -> str:
    """Harbor's base.resolve_version: "head" if present, else the highest PEP 440 version, else
    the lexically last."""
    if "head" in versions:
        return "head"
    parsed = []
    for version in versions:
        with contextlib.suppress(InvalidVersion):  # not PEP 440: only the lexical order ranks it
            parsed.append((Version(version), version))
    if parsed:
        return max(parsed)[1]
    return sorted(versions)[-1]


def select_dataset(specs: Sequence[RegistryDatasetSpec], reference: str, *, field: str,
                   origin: str) -> RegistryDatasetSpec:
    """The dataset `name[@version]` of a registry, or a refusal naming what it holds."""
    name, version = split_version(reference)
    matching = [spec for spec in specs if spec.name == name]
    if not matching:
        available = sorted({spec.name for spec in specs})
        raise DatasetRefError(field, f"no dataset {name!r} in {origin}; it has: {_listing(available) or 'none'}")
    if version is None:
        version = resolve_version([spec.version for spec in matching])
    for spec in matching:
        if spec.version == version:
            return spec
    versions = sorted(spec.version for spec in matching)
    raise DatasetRefError(field, f"dataset {name!r} has no version {version!r} in {origin}; "
                                 f"its versions: {_listing(versions)}")


def normalize_task_path(path: str, *, field: str) -> str:
    """Harbor's normalize_git_task_path: relative, `..` folded, never above the repository."""
    pure = PurePosixPath(path)
    if pure.is_absolute() or "\\" in path:
        raise DatasetRefError(field, f"task path {path!r} must be relative to its repository")
    parts: list[str] = []
    for part in pure.parts:
        if part == "..":
            if not parts:
                raise DatasetRefError(field, f"task path {path!r} leaves its repository")
            parts.pop()
        elif part != ".":
            parts.append(part)
    if not parts:
        raise DatasetRefError(field, f"task path {path!r} names no folder")
    return "/".join(parts)


def registry_tasks(spec: RegistryDatasetSpec, *, field: str, source: str,
                   default_url: str | None = None, default_commit: str | None = None) -> list[GitTask]:
    """The git tasks of a dataset version. In a repository's registry.json a task without
    `git_url` or `git_commit_id` takes the repository's (Harbor's repo client does). In a
    registry.json of its own a task without `git_url` is a local path for Harbor's JSON client,
    which nothing here can reach, so that is refused."""
    tasks = []
    for task in spec.tasks:
        url = task.git_url or default_url
        if url is None:
            raise DatasetRefError(field, f"task {task.name!r} of {spec.name}@{spec.version} has no git_url: a "
                                         "registry task is fetched from its git origin (local paths are not "
                                         "reachable from the operator)")
        commit = task.git_commit_id or default_commit
        tasks.append(GitTask(url, commit, normalize_task_path(task.path, field=field), source))
    return unique_names(tasks, field=field)


def unique_names(tasks: Sequence[GitTask], *, field: str) -> list[GitTask]:
    """Tasks are named by their folder; two folders of one name would be one task here."""
    seen: dict[str, GitTask] = {}
    for task in tasks:
        if (other := seen.get(task.name)) is not None and other != task:
            raise DatasetRefError(field, f"two tasks are named {task.name!r} ({other.git_url} {other.path} and "
                                         f"{task.git_url} {task.path}); task names must be unique")
        seen[task.name] = task
    return sorted(seen.values(), key=lambda t: t.name)


def parse_package(reference: str, git_base: str, *, field: str) -> RepoRef:
    """`org/name[@ref]` as Harbor's resolve_repo_source reads it, with `git_base` in place of
    https://github.com. A Harbor Hub content hash (`@sha256:…`) names a package in Harbor's
    hosted database, which the operator cannot reach: refused as such."""
    base, ref = reference, None
    at = reference.rfind("@")
    if at > 0:
        base, ref = reference[:at], reference[at + 1:]
        if not ref:
            raise DatasetRefError(field, f"{reference!r}: empty ref after '@'")
        if ref.startswith("sha256:") or "/" in ref or ":" in ref:
            raise DatasetRefError(field, f"{reference!r}: ref {ref!r} is not a git branch, tag or commit. Harbor "
                                         "Hub packages (content-hash refs) live in Harbor's hosted registry, "
                                         "which the operator does not use; name a git repository as org/name"
                                         "[@branch|tag|commit] with spec.dataset.package.gitBase")
    parts = [part for part in base.split("/") if part]
    if len(parts) != 2 or not all(re.fullmatch(r"[A-Za-z0-9_.-]+", p) and p not in (".", "..") for p in parts):
        raise DatasetRefError(field, f"{reference!r} is not org/name[@ref]")
    org, name = parts[0], parts[1].removesuffix(".git")
    return RepoRef(org, name, f"{git_base.rstrip('/')}/{org}/{name}.git", ref)


def select_ref(refs: Mapping[str, str], ref: str | None, *, field: str, git_url: str) -> str:
    """The commit a ref names on the remote (Harbor's select_ls_remote_sha over ls-remote):
    exact name, then refs/heads/, refs/tags/, refs/; then a suffix match. None: HEAD."""
    wanted = ref or "HEAD"
    for target in (wanted, f"refs/heads/{wanted}", f"refs/tags/{wanted}", f"refs/{wanted}"):
        # an annotated tag peels to its commit (ls-remote's `^{}` line)
        if (sha := refs.get(f"{target}^{{}}") or refs.get(target)) is not None:
            return sha
    for name, sha in sorted(refs.items()):
        if name.endswith(f"/{wanted}") and not name.startswith("refs/for/"):
            return sha
    branches = sorted(n.removeprefix("refs/heads/") for n in refs if n.startswith("refs/heads/"))
    tags = sorted(n.removeprefix("refs/tags/") for n in refs if n.startswith("refs/tags/") and not n.endswith("^{}"))
    raise DatasetRefError(field, f"{git_url} has no ref {wanted!r}; branches: {_listing(branches) or 'none'}; "
                                 f"tags: {_listing(tags) or 'none'}")


def implicit_tasks(repo: RepoRef, commit: str, folders: Sequence[str], tasks_dir: str, *,
                   field: str, host: str) -> tuple[str, list[GitTask]]:
    """Harbor's implicit repo dataset: every folder directly under `tasks_dir` holding a
    task.toml. Returns Harbor's dataset name for it (`host/org/name/tree/<sha>/<dir>`) and the tasks."""
    if not folders:
        raise DatasetRefError(field, f"no task folders (with a task.toml) under {tasks_dir!r} of {repo.git_url} "
                                     f"at {commit}")
    source = f"{host}/{repo.org}/{repo.name}/tree/{commit}/{tasks_dir}"
    prefix = "" if tasks_dir == "." else f"{tasks_dir}/"
    return source, [GitTask(repo.git_url, commit, f"{prefix}{folder}", source) for folder in sorted(folders)]


def task_cache_key(task: GitTask, commit: str) -> str:
    """The cache key of a fetched task folder: a commit names its whole tree, so the commit
    and the path inside it name the folder's content, whichever URL served it."""
    return hashlib.sha256(f"{commit}\0{task.path}".encode()).hexdigest()[:24]
