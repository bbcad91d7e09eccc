"""buzzctl ledger — price a trial's agent logs against its manifest (docs/accounting.md).

Output contract (others script against it): one JSON receipt per seat per line, sorted by seat id,
each exactly a ``receipts.jsonl`` row; then one line ``{"reconciled", "note", "warnings"}``.
Exit 0 success, 1 invalid input (one line on stderr naming the field or file), 2 usage.
"""

from __future__ import annotations

import json
from pathlib import Path

import typer

from buzz_operator.cli.exits import HELP_MARKUP
from buzz_operator.condition import ConditionError, ExperimentManifest, plan_seats
from buzz_operator.ledger import collect_accounting

app = typer.Typer(
    rich_markup_mode=HELP_MARKUP, no_args_is_help=True)


@app.command()
def price(
    manifest: Path = typer.Option(..., "--manifest", help="Team manifest (YAML or JSON)."),
    logs: Path = typer.Option(..., "--logs", help="Directory holding <seat>.stdout.log / <seat>.stderr.log."),
) -> None:
    """Price every seat of the manifest from its logs; a seat with no log is idle."""
    try:
        condition = ExperimentManifest.load(manifest)
    except ConditionError as error:
        _fail(str(error))
    if not logs.is_dir():
        _fail(f"--logs: not a directory: {logs}")
    seats = plan_seats(condition)
    accounting = collect_accounting(logs, seats, condition.prices)
    for receipt in sorted(accounting.receipts, key=lambda receipt: receipt.agent_id):
        typer.echo(receipt.to_line())
    typer.echo(json.dumps(accounting.verdict()))


def _fail(message: str) -> None:
    typer.echo(message, err=True)
    raise typer.Exit(1)


@app.callback()
def _group() -> None:
    """Token accounting: price agent logs."""
