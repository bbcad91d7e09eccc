"""The plan of a paired comparison (results/power.py, docs/statistics.md#planning): its formula by
hand, and by simulation: sweeps drawn with a fixed seed at the planned size, each tested as
`buzzctl compare` tests it (the exact sign-flip test over the tasks' differences), detect the
stated difference at the stated power, and the paired bootstrap interval covers the true
difference at its nominal rate."""

from __future__ import annotations

from fractions import Fraction
from random import Random
from statistics import NormalDist

import pytest
from buzz_operator.results.power import (
    Design,
    PlanError,
    beta_rates,
    default_spread,
    detectable,
    pilot_rates,
    power_of,
    shift_for,
    tasks_needed,
)
from buzz_operator.results.statistics import LEVEL, Resampling, TaskCounts, paired_interval, sign_flip_p_value

SWEEPS = 1000  # simulated comparisons per plan: the power's standard error is about 0.013


def draw(rng: Random, rates: tuple[float, ...], shift: float, tasks: int, attempts: int,
         effect_spread: float) -> list[tuple[TaskCounts, TaskCounts]]:
    """One simulated pair of sweeps: ``tasks`` tasks drawn from the population, each run
    ``attempts`` times by the baseline at its rate and by the candidate at the shifted rate."""
    pairs = []
    for _ in range(tasks):
        p = rates[int(rng.random() * len(rates))]
        noise = NormalDist().inv_cdf(min(max(rng.random(), 1e-12), 1 - 1e-12)) * effect_spread if effect_spread else 0
        q = min(1.0, max(0.0, p + shift + noise))
        a = sum(rng.random() < p for _ in range(attempts))
        b = sum(rng.random() < q for _ in range(attempts))
        pairs.append((TaskCounts(attempts, a), TaskCounts(attempts, b)))
    return pairs


def detected(pairs: list[tuple[TaskCounts, TaskCounts]], alpha: float) -> bool:
    differences = [Fraction(b.passed, b.n) - Fraction(a.passed, a.n) for a, b in pairs]
    return sign_flip_p_value(differences) <= alpha


def test_formula_by_hand() -> None:
    # one rate 0.5, candidate 0.7, one attempt: σ² = 0.5·0.5 + 0.7·0.3 = 0.46, δ = 0.2;
    # √T = (1.95996·√0.50 + 0.84162·√0.46) / 0.2 = 9.7836 → T = ⌈95.72⌉ = 96; a task ties with
    # chance 0.5·0.7 + 0.5·0.3 = 0.5, so the exact test's floor (6 untied at α 0.05) needs 12
    need = tasks_needed((0.5,), 0.2, 1, Design())
    assert (need.tasks, need.sd, need.untied) == (96, pytest.approx(0.46**0.5), pytest.approx(0.5))
    assert need.power == pytest.approx(0.8, abs=0.01)


def test_the_exact_tests_floor() -> None:
    # 2/2^m ≤ α: 6 untied tasks at 0.05, 3 at 0.25, 7 at 0.01
    assert [Design(alpha=a).fewest_untied for a in (0.05, 0.25, 0.01)] == [6, 3, 8]
    # a huge difference needs few tasks by the formula but never fewer than the floor allows
    need = tasks_needed((0.0,), 1.0, 1, Design())
    assert need.tasks == 6 and need.untied == 1.0
    assert power_of((0.0,), 1.0, 5, 1, Design()) == 0.0 < power_of((0.0,), 1.0, 6, 1, Design())


def test_assumed_rates_have_the_asked_moments() -> None:
    rates = beta_rates(0.3, 0.2)
    mean = sum(rates) / len(rates)
    sd = (sum((p - mean) ** 2 for p in rates) / len(rates)) ** 0.5
    assert mean == pytest.approx(0.3, abs=0.002) and sd == pytest.approx(0.2, abs=0.005)
    assert beta_rates(0.4, 0.0) == (0.4,)


def test_the_shift_gives_the_mean_difference_through_clipping() -> None:
    rates = (0.0, 0.5, 0.9, 1.0)
    for difference in (0.05, 0.2, -0.3):
        shift = shift_for(rates, difference)
        moved = sum(min(1, max(0, p + shift)) - p for p in rates) / len(rates)
        assert moved == pytest.approx(difference, abs=1e-9)
    assert shift_for((0.5,), 0.1) == pytest.approx(0.1)


@pytest.mark.parametrize(("call", "option"), [
    (lambda: Design(alpha=0), "--alpha"), (lambda: Design(power=1.0), "--power"),
    (lambda: Design(effect_spread=-0.1), "--effect-spread"), (lambda: beta_rates(1.2, 0.1), "--pass-rate"),
    (lambda: beta_rates(0.5, 0.6), "--spread"), (lambda: shift_for((0.9, 1.0), 0.2), "--difference"),
    (lambda: shift_for((0.5,), 0.0), "--difference"), (lambda: tasks_needed((0.5,), 0.1, 0, Design()), "--attempts"),
    (lambda: detectable((0.5,), 0, 1, Design()), "--tasks"), (lambda: pilot_rates([]), "--pilot"),
])  # fmt: skip
def test_bad_input_names_the_option(call, option: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(PlanError, match=option):
        call()


def test_more_attempts_help_until_the_effect_varies_by_task() -> None:
    rates = beta_rates(0.5, 0.2)
    fixed = [tasks_needed(rates, 0.15, n, Design()).tasks for n in (1, 3, 10, 100)]
    varying = [tasks_needed(rates, 0.15, n, Design(effect_spread=0.2)).tasks for n in (1, 3, 10, 100)]
    assert fixed == sorted(fixed, reverse=True) and varying == sorted(varying, reverse=True)
    # with the effect varying across tasks (SD 0.2), attempts cannot divide its variance: as they
    # grow, T tends to ((1.96·√(0.2² + 0.15²) + 0.84·0.2) / 0.15)² = 19.3 tasks, where a fixed
    # effect needs only the exact test's floor
    assert fixed[-1] <= 7 < 20 <= varying[-1]


# (rates, difference, attempts, design): a suite of varied tasks, one whose candidate is worse,
# a pilot's eight rates with tasks at 0 and 1, an effect that varies by task, a higher power
PLANS = [
    (beta_rates(0.5, 0.2), 0.2, 3, Design()),
    (beta_rates(0.3, 0.25), -0.15, 5, Design()),
    ((0.0, 0.2, 0.5, 0.8, 1.0, 1.0, 0.9, 0.6), 0.15, 2, Design()),
    (beta_rates(0.5, 0.2), 0.2, 3, Design(effect_spread=0.15)),
    (beta_rates(0.5, 0.2), 0.3, 1, Design(power=0.9)),
]


@pytest.mark.parametrize(("rates", "difference", "attempts", "design"), PLANS)
def test_the_planned_size_detects_the_difference_at_the_stated_power(
    rates: tuple[float, ...], difference: float, attempts: int, design: Design
) -> None:
    need = tasks_needed(rates, difference, attempts, design)
    assert need.tasks is not None
    shift, rng = shift_for(rates, difference), Random(48)
    power = sum(detected(draw(rng, rates, shift, need.tasks, attempts, design.effect_spread), design.alpha)
                for _ in range(SWEEPS)) / SWEEPS
    # the normal approximation of a discrete test: within 0.06 below (about 4.5 standard errors)
    # and 0.08 above (the exact test's discreteness makes it conservative, never liberal)
    assert design.power - 0.06 <= power <= design.power + 0.08, (need, power)
    # and the size is the smallest that does, as far as the formula can say
    assert detectable(rates, need.tasks, attempts, design, 1 if difference > 0 else -1) == pytest.approx(
        difference, abs=0.01)
    if need.tasks > design.fewest_untied:
        assert power_of(rates, difference, need.tasks - 1, attempts, design) < design.power


def test_under_no_difference_the_test_keeps_its_level() -> None:
    rates, rng, alpha = beta_rates(0.5, 0.2), Random(7), 0.05
    tasks = tasks_needed(rates, 0.2, 3, Design()).tasks
    assert tasks is not None
    rejected = sum(detected(draw(rng, rates, 0.0, tasks, 3, 0.0), alpha) for _ in range(SWEEPS)) / SWEEPS
    assert rejected <= alpha + 0.015


def test_the_paired_interval_covers_the_true_difference_at_the_planned_size() -> None:
    # the comparison's interval (results/statistics.paired_interval) over simulated sweeps of the
    # planned size: the true mean difference is the one planned for (shift_for makes it so)
    rates, difference, attempts = beta_rates(0.5, 0.2), 0.2, 3
    tasks = tasks_needed(rates, difference, attempts, Design()).tasks
    assert tasks is not None
    shift, rng, sweeps = shift_for(rates, difference), Random(11), 300
    covered = 0
    for i in range(sweeps):
        interval = paired_interval(draw(rng, rates, shift, tasks, attempts, 0.0), resampling=Resampling(500, seed=i))
        covered += interval.low <= difference <= interval.high
    # nominal 95 %; the two-stage bootstrap is conservative when the tasks' effects are alike
    # (docs/statistics.md#the-interval-a-two-stage-bootstrap): at least 92 % (2 standard errors)
    assert covered / sweeps >= LEVEL - 0.03, covered / sweeps


def test_the_default_spread_is_a_quarter_or_less_near_zero_and_one() -> None:
    """One rule for buzzctl plan and spec.comparison: 0.25, shrunk to 0.8 of the largest spread a
    Beta distribution can have at that mean, so beta_rates accepts it at every pass rate."""
    assert default_spread(0.5) == 0.25
    assert default_spread(0.05) == pytest.approx(0.8 * (0.05 * 0.95) ** 0.5)
    assert default_spread(0.0) == default_spread(1.0) == 0.0
    for p in (0.01, 0.1, 0.3, 0.7, 0.99):
        assert len(beta_rates(p, default_spread(p))) > 1
