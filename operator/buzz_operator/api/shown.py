"""Figures rounded for people: what `kubectl get buzzsweeps` / `buzztrials` print.

Status keeps the exact floats for machines (`costUSD.ceiling` 0.0008133400000000002 is what the
receipts add up to); a printer column cannot format a number, so the status also carries these
strings, derived when the status is written and never read back.
"""

from __future__ import annotations

import math
from typing import Any

from pydantic import Field

from buzz_operator.api.common import CostRange, StatusModel

# Two significant digits tell a reader the order of a cost and tell apart two conditions whose
# costs differ by more than the machine noise; more digits are noise to a human.
SIGNIFICANT = 2


def money(usd: float) -> str:
    """`$0` · `$0.00081` · `$0.012` · `$1.23` · `$1,234.50`: cents from a dollar on, else two
    significant digits, never scientific notation."""
    if usd <= 0:
        return "$0"
    if usd >= 1:
        return f"${usd:,.2f}"
    decimals = SIGNIFICANT - 1 - math.floor(math.log10(usd))
    return f"${usd:.{decimals}f}"


def cost(floor: float, ceiling: float) -> str:
    """One figure when the range rounds to one, else `floor–ceiling`."""
    low, high = money(floor), money(ceiling)
    return low if low == high else f"{low}–{high.removeprefix('$')}"


def reward(value: float | None) -> str | None:
    """Rewards and rates at two decimals (0.67), whole values as they are (1, 0)."""
    if value is None:
        return None
    return f"{value:g}" if float(value).is_integer() else f"{value:.2f}"


class Shown(StatusModel):
    """`status.shown`: the reward and the cost as `kubectl get` prints them."""

    reward: str | None = Field(None, description="The reward (a trial's, or a sweep's mean) at two decimals.")
    cost: str | None = Field(None, description="Spend in USD at two significant digits, a range when floor and "
                                               "ceiling differ.")


SHOWN_DESCRIPTION = "Reward and cost rounded for kubectl's columns; derived from the exact figures when written."


def shown(value: float | None, spend: CostRange) -> dict[str, Any]:
    """The `shown` object of a status with this reward and spend (unset keys left out)."""
    return Shown(reward=reward(value), cost=cost(spend.floor, spend.ceiling)).model_dump(
        mode="json", exclude_none=True)
