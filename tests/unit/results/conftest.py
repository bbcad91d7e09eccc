"""Sweeps in a FileStore built with the project's own ledger and storage code (sweep_builder.py)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from buzz_operator.results import table_needs, tabulate_sweep
from buzz_operator.results.files import fallback_needs, split_trial_key
from buzz_operator.results.table import ResultsTable
from buzz_operator.storage import FileStore

from tests.unit.results.sweep_builder import MIXED, build_sweep


def read_sweep_files(
    root: Path, sweep: str, wanted=lambda p: table_needs(p) or fallback_needs(p)
) -> tuple[dict[str, dict[str, bytes]], dict]:
    """What the CLI fetches: the wanted files of every trial dir, read through the FileStore."""
    store = FileStore(root)

    async def run() -> dict[str, bytes]:
        return {key: await store.get(key) for key in await store.list(sweep)}

    trials: dict[str, dict[str, bytes]] = {}
    config: dict = {}
    for key, data in asyncio.run(run()).items():
        split = split_trial_key(key[len(sweep) + 1 :])
        if split is None:
            config = json.loads(data)
            continue
        trials.setdefault(split[0], {})
        if wanted(split[1]):
            trials[split[0]][split[1]] = data
    return trials, config


@pytest.fixture(scope="module")
def mixed_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("store")
    build_sweep(root, "mixed", MIXED, spec={"timeoutMultiplier": 2.0, "attempts": 3})
    return root


@pytest.fixture(scope="module")
def mixed(mixed_root: Path) -> ResultsTable:
    trials, config = read_sweep_files(mixed_root, "mixed")
    return tabulate_sweep("mixed", trials, config)
