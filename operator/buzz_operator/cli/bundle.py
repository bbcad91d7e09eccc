"""buzzctl bundle — check a trial bundle for credential-shaped strings (docs/bundle.md#secret-scan).

``scan DIR`` prints ``{"clean", "findings", "review"}`` (findings name path, line and kind, never
the secret). Exit 0 when the scan ran (read ``clean``), 1 invalid input, 2 usage.
"""

from __future__ import annotations

import json
from pathlib import Path

import typer

from buzz_operator.cli.exits import HELP_MARKUP
from buzz_operator.ledger import scan_bundle

app = typer.Typer(
    rich_markup_mode=HELP_MARKUP, no_args_is_help=True)


@app.command()
def scan(bundle_dir: Path = typer.Argument(..., metavar="DIR", help="The trial's bundle directory.")) -> None:
    """Scan every .json/.jsonl/.log/.md/.txt/.yaml/.yml file under DIR."""
    if not bundle_dir.is_dir():
        typer.echo(f"DIR: not a directory: {bundle_dir}", err=True)
        raise typer.Exit(1)
    typer.echo(json.dumps(scan_bundle(bundle_dir).to_json()))


@app.callback()
def _group() -> None:
    """Trial bundles: scan for secrets."""
