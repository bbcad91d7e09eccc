"""The cost–accuracy front (results/front.py, docs/statistics.md#the-cost-accuracy-front): which
conditions no other beats on both pass rate and metered cost, by the floor and by the ceiling,
by hand; in the comparison document and its page."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from buzz_operator.results import comparison_document, side
from buzz_operator.results.compare_report import comparison_section
from buzz_operator.results.front import front_document

from tests.unit.results.worked_example import baseline, candidate


def _sweep(name: str, estimate: float, floor: float, ceiling: float, low: float = 0.0, high: float = 1.0) -> dict:
    return {"sweep": name, "statistics": {"pass_rate": {"estimate": estimate, "low": low, "high": high},
                                          "cost_usd": {"per_trial": {"floor": floor, "ceiling": ceiling}}}}


def test_the_front_by_hand() -> None:
    front = {f["sweep"]: f for f in front_document([
        _sweep("cheap", 0.4, 0.01, 0.01),
        _sweep("strong", 0.8, 0.05, 0.06, low=0.75, high=0.95),
        # dearer and weaker than strong by both bounds
        _sweep("worse", 0.7, 0.07, 0.08),
        # cheaper than strong by the floor, dearer by the ceiling: its cost's uncertainty decides
        _sweep("uncertain", 0.8, 0.04, 0.09),
        # as good as strong, exactly as dear: neither dominates the other
        _sweep("twin", 0.8, 0.05, 0.06, low=0.75),
        {"sweep": "empty", "statistics": {"pass_rate": None, "cost_usd": {"per_trial": {"floor": None, "ceiling": None}}}},
    ])}
    assert "empty" not in front
    assert front["cheap"]["on_front"] == {"floor": True, "ceiling": True}
    assert front["worse"]["on_front"] == {"floor": False, "ceiling": False}
    # both dominators' intervals lie above its 0.7: dominated beyond the intervals too
    assert front["worse"]["dominated_by"] == ["strong", "twin"] and front["worse"]["within_interval"] is False
    assert front["uncertain"]["on_front"] == {"floor": True, "ceiling": False}
    assert front["uncertain"]["dominated_by"] == ["strong", "twin"]
    # strong is dominated by uncertain by the floor (0.04 < 0.05 at the same rate), not by the ceiling
    assert front["strong"]["on_front"] == {"floor": False, "ceiling": True}
    assert front["twin"]["on_front"] == front["strong"]["on_front"]
    # sorted by the floor's cost
    assert [f["sweep"] for f in front_document([_sweep("b", 0.5, 0.2, 0.2), _sweep("a", 0.5, 0.1, 0.1)])] == ["a", "b"]


def test_a_dominator_whose_interval_reaches_below_says_so() -> None:
    [weak, strong] = front_document([_sweep("weak", 0.5, 0.02, 0.02), _sweep("strong", 0.6, 0.01, 0.01, low=0.3)])[::-1]
    assert weak["dominated_by"] == ["strong"] and weak["within_interval"] is True
    assert strong["dominated_by"] == [] and strong["within_interval"] is False


def test_the_worked_example_front_on_its_page() -> None:
    # the baseline passes everything at $0.010 (ceiling $0.012); the candidate half at $0.008:
    # cheaper and weaker, so both are on the front (docs/statistics.md#worked-example)
    document = comparison_document([side(baseline(), "file:///b"), side(candidate(), "file:///b")])
    assert [(f["sweep"], f["on_front"]["floor"], f["on_front"]["ceiling"]) for f in document["front"]] == [
        ("demo-naive", True, True), ("demo-oracle", True, True)]
    html = comparison_section(document)
    assert "<table id=front>" in html and "<h3>The cost–accuracy front</h3>" in html
    svg = ET.fromstring(html[html.index("<svg id='cost-vs-pass'"):html.index("</svg>", html.index("cost-vs-pass")) + 6])
    [line] = svg.findall("{http://www.w3.org/2000/svg}polyline")
    assert len(line.get("points").split()) == 3  # two members: across, then up
