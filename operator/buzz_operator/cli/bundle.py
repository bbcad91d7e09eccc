"""buzzctl bundle — filled in by its room."""

import typer

app = typer.Typer(no_args_is_help=True)
