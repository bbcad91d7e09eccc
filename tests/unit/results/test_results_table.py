"""The results table buzzctl prints (cli/results_table.py): pass^k at the largest k over its
interval, beside pass@k (docs/statistics.md#the-estimands)."""

from __future__ import annotations

from buzz_operator.cli.results_table import render
from buzz_operator.results import results_document
from buzz_operator.results.table import ResultsTable
from rich.console import Console


def test_table_shows_pass_hat_k_at_the_largest_k_with_its_interval(mixed: ResultsTable) -> None:
    console = Console(record=True, width=240)
    document = results_document(mixed, "file:///b", with_trials=False)
    render(console, mixed, document)
    text = console.export_text()
    header = next(line for line in text.splitlines() if "pass@k" in line)
    assert "pass^k" in header and header.index("pass@k") < header.index("pass^k")
    [row] = document["conditions"]
    top = row["statistics"]["pass_hat_k"]["3"]
    assert "^3=0.00" in text and f"[{top['low']:.2f}, {top['high']:.2f}]" in text
