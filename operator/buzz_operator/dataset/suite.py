"""A dataset: a directory whose subdirectories are tasks, filtered by name globs."""

from __future__ import annotations

import os
from collections.abc import Iterable
from fnmatch import fnmatchcase
from pathlib import Path

from buzz_operator.dataset.errors import TaskError
from buzz_operator.dataset.task import CONFIG, Task, load_task

TASKS_DIR_ENV = "BUZZ_TASKS_DIR"


def _selected(name: str, include: Iterable[str], exclude: Iterable[str]) -> bool:
    include = list(include)
    if include and not any(fnmatchcase(name, pattern) for pattern in include):
        return False
    return not any(fnmatchcase(name, pattern) for pattern in exclude)


def load_dataset(path: Path | str, include: Iterable[str] = (), exclude: Iterable[str] = ()) -> list[Task]:
    """Load the tasks under ``path`` whose names match ``include`` (all if empty) and no ``exclude``.

    ``path`` may also be a single task directory (like Harbor's `-p <task>`), which is a dataset
    of one. Hidden directories (.git, .pytest_cache) are not tasks. The result is sorted by name
    so trial planning is deterministic.
    """
    root = Path(path)
    if not root.is_dir():
        raise TaskError("dataset directory does not exist", source=root)
    include, exclude = tuple(include), tuple(exclude)
    if (root / CONFIG).is_file():
        candidates = [root]
    else:
        candidates = [child for child in root.iterdir() if child.is_dir() and not child.name.startswith(".")]
    # Globs match the folder name, as Harbor's task_names filter matches a local task's folder
    # (LocalTaskId.get_name), never `[task].name`.
    chosen = sorted((c for c in candidates if _selected(c.name, include, exclude)), key=lambda c: c.name)
    return [load_task(candidate) for candidate in chosen]


def builtin_dataset_path() -> Path:
    """The buzz-native suite shipped with buzz-operator.

    `BUZZ_TASKS_DIR` wins (the operator image copies tasks/ to /opt/buzz-operator/tasks and sets
    it); otherwise the repository checkout's tasks/, found relative to this package
    (operator/buzz_operator/dataset → ../../../tasks).
    """
    override = os.environ.get(TASKS_DIR_ENV)
    candidate = Path(override) if override else Path(__file__).resolve().parents[3] / "tasks"
    if not candidate.is_dir():
        origin = f"${TASKS_DIR_ENV}" if override else "the repository checkout"
        raise TaskError(f"built-in tasks directory not found (from {origin})", source=candidate)
    return candidate
