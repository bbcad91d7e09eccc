"""The inline SVG plots are well-formed, place what they draw where the axes say, and escape text;
the report's statistics and comparison sections show the documents' figures."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from buzz_operator.results import comparison_document, render_report, results_document, side
from buzz_operator.results.compare_report import comparison_section
from buzz_operator.results.plots import CostPoint, ForestRow, forest_svg, scatter_svg

from tests.unit.results.worked_example import baseline, candidate

SVG = "{http://www.w3.org/2000/svg}"


def test_forest_places_intervals_on_a_symmetric_axis() -> None:
    svg = ET.fromstring(
        forest_svg([ForestRow("pass rate", -0.5, -0.875, -0.125), ForestRow("<b>", 0.0, 0.0, 0.0)], "t")
    )
    lines = svg.findall(f"{SVG}g/{SVG}line")
    # axis ±1.0 (0.875 × 1.15 capped at 1) over 360 px from x = 230: −0.875 → 230 + 0.125/2·360
    assert float(lines[0].get("x1")) == 230 + (1 - 0.875) / 2 * 360
    assert lines[0].get("stroke") == "#b3261e"  # the whole interval below zero: red
    labels = [t.text for t in svg.iter(f"{SVG}text")]
    assert "<b>" in labels  # escaped in the source, the label itself once parsed


def test_no_difference_still_draws_a_readable_axis() -> None:
    svg = ET.fromstring(forest_svg([ForestRow("pass rate", 0.0, 0.0, 0.0)], "t"))
    ticks = [t.text for t in svg.iter(f"{SVG}text")][-5:]
    assert ticks == ["-0.10", "-0.05", "+0.00", "+0.05", "+0.10"]


def test_scatter_of_free_conditions() -> None:
    svg = ET.fromstring(
        scatter_svg([CostPoint("a", 0.0, 0.5, 0.2, 0.8), CostPoint("b", 0.0, 1.0, 1.0, 1.0)], "t")
    )
    circles = svg.findall(f"{SVG}g/{SVG}circle")
    # y = 40 + (1 − rate) · 240
    assert [float(c.get("cy")) for c in circles] == [160.0, 40.0]
    assert {float(c.get("cx")) for c in circles} == {60.0}


def test_single_sweep_report_has_statistics_and_behaviours() -> None:
    page = render_report(results_document(candidate(), "file:///b", with_trials=True))
    assert "<table id=statistics>" in page and "<table id=behaviours>" in page
    assert "0.500 [0.125, 0.875]" in page  # the candidate's pass rate and interval (test_compare.py)


def test_comparison_section_shows_the_pair() -> None:
    document = comparison_document([side(baseline(), "file:///b"), side(candidate(), "file:///b")])
    html = comparison_section(document)
    assert "difference <b>-0.500 [-0.875, -0.125]</b>, p = 0.25" in html
    assert "tasks won/lost/tied: 0/3/1" in html
    assert html.count("<g class='row'>") == 1 + 4 and html.count("<g class='point'>") == 2
