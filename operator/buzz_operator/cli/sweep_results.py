"""The sweep's results table read from its store: shared by ``sweep results``, ``sweep export`` and
``report``, which all work after the cluster is gone."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from buzz_operator.cli.stores import load_sweep, store_for
from buzz_operator.results import ResultsTable, table_needs, tabulate_sweep
from buzz_operator.storage import ObjectStore


@dataclass(frozen=True)
class LoadedSweep:
    store: ObjectStore
    store_url: str
    table: ResultsTable
    trials: dict[str, dict[str, bytes]]
    config: dict[str, Any]


async def load_results_table(
    name: str, store_url: str | None, namespace: str, wanted: Callable[[str], bool] = table_needs
) -> LoadedSweep:
    if store_url is None:
        from buzz_operator.cli.cluster import sweep_store_url  # the Kubernetes client: only without --store

        store_url = await sweep_store_url(namespace, name)
    url = store_url
    store = store_for(url)
    trials, config = await load_sweep(store, name, wanted)
    return LoadedSweep(store, store.url, tabulate_sweep(name, trials, config), trials, config)
