"""Output formats shared by buzzctl's read commands: ``-o table|json|yaml|csv``.

Tables are for people (rich, to the terminal); json/yaml/csv are for scripts and go to stdout
unadorned, so ``buzzctl … -o json | jq`` always parses.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable, Sequence
from enum import StrEnum
from typing import Annotated, Any

import typer
import yaml
from rich.console import Console

from buzz_operator.cli.exits import fail


class Format(StrEnum):
    TABLE = "table"
    JSON = "json"
    YAML = "yaml"
    CSV = "csv"


OutputOption = Annotated[
    Format, typer.Option("--output", "-o", help="table (for people), json, yaml or csv (for scripts).")
]


def console() -> Console:
    # soft_wrap off and a wide default: piped output must not be cut at 80 columns
    return Console(width=None if Console().is_terminal else 160)


def emit(
    document: Any,
    fmt: Format,
    *,
    table: Callable[[Console], None] | None = None,
    csv_rows: Sequence[Sequence[Any]] | None = None,
) -> None:
    if fmt is Format.JSON:
        typer.echo(json.dumps(document, indent=2, sort_keys=False))
    elif fmt is Format.YAML:
        typer.echo(yaml.safe_dump(document, sort_keys=False, allow_unicode=True).rstrip("\n"))
    elif fmt is Format.CSV:
        if csv_rows is None:
            fail("-o csv is not available for this command; use json or yaml")
        buffer = io.StringIO()
        csv.writer(buffer, lineterminator="\n").writerows(csv_rows)
        typer.echo(buffer.getvalue().rstrip("\n"))
    elif table is not None:
        table(console())
    else:
        typer.echo(yaml.safe_dump(document, sort_keys=False, allow_unicode=True).rstrip("\n"))
