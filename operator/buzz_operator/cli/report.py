"""buzzctl report NAME [NAME...] --html FILE — the sweep as one self-contained HTML page
(results/report.py), from the bundles in storage alone; of several sweeps, the page opens with
their comparison (each later sweep against the first, as ``buzzctl compare``)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Annotated, Any

import typer

from buzz_operator.cli.compare import ResamplesOption, SeedOption, document_of, load, resampling_of
from buzz_operator.cli.exits import fail
from buzz_operator.cli.options import NamespaceOption
from buzz_operator.cli.stores import StoreOption
from buzz_operator.cli.sweep_results import LoadedSweep, load_results_table
from buzz_operator.results import (
    Resampling,
    caveats,
    render_comparison_report,
    render_report,
    results_document,
)


async def _load_all(names: list[str], store: str | None, namespace: str) -> list[LoadedSweep]:
    return [await load_results_table(name, store, namespace) for name in names]


def _loaded(
    names: list[str], store: str | None, namespace: str, resampling: Resampling
) -> tuple[list[LoadedSweep], dict[str, Any] | None]:
    """The sweeps, and their comparison when there are several (each read once)."""
    if len(names) == 1:
        return asyncio.run(_load_all(names, store, namespace)), None
    pairs = asyncio.run(load(names, store, namespace))
    return [loaded for loaded, _ in pairs], document_of([s for _, s in pairs], resampling)


def report(
    names: Annotated[
        list[str],
        typer.Argument(
            metavar="NAME [NAME...]", help="The sweep (several: compared with the first).", show_default=False
        ),
    ],
    html: Annotated[Path, typer.Option("--html", help="The HTML file to write.")],
    store: StoreOption = None,
    namespace: NamespaceOption = "default",
    seed: SeedOption = 0,
    resamples: ResamplesOption = 2000,
) -> None:
    """One self-contained HTML page: the results table, each condition's statistics with their
    intervals, reward and cost per condition as charts, and per-trial rows linking to their
    bundles. Of several sweeps, the comparison first: differences with intervals and p-values,
    a forest plot, cost against pass rate."""
    resampling = resampling_of(seed, resamples)
    loaded, comparison = _loaded(names, store, namespace, resampling)
    documents = [
        results_document(s.table, s.store_url, with_trials=True, resampling=resampling) for s in loaded
    ]
    notes = [caveats(s.table.rows) for s in loaded]
    page = (
        render_comparison_report(documents, notes, comparison)
        if comparison is not None
        else render_report(documents[0], notes[0])
    )
    try:
        html.parent.mkdir(parents=True, exist_ok=True)
        html.write_text(page, encoding="utf-8")
    except OSError as error:
        fail(f"--html: cannot write {html}: {error.strerror or error}")
    trials = sum(len(s.table.trials) for s in loaded)
    what = f"sweep {names[0]}" if len(names) == 1 else f"sweeps {', '.join(names)} (compared with {names[0]})"
    typer.echo(f"report for {what}: {html} ({trials} trials, {len(page) // 1024} KiB)")
