"""buzzctl compare SWEEP_A SWEEP_B [...] — each later sweep paired by task against the first
(results/compare.py), from the bundles and lock.json in storage alone, as ``sweep results``."""

from __future__ import annotations

import asyncio
import json
from typing import Annotated, Any

import typer

from buzz_operator.cli.compare_table import render
from buzz_operator.cli.exits import fail
from buzz_operator.cli.options import NamespaceOption
from buzz_operator.cli.output import Format, OutputOption, emit
from buzz_operator.cli.stores import StoreOption, guarded
from buzz_operator.cli.sweep_results import LoadedSweep, load_results_table
from buzz_operator.results import COMPARE_SCHEMA, CompareError, Resampling, comparison_document, side
from buzz_operator.results.compare import Side
from buzz_operator.results.trial import load_json
from buzz_operator.storage import ObjectNotFound

LOCK = "lock.json"  # storage/layout.py LOCK, beside the sweep's config.json

SeedOption = Annotated[int, typer.Option("--seed", help="Seed of the bootstrap resamples.")]
ResamplesOption = Annotated[int, typer.Option("--resamples", help="Bootstrap resamples (>= 100).")]


async def read_lock(loaded: LoadedSweep, sweep: str) -> dict[str, Any]:
    """The sweep's lock.json (task and stack digests); {} when it has none (an earlier build)."""
    key = f"{sweep}/{LOCK}"

    async def get() -> bytes:
        try:
            return await loaded.store.get(key)
        except ObjectNotFound:
            return b""

    return load_json(await guarded(f"reading {loaded.store_url}/{key}", get()))


async def load(names: list[str], store: str | None, namespace: str) -> list[tuple[LoadedSweep, Side]]:
    """Each named sweep's results table and its side of the comparison; a sweep that is not one
    experiment (several condition rows) is a user error."""
    if len(names) < 2:
        fail("SWEEPS: compare needs at least two sweeps (the first is the baseline)")
    out = []
    for name in names:
        loaded = await load_results_table(name, store, namespace)
        try:
            out.append((loaded, side(loaded.table, loaded.store_url, await read_lock(loaded, name))))
        except CompareError as error:
            fail(str(error))
    return out


def document_of(sides: list[Side], resampling: Resampling) -> dict[str, Any]:
    """The comparison document; a refused pairing is a user error."""
    try:
        return comparison_document(sides, resampling)
    except CompareError as error:
        fail(str(error))


def resampling_of(seed: int, resamples: int) -> Resampling:
    try:
        return Resampling(resamples=resamples, seed=seed)
    except ValueError as error:
        fail(f"--resamples: {error}")


def compare(
    sweeps: Annotated[
        list[str] | None,
        typer.Argument(
            metavar="SWEEP_A SWEEP_B [...]",
            help="The baseline sweep, then the sweeps compared with it.",
            show_default=False,
        ),
    ] = None,
    output: OutputOption = Format.TABLE,
    store: StoreOption = None,
    namespace: NamespaceOption = "default",
    seed: SeedOption = 0,
    resamples: ResamplesOption = 2000,
    schema: Annotated[
        bool, typer.Option("--schema", help="Print the JSON Schema of -o json and exit.")
    ] = False,
) -> None:
    """Pair sweeps by task against the first: the difference in pass rate with its 95 % interval
    (paired bootstrap over tasks) and an exact sign-flip p-value, wins/losses/ties by task, the
    cost difference, and the same per verifier dimension (docs/statistics.md). Refuses sweeps
    whose task digests differ; warns when their stacks differ."""
    if schema:
        typer.echo(json.dumps(COMPARE_SCHEMA, indent=2))
        return
    resampling = resampling_of(seed, resamples)
    loaded = asyncio.run(load(list(sweeps or []), store, namespace))
    document = document_of([s for _, s in loaded], resampling)
    emit(document, output, table=lambda console: render(console, document))
