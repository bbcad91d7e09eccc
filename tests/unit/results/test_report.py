"""The HTML report is one self-contained page: plotly inline, summary, charts, trial links."""

from __future__ import annotations

import re

from buzz_operator.results import caveats, render_report, results_document, tabulate_sweep
from buzz_operator.results.table import ResultsTable


def test_report_is_self_contained(mixed: ResultsTable) -> None:
    page = render_report(results_document(mixed, "file:///b", with_trials=True), caveats(mixed.rows))
    assert page.startswith("<!DOCTYPE html>")
    assert not re.search(r"<script[^>]+src=", page) and "<link" not in page  # nothing fetched
    assert "Plotly.newPlot" in page and 'id="reward-chart"' in page and 'id="cost-chart"' in page
    assert page.count('<a href="file:///b/mixed/') == 7
    assert "VERIFIER-BROKEN×1" in page and "not committed a result yet" in page
    # what the box did, beside the pass rate: each rate over its interval
    assert "<th>infra</th><th>pressure</th><th>retried</th>" in page
    assert "<td>0.00<br><small>[0.00, 0.00]</small></td>" in page


def test_report_escapes_text(mixed: ResultsTable) -> None:
    document = results_document(mixed, "file:///b", with_trials=True)
    document["sweep"] = "<script>alert(1)</script>"
    assert "<script>alert(1)</script>" not in render_report(document)


def test_empty_sweep_report() -> None:
    page = render_report(results_document(tabulate_sweep("e", {}), "file:///b", with_trials=True))
    assert "No committed trials yet" in page and "Plotly.newPlot" not in page
