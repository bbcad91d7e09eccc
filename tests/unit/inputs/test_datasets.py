"""Datasets from a ConfigMap or an object-store prefix become ordinary task directories."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

import pytest
from buzz_operator.dataset import load_dataset, load_task
from buzz_operator.inputs.errors import InputError
from buzz_operator.inputs.fetch.datasets import config_map_files, materialize_config_map, materialize_prefix
from buzz_operator.storage.file_store import FileStore

REPO = Path(__file__).resolve().parents[3]
TASK = REPO / "tasks" / "hello-file"


def _as_config_map(task_dir: Path) -> dict[str, str]:
    return {f"{task_dir.name}__" + "__".join(p.relative_to(task_dir).parts): p.read_text()
            for p in task_dir.rglob("*") if p.is_file() and "__pycache__" not in p.parts}


def test_config_map_keys_spell_paths_and_cannot_climb_out() -> None:
    assert config_map_files({"t__tests__test.sh": "x"}) == {"t/tests/test.sh": "x"}
    for bad in ("..__etc__passwd", "t____x", "__t"):
        with pytest.raises(InputError) as caught:
            config_map_files({bad: "x"})
        assert caught.value.field == "spec.dataset.configMapRef" and bad in str(caught.value)


def test_a_config_map_dataset_loads_with_the_same_digest_as_the_directory(tmp_path: Path) -> None:
    data = _as_config_map(TASK)
    root = materialize_config_map(data, tmp_path)
    [task] = load_dataset(root)
    assert task.name == "hello-file" and task.digest == load_task(TASK).digest
    assert materialize_config_map(data, tmp_path) == root  # content-addressed: written once


def test_an_object_store_prefix_is_downloaded_once_per_listing(tmp_path: Path) -> None:
    store = FileStore(tmp_path / "store")
    shutil.copytree(TASK, tmp_path / "store" / "datasets" / "mine" / "hello-file",
                    ignore=shutil.ignore_patterns("__pycache__"))
    first = asyncio.run(materialize_prefix(store, "datasets/mine", tmp_path / "cache"))
    [task] = load_dataset(first)
    assert task.digest == load_task(TASK).digest
    assert asyncio.run(materialize_prefix(store, "datasets/mine", tmp_path / "cache")) == first
    with pytest.raises(InputError) as caught:
        asyncio.run(materialize_prefix(store, "datasets/none", tmp_path / "cache"))
    assert caught.value.field == "spec.dataset.objectStore.prefix"
