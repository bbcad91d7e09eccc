"""buzzctl's help renders each docstring paragraph as written: the source's hand line breaks are
not kept as hard breaks for the terminal to wrap again mid-sentence (cli/exits.py HELP_MARKUP)."""

from __future__ import annotations

import inspect
from collections.abc import Iterator

import click
import pytest
import typer
from buzz_operator.cli.main import app
from typer.testing import CliRunner


def commands(group: click.Command, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], click.Command]]:
    yield path, group
    for name, sub in getattr(group, "commands", {}).items():
        yield from commands(sub, (*path, name))


ALL = list(commands(typer.main.get_command(app)))


@pytest.mark.parametrize(("path", "command"), ALL, ids=[" ".join(p) or "buzzctl" for p, _ in ALL])
def test_each_help_paragraph_reads_on_one_line_when_the_terminal_is_wide(path: tuple[str, ...],
                                                                        command: click.Command) -> None:
    # markdown shows `code` without its backticks
    paragraphs = [" ".join(p.replace("`", "").split())
                  for p in inspect.cleandoc(command.help or "").split("\n\n") if p.strip()]
    shown = CliRunner().invoke(app, [*path, "--help"], env={"COLUMNS": "1000", "NO_COLOR": "1"}, terminal_width=1000)
    assert shown.exit_code == 0, shown.output
    lines = [" ".join(line.strip(" │").split()) for line in shown.output.splitlines()]
    for paragraph in paragraphs:
        assert paragraph in lines, (paragraph, shown.output)


GROUPS = [(path, command) for path, command in ALL if getattr(command, "commands", None)]


@pytest.mark.parametrize(("path", "group"), GROUPS, ids=[" ".join(p) or "buzzctl" for p, _ in GROUPS])
def test_a_groups_command_list_shows_each_first_paragraph_whole(path: tuple[str, ...], group: click.Group) -> None:
    shown = CliRunner().invoke(app, [*path, "--help"], env={"COLUMNS": "1000", "NO_COLOR": "1"}, terminal_width=1000)
    assert shown.exit_code == 0, shown.output
    lines = [" ".join(line.strip(" │").split()) for line in shown.output.splitlines()]
    for name, command in group.commands.items():
        if command.hidden:  # an old name kept working, unlisted
            continue
        first = " ".join(inspect.cleandoc(command.help or "").split("\n\n")[0].replace("`", "").split())
        assert any(line.startswith(name) and line.endswith(first) for line in lines), (name, first, shown.output)
