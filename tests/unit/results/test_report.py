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
    # pass^k beside pass@k (docs/statistics.md#the-estimands): at k = 2 over the two tasks with
    # two scored attempts or more, hello-file (2 of 3 passed: C(2,2)/C(3,2) = 1/3) and
    # reply-to-thread (none) → 1/6; at k = 3 hello-file alone, which never passed three times
    assert "<th class=l>pass@k</th><th class=l>pass^k</th>" in page
    assert "<td class=l>^1=0.22 ^2=0.17 ^3=0.00</td>" in page


def test_report_escapes_text(mixed: ResultsTable) -> None:
    document = results_document(mixed, "file:///b", with_trials=True)
    document["sweep"] = "<script>alert(1)</script>"
    assert "<script>alert(1)</script>" not in render_report(document)


def test_empty_sweep_report() -> None:
    page = render_report(results_document(tabulate_sweep("e", {}), "file:///b", with_trials=True))
    assert "No committed trials yet" in page and "Plotly.newPlot" not in page
