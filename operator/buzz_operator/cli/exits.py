"""buzzctl's exit codes — an interface scripts depend on:

    0  ok
    1  user error: bad input, unknown sweep or trial, refused manifest (one line on stderr)
    2  the cluster or the object store could not be reached

The groups built on ``BuzzGroup`` also report a command-line usage error (missing argument,
unknown option) as 1, a user error, so that 2 always means "try again later".
"""

from __future__ import annotations

from typing import Any, NoReturn

import click
import typer
from typer.core import TyperGroup

try:  # newer typer vendors click as typer._click and raises its own UsageError
    from typer._click.exceptions import UsageError as _VendoredUsageError
except ImportError:  # pragma: no cover - typer with click as a dependency
    _VendoredUsageError = click.UsageError
USAGE_ERRORS = (click.UsageError, _VendoredUsageError)

OK = 0
USER_ERROR = 1
UNREACHABLE = 2

# Help texts are docstrings wrapped by hand at the source's width; in typer's default "rich" mode
# every hand line break stays and rich wraps again at the terminal's width, cutting sentences in
# two. Markdown joins a paragraph's lines and lets the terminal's width decide: the help reads
# as written, whatever the width.
HELP_MARKUP = "markdown"

EXIT_CODES_HELP = (
    "Exit codes: 0 ok; 1 user error (one line on stderr); 2 cluster or object store unreachable."
)


def fail(message: str) -> NoReturn:
    """A user error: one line on stderr, exit 1."""
    typer.echo(f"error: {' '.join(str(message).split())}", err=True)
    raise typer.Exit(USER_ERROR)


def unreachable(message: str) -> NoReturn:
    """The cluster or the store did not answer: one line on stderr, exit 2."""
    typer.echo(f"unreachable: {' '.join(str(message).split())}", err=True)
    raise typer.Exit(UNREACHABLE)


class BuzzGroup(TyperGroup):
    """A command group whose usage errors exit 1 (user error) instead of click's 2."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except USAGE_ERRORS as error:
            error.exit_code = USER_ERROR
            raise
