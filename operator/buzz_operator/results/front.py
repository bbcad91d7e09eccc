"""The cost–accuracy front across the sweeps of a comparison (docs/statistics.md#the-cost-accuracy-front):
each condition's pass rate against its metered cost per trial, and which conditions no other
beats on both. Pure.

The cost is the receipts' (docs/accounting.md), as floor and ceiling, so the front is built from
what was metered, not from a price list. Two bounds make two fronts: a condition is on the
floor's front when no other condition costs at most as much by the floor and passes at least
as often, one of the two strictly; likewise by the ceiling. Where the two differ the cost's
uncertainty decides, and the document says so by giving both. Dominance is judged on the
estimates; the intervals are beside them, and a condition whose pass-rate interval overlaps its
dominator's is dominated by the estimates only (`within_interval`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

BOUNDS = ("floor", "ceiling")


@dataclass(frozen=True, slots=True)
class Condition:
    """One sweep's place on the plane: its pass rate (estimate and interval) and cost per trial."""

    sweep: str
    estimate: float
    low: float
    high: float
    cost: Mapping[str, float]  # "floor" and "ceiling", USD per trial


def conditions(sweeps: Sequence[Mapping[str, Any]]) -> list[Condition]:
    """The comparison document's sweeps that have a pass rate and a cost (a sweep with nothing
    scored has neither and is not on the plane)."""
    out = []
    for s in sweeps:
        st = s["statistics"]
        per = st["cost_usd"]["per_trial"]
        if st["pass_rate"] is None or per["floor"] is None or per["ceiling"] is None:
            continue
        out.append(Condition(s["sweep"], st["pass_rate"]["estimate"], st["pass_rate"]["low"],
                             st["pass_rate"]["high"], {"floor": per["floor"], "ceiling": per["ceiling"]}))
    return out


def _dominates(a: Condition, b: Condition, bound: str) -> bool:
    cheaper, better = a.cost[bound] <= b.cost[bound], a.estimate >= b.estimate
    return cheaper and better and (a.cost[bound] < b.cost[bound] or a.estimate > b.estimate)


def front_document(sweeps: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Per condition on the plane: its figures, whether it is on each bound's front and which
    conditions dominate it (by the ceiling, the bound that charges every condition its most),
    sorted by the floor's cost."""
    placed = conditions(sweeps)
    out = []
    for c in sorted(placed, key=lambda c: (c.cost["floor"], -c.estimate, c.sweep)):
        dominators = [o for o in placed if o is not c and _dominates(o, c, "ceiling")]
        out.append({
            "sweep": c.sweep,
            "pass_rate": {"estimate": c.estimate, "low": c.low, "high": c.high},
            "cost_usd_per_trial": dict(c.cost),
            "on_front": {bound: not any(_dominates(o, c, bound) for o in placed if o is not c) for bound in BOUNDS},
            "dominated_by": [o.sweep for o in dominators],
            # dominated by the estimates, yet a dominator's interval reaches below its estimate
            "within_interval": bool(dominators) and all(o.low <= c.estimate for o in dominators),
        })
    return out
