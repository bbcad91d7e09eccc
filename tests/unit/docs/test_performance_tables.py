"""docs/performance.md keeps one dated table per measurement (issue: its prose and tables once
disagreed on which run a figure came from): every table says, in its header row or in the prose
between it and the table or heading before it, the date of the run it holds."""

from __future__ import annotations

import re
from pathlib import Path

DOC = Path(__file__).resolve().parents[3] / "docs" / "performance.md"
DATE = re.compile(r"\b20\d\d-\d\d-\d\d\b")


def undated_tables(text: str) -> list[str]:
    """The header rows of the tables no date introduces."""
    lines = text.splitlines()
    undated, lead = [], []
    for index, line in enumerate(lines):
        in_table = line.startswith("|")
        starts = in_table and (index == 0 or not lines[index - 1].startswith("|"))
        if starts and not DATE.search(" ".join([*lead, line])):
            undated.append(line)
        if in_table or line.startswith("#"):
            lead = [line] if line.startswith("#") else []
        else:
            lead.append(line)
    return undated


def test_every_measurement_table_is_dated() -> None:
    assert undated_tables(DOC.read_text(encoding="utf-8")) == []


def test_the_check_finds_an_undated_table() -> None:
    text = "## Figures (2026-12-03)\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\nThen, later:\n\n| c | d |\n|---|---|\n"
    assert undated_tables(text) == ["| c | d |"]
