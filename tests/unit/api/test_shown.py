"""What kubectl prints: money and rewards rounded for people, exact figures kept for machines."""

from __future__ import annotations

import pytest
from buzz_operator.api.shown import cost, money, reward
from buzz_operator.api.sweep import BuzzSweepStatus
from buzz_operator.api.trial import BuzzTrialStatus


@pytest.mark.parametrize(("usd", "text"), [
    (0.0, "$0"), (0.0008133400000000002, "$0.00081"), (0.00019085000000000003, "$0.00019"),
    (0.0123, "$0.012"), (0.1, "$0.10"), (0.999, "$1.00"), (1.0, "$1.00"), (1234.5, "$1,234.50"),
    (3.4e-9, "$0.0000000034"),
])
def test_money(usd: float, text: str) -> None:
    assert money(usd) == text


def test_cost_is_one_figure_unless_the_range_shows() -> None:
    assert cost(0.00081334, 0.000813340001) == "$0.00081"
    assert cost(0.00081, 0.0012) == "$0.00081–0.0012"


@pytest.mark.parametrize(("value", "text"), [(None, None), (1.0, "1"), (0.0, "0"), (2 / 3, "0.67")])
def test_reward(value: float | None, text: str | None) -> None:
    assert reward(value) == text


def test_status_carries_both_and_reads_back_unchanged() -> None:
    trial = BuzzTrialStatus.model_validate({"reward": 0.8333333, "costUSD": {"floor": 0.0008133400000000002,
                                                                            "ceiling": 0.0008133400000000002}})
    written = trial.to_api()
    assert written["costUSD"]["ceiling"] == 0.0008133400000000002  # the exact figure stays
    assert written["shown"] == {"reward": "0.83", "cost": "$0.00081"}
    assert BuzzTrialStatus.model_validate(written).to_api() == written
    # derived from what is there when written, never from a stale stored copy
    stale = {**written, "shown": {"reward": "9", "cost": "$9"}}
    assert BuzzTrialStatus.model_validate(stale).to_api()["shown"] == written["shown"]
    sweep = BuzzSweepStatus.model_validate({"meanReward": 2 / 3}).to_api()
    assert sweep["shown"] == {"reward": "0.67", "cost": "$0"}
