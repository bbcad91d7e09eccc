"""buzzctl report NAME --html FILE — the sweep as one self-contained HTML page (results/report.py),
from the bundles in storage alone."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Annotated

import typer

from buzz_operator.cli.exits import fail
from buzz_operator.cli.options import NamespaceOption
from buzz_operator.cli.stores import StoreOption
from buzz_operator.cli.sweep_results import load_summary
from buzz_operator.results import caveats, render_report, summary_document


def report(
    name: Annotated[str, typer.Argument(metavar="NAME", help="The sweep.", show_default=False)],
    html: Annotated[Path, typer.Option("--html", help="The HTML file to write.")],
    store: StoreOption = None,
    namespace: NamespaceOption = "default",
) -> None:
    """One self-contained HTML page: the summary table, reward and cost per condition as
    charts, and per-trial rows linking to their bundles."""
    loaded = asyncio.run(load_summary(name, store, namespace))
    document = summary_document(loaded.summary, loaded.store_url, with_trials=True)
    page = render_report(document, caveats(loaded.summary.rows))
    try:
        html.parent.mkdir(parents=True, exist_ok=True)
        html.write_text(page, encoding="utf-8")
    except OSError as error:
        fail(f"--html: cannot write {html}: {error.strerror or error}")
    typer.echo(
        f"report for sweep {name}: {html} ({len(loaded.summary.trials)} trials, {len(page) // 1024} KiB)"
    )
