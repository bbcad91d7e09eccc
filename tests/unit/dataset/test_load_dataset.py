"""load_dataset: a directory of task directories, selected by name globs, sorted by name."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from buzz_operator.dataset import TaskError, load_dataset

from tests.unit.dataset.task_factory import make_task

NAMES = ("cobol-modernize", "build-linux", "reply-to-thread", "cobol-legacy", "user-mention")


@pytest.fixture
def dataset(tmp_path: Path) -> Path:
    for name in NAMES:
        make_task(tmp_path, name)
    (tmp_path / ".git").mkdir()
    (tmp_path / "README.md").write_text("not a task\n")
    return tmp_path


def _names(path: Path, include: tuple[str, ...] = (), exclude: tuple[str, ...] = ()) -> list[str]:
    return [task.name for task in load_dataset(path, include=include, exclude=exclude)]


def test_all_tasks_sorted_and_non_tasks_skipped(dataset: Path) -> None:
    assert _names(dataset) == sorted(NAMES)


def test_include_globs(dataset: Path) -> None:
    assert _names(dataset, include=("cobol*",)) == ["cobol-legacy", "cobol-modernize"]
    assert _names(dataset, include=("cobol-l*", "user-*")) == ["cobol-legacy", "user-mention"]


def test_exclude_globs_win_over_include(dataset: Path) -> None:
    assert _names(dataset, exclude=("cobol*", "build-?inux")) == ["reply-to-thread", "user-mention"]
    assert _names(dataset, include=("cobol*",), exclude=("*legacy",)) == ["cobol-modernize"]


def test_globs_match_case_sensitively(dataset: Path) -> None:
    assert _names(dataset, include=("COBOL*",)) == []


def test_a_single_task_directory_is_a_dataset_of_one(dataset: Path) -> None:
    assert _names(dataset / "user-mention") == ["user-mention"]


def test_a_broken_selected_task_fails_the_load(dataset: Path) -> None:
    (dataset / "user-mention" / "instruction.md").unlink()
    with pytest.raises(TaskError, match=r"user-mention/instruction\.md"):
        load_dataset(dataset)
    # …but only when selected: excluded tasks are not read at all.
    assert "user-mention" not in _names(dataset, exclude=("user-*",))


def test_missing_dataset_directory(tmp_path: Path) -> None:
    with pytest.raises(TaskError, match="dataset directory does not exist"):
        load_dataset(tmp_path / "nowhere")


def test_dataset_room_stays_pure() -> None:
    # The rule of the house: dataset imports nothing from kube, kopf or the network.
    code = (
        "import sys, buzz_operator.dataset\n"
        "bad = [m for m in sys.modules if m.split('.')[0] in "
        "{'kopf', 'kubernetes_asyncio', 'kubernetes', 'websockets', 'asyncpg', 'obstore'}"
        " or m.startswith(('buzz_operator.kube', 'buzz_operator.relay', 'buzz_operator.storage'))]\n"
        "print(bad)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert done.stdout.strip() == "[]"
