"""The comparison's two plots as inline SVG, written here rather than by a plotting library: a
forest plot of differences with their intervals, and cost per trial against pass rate per
condition. SVG text is the whole chart — it prints, mails and diffs, and needs no script."""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Any

_FONT = "font-family='system-ui,sans-serif' font-size='12'"
_INK, _MUTED, _GOOD, _BAD = "#1d2433", "#8a93a6", "#1e7b34", "#b3261e"
MIN_SPAN = 0.1
MIN_COST_AXIS = 0.01


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


def _ticks(low: float, high: float, count: int = 5) -> list[float]:
    step = (high - low) / (count - 1)
    return [low + i * step for i in range(count)]


@dataclass(frozen=True)
class ForestRow:
    label: str
    estimate: float
    low: float
    high: float


def forest_svg(rows: Sequence[ForestRow], title: str, svg_id: str = "forest") -> str:
    """One row per difference: its interval as a line, the estimate as a square, on a shared
    axis with zero marked. Green when the whole interval is above zero, red when below."""
    left, width, row_h, top = 230, 360, 24, 40
    # symmetric about zero, a little wider than the widest interval; never narrower than ±0.1, so
    # a comparison with no difference anywhere still draws a readable axis
    span = max([0.0, *(max(abs(r.low), abs(r.high)) for r in rows)])
    limit = min(1.0, max(MIN_SPAN, span * 1.15))

    def x(value: float) -> float:
        return left + (value + limit) / (2 * limit) * width

    height = top + row_h * len(rows) + 40
    parts = [
        f"<svg id='{_e(svg_id)}' xmlns='http://www.w3.org/2000/svg' width='{left + width + 30}' "
        f"height='{height}' role='img' aria-label='{_e(title)}' {_FONT}>",
        f"<text x='10' y='20' font-weight='600' fill='{_INK}'>{_e(title)}</text>",
        f"<line x1='{x(0):.1f}' y1='{top - 8}' x2='{x(0):.1f}' y2='{height - 32}' stroke='{_MUTED}' "
        "stroke-dasharray='4 3'/>",
    ]
    for i, row in enumerate(rows):
        y = top + i * row_h + row_h / 2
        colour = _GOOD if row.low > 0 else _BAD if row.high < 0 else _INK
        parts += [
            f"<g class='row'><text x='{left - 10}' y='{y + 4:.1f}' text-anchor='end' fill='{_INK}'>{_e(row.label)}</text>",
            f"<line x1='{x(row.low):.1f}' y1='{y:.1f}' x2='{x(row.high):.1f}' y2='{y:.1f}' stroke='{colour}' "
            "stroke-width='2'/>",
            f"<rect x='{x(row.estimate) - 4:.1f}' y='{y - 4:.1f}' width='8' height='8' fill='{colour}'>"
            f"<title>{_e(row.label)}: {row.estimate:+.3f} [{row.low:+.3f}, {row.high:+.3f}]</title></rect></g>",
        ]
    axis = height - 30
    parts.append(f"<line x1='{left}' y1='{axis}' x2='{left + width}' y2='{axis}' stroke='{_MUTED}'/>")
    for tick in _ticks(-limit, limit):
        parts.append(
            f"<text x='{x(tick):.1f}' y='{axis + 16}' text-anchor='middle' fill='{_MUTED}'>{tick:+.2f}</text>"
        )
    parts.append("</svg>")
    return "".join(parts)


@dataclass(frozen=True)
class CostPoint:
    label: str
    cost: float  # USD per trial (floor)
    estimate: float
    low: float
    high: float
    ceiling: float | None = None  # USD per trial (ceiling); None draws the floor alone
    on_front: bool = False  # on the floor's cost-accuracy front (front.py)


def scatter_svg(points: Sequence[CostPoint], title: str, svg_id: str = "cost-vs-pass") -> str:
    """Each condition at (cost per trial, pass rate): the pass rate's interval as a vertical bar,
    the cost's floor–ceiling as a horizontal one; the conditions on the floor's front filled and
    joined by the front's steps (front.py), the dominated ones hollow."""
    left, width, top, plot_h = 60, 420, 40, 240
    # free conditions (the stand-ins bill nothing) still get an axis: one cent wide
    most = max([0.0, *(max(p.cost, p.ceiling or 0.0) for p in points)]) * 1.15 or MIN_COST_AXIS

    def x(cost: float) -> float:
        return left + cost / most * width

    def y(rate: float) -> float:
        return top + (1 - rate) * plot_h

    parts = [
        f"<svg id='{_e(svg_id)}' xmlns='http://www.w3.org/2000/svg' width='{left + width + 180}' "
        f"height='{top + plot_h + 50}' role='img' aria-label='{_e(title)}' {_FONT}>",
        f"<text x='10' y='20' font-weight='600' fill='{_INK}'>{_e(title)}</text>",
        f"<line x1='{left}' y1='{y(0)}' x2='{left + width}' y2='{y(0)}' stroke='{_MUTED}'/>",
        f"<line x1='{left}' y1='{y(0)}' x2='{left}' y2='{y(1)}' stroke='{_MUTED}'/>",
        f"<text x='{left + width / 2}' y='{top + plot_h + 40}' text-anchor='middle' fill='{_MUTED}'>"
        "USD per trial (floor – ceiling)</text>",
    ]
    for tick in _ticks(0, 1):
        parts.append(
            f"<text x='{left - 8}' y='{y(tick) + 4:.1f}' text-anchor='end' fill='{_MUTED}'>{tick:.2f}</text>"
        )
    for tick in _ticks(0, most):
        parts.append(
            f"<text x='{x(tick):.1f}' y='{y(0) + 16:.1f}' text-anchor='middle' fill='{_MUTED}'>{tick:.4f}</text>"
        )
    front = sorted((p for p in points if p.on_front), key=lambda p: (p.cost, p.estimate))
    if len(front) > 1:
        # the front's staircase: from each member across to the next one's cost, then up to it
        steps = [f"{x(front[0].cost):.1f},{y(front[0].estimate):.1f}"]
        for a, b in pairwise(front):
            steps += [f"{x(b.cost):.1f},{y(a.estimate):.1f}", f"{x(b.cost):.1f},{y(b.estimate):.1f}"]
        parts.append(f"<polyline class='front' points='{' '.join(steps)}' fill='none' stroke='{_GOOD}' "
                     "stroke-dasharray='4 3'/>")
    for p in points:
        ceiling = p.cost if p.ceiling is None else p.ceiling
        fill = _GOOD if p.on_front else "white"
        stroke = _GOOD if p.on_front else _INK
        where = "on the front" if p.on_front else "dominated"
        parts += [
            f"<g class='point'><line x1='{x(p.cost):.1f}' y1='{y(p.low):.1f}' x2='{x(p.cost):.1f}' "
            f"y2='{y(p.high):.1f}' stroke='{_INK}' stroke-width='2'/>",
            f"<line x1='{x(p.cost):.1f}' y1='{y(p.estimate):.1f}' x2='{x(ceiling):.1f}' y2='{y(p.estimate):.1f}' "
            f"stroke='{_INK}' stroke-width='2'/>",
            f"<circle cx='{x(p.cost):.1f}' cy='{y(p.estimate):.1f}' r='5' fill='{fill}' stroke='{stroke}' "
            f"stroke-width='2'><title>{_e(p.label)}: ${p.cost:.4f}–${ceiling:.4f}/trial, pass {p.estimate:.3f} "
            f"[{p.low:.3f}, {p.high:.3f}], {where}</title></circle>",
            f"<text x='{x(p.cost) + 9:.1f}' y='{y(p.estimate) + 4:.1f}' fill='{_INK}'>{_e(p.label)}</text></g>",
        ]
    parts.append("</svg>")
    return "".join(parts)


def forest_rows(pair: Mapping[str, Any]) -> list[ForestRow]:
    """The pass rate's difference first, then each verifier dimension's, from a comparison pair."""
    overall = pair["pass_rate"]["difference"]
    rows = [ForestRow("pass rate", overall["estimate"], overall["low"], overall["high"])]
    for d in pair["dimensions"]:
        diff = d["difference"]
        rows.append(ForestRow(d["dimension"], diff["estimate"], diff["low"], diff["high"]))
    return rows
