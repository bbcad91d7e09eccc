"""How many tasks and attempts a paired comparison needs, and the smallest difference a size can
detect (docs/statistics.md#planning). Pure stdlib.

The comparison this plans for is `buzzctl compare` (results/compare.py): two conditions run on
the same tasks, each task's difference dₜ = c_Bₜ/n − c_Aₜ/n, and the exact sign-flip test over
the dₜ. The plan uses that test's normal approximation: under H0 the sum S = Σ dₜ has variance
Σ dₜ², so it rejects when |S| ≥ z·√(Σ dₜ²). With T tasks whose differences have mean δ and
variance σ², S ≈ N(Tδ, Tσ²) and Σ dₜ² ≈ T(σ² + δ²), so

    power ≈ Φ((√T·δ − z₁₋α/₂·√(σ² + δ²)) / σ),

the task being the unit, as the comparison's. σ² has two parts: how much the effect itself
differs between tasks (its spread across the population of tasks: the clipping of a shifted rate
at 0 or 1, plus an assumed `effect_spread`), and the attempts' binomial noise, which n attempts
divide: σ² = Var(effect) + E[p_A(1 − p_A) + p_B(1 − p_B)] / n. More attempts shrink only the
second part, so past a point only more tasks help.

The exact test is discrete: its smallest p-value over m non-tied tasks is 2/2ᵐ, so it can never
reject at α with fewer than ⌈log₂(2/α)⌉ of them (6 at 0.05), and binary outcomes over few attempts
tie often (both sides 0/n or n/n). A plan is at least that many tasks over the expected share not
tied.

The tasks' baseline pass rates come from a pilot sweep (each task's observed rate taken as its
true rate) or are assumed: a mean and a spread across tasks, as a Beta distribution with those
moments (a suite has easy and hard tasks), represented by its quantiles. The candidate's rate of
a task is its baseline rate shifted by one amount and clipped to [0, 1], the shift chosen so the
mean difference is the difference asked for.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from math import ceil, comb, exp, lgamma, log, log2, sqrt
from statistics import NormalDist

QUANTILES = 201  # task rates representing an assumed population: Beta quantiles at (i + ½)/201
ATTEMPTS_SHOWN = (1, 2, 3, 5, 10)
MAX_TASKS = 100_000  # a plan past this is reported as out of reach


class PlanError(ValueError):
    """An input the plan cannot use, naming the option."""


@dataclass(frozen=True, slots=True)
class Design:
    """What the comparison must do: a two-sided test at ``alpha`` with ``power``; and how much the
    effect is assumed to vary from task to task beyond the clipping (its SD, ``effect_spread``)."""

    alpha: float = 0.05
    power: float = 0.8
    effect_spread: float = 0.0

    def __post_init__(self) -> None:
        if not 0 < self.alpha < 1:
            raise PlanError(f"--alpha must be between 0 and 1, not {self.alpha}")
        if not 0 < self.power < 1:
            raise PlanError(f"--power must be between 0 and 1, not {self.power}")
        if not 0 <= self.effect_spread <= 1:
            raise PlanError(f"--effect-spread must be between 0 and 1, not {self.effect_spread}")

    @property
    def fewest_untied(self) -> int:
        """The fewest non-tied tasks whose exact sign-flip p-value can reach alpha: 2/2^m ≤ α."""
        return max(1, ceil(log2(2 / self.alpha) - 1e-12))


@dataclass(frozen=True, slots=True)
class Need:
    """One size of a plan: ``tasks`` × ``attempts`` for ``difference`` (None when past MAX_TASKS),
    and what the size gives."""

    attempts: int
    tasks: int | None
    power: float | None  # the approximate power at that size
    sd: float  # σ: the SD of one task's difference at these attempts
    untied: float  # the expected share of tasks whose two sides differ


# between tasks: a suite holds easy and hard tasks (docs/statistics.md#planning); near a pass rate
# of 0 or 1 there is less room, and the default shrinks to 0.8 of the largest a Beta can have
DEFAULT_SPREAD = 0.25


def default_spread(mean: float) -> float:
    """The spread of task pass rates assumed when none is given (buzzctl plan, spec.comparison):
    0.25, or less near a pass rate of 0 or 1."""
    return min(DEFAULT_SPREAD, 0.8 * sqrt(mean * (1 - mean)))


def beta_rates(mean: float, spread: float, count: int = QUANTILES) -> tuple[float, ...]:
    """``count`` task rates at the quantiles of the Beta distribution with that mean and SD; one
    rate when the spread is 0."""
    if not 0 <= mean <= 1:
        raise PlanError(f"--pass-rate must be between 0 and 1, not {mean}")
    if spread < 0:
        raise PlanError(f"--spread must be >= 0, not {spread}")
    if spread == 0 or mean in (0, 1):
        return (mean,)
    largest = sqrt(mean * (1 - mean))
    if spread >= largest:
        raise PlanError(f"--spread must be below √(p(1−p)) = {largest:.3f} for a pass rate of {mean}, not {spread}")
    scale = mean * (1 - mean) / spread**2 - 1
    a, b = mean * scale, (1 - mean) * scale
    return tuple(_beta_quantile((i + 0.5) / count, a, b) for i in range(count))


def _beta_cf(x: float, a: float, b: float) -> float:
    """The continued fraction of the regularized incomplete beta (Numerical Recipes' betacf)."""
    tiny, qab, qap, qam = 1e-300, a + b, a + 1, a - 1
    c, d = 1.0, 1 - qab * x / qap
    d = 1 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 500):
        m2 = 2 * m
        for aa in (m * (b - m) * x / ((qam + m2) * (a + m2)), -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))):
            d = 1 + aa * d
            d = 1 / (d if abs(d) > tiny else tiny)
            c = 1 + aa / c
            c = c if abs(c) > tiny else tiny
            h *= d * c
        if abs(d * c - 1) < 1e-13:
            break
    return h


def _beta_cdf(x: float, a: float, b: float) -> float:
    if x <= 0:
        return 0.0
    if x >= 1:
        return 1.0
    front = exp(lgamma(a + b) - lgamma(a) - lgamma(b) + a * log(x) + b * log(1 - x))
    if x < (a + 1) / (a + b + 2):
        return front * _beta_cf(x, a, b) / a
    return 1 - front * _beta_cf(1 - x, b, a) / b


def _beta_quantile(q: float, a: float, b: float) -> float:
    low, high = 0.0, 1.0
    for _ in range(60):
        mid = (low + high) / 2
        low, high = (mid, high) if _beta_cdf(mid, a, b) < q else (low, mid)
    return (low + high) / 2


def pilot_rates(counts: Sequence[tuple[int, int]]) -> tuple[float, ...]:
    """A pilot sweep's per-task (scored, passed) as the rates the plan takes for true."""
    if not counts:
        raise PlanError("--pilot: the sweep has no scored trial to plan from")
    return tuple(passed / n for n, passed in counts)


def _clip(p: float) -> float:
    return min(1.0, max(0.0, p))


def shift_for(rates: Sequence[float], difference: float) -> float:
    """The shift of every task's rate (clipped to [0, 1]) whose mean difference is ``difference``."""
    room = sum(1 - p for p in rates) / len(rates) if difference > 0 else sum(rates) / len(rates)
    if abs(difference) > room + 1e-12 or difference == 0:
        raise PlanError(f"--difference {difference:+g} is not possible: the baseline's tasks leave room for at most "
                        f"{'+' if difference > 0 else '−'}{room:.3f}" if difference else "--difference must not be 0")
    low, high = 0.0, 1.0
    for _ in range(60):
        mid = (low + high) / 2
        moved = sum(_clip(p + mid * (1 if difference > 0 else -1)) - p for p in rates) / len(rates)
        low, high = (mid, high) if abs(moved) < abs(difference) else (low, mid)
    return high if difference > 0 else -high


def _tie(n: int, p: float, q: float) -> float:
    """P(Bin(n, p) = Bin(n, q)): the two sides of a task pass equally often."""
    return sum(comb(n, j) ** 2 * p**j * (1 - p) ** (n - j) * q**j * (1 - q) ** (n - j) for j in range(n + 1))


@dataclass(frozen=True, slots=True)
class _Moments:
    mean: float  # δ: the mean difference
    sd: float  # σ at these attempts
    untied: float


def _moments(rates: Sequence[float], shift: float, attempts: int, design: Design) -> _Moments:
    pairs = [(p, _clip(p + shift)) for p in rates]
    effects = [b - a for a, b in pairs]
    mean = sum(effects) / len(effects)
    between = sum((e - mean) ** 2 for e in effects) / len(effects) + design.effect_spread**2
    within = sum(a * (1 - a) + b * (1 - b) for a, b in pairs) / len(pairs) / attempts
    untied = 1 - sum(_tie(attempts, a, b) for a, b in pairs) / len(pairs)
    return _Moments(mean, sqrt(between + within), untied)


def _power(m: _Moments, tasks: int, design: Design) -> float:
    if m.sd == 0:
        return 1.0 if m.mean else 0.0
    z = NormalDist().inv_cdf(1 - design.alpha / 2)
    return NormalDist().cdf((sqrt(tasks) * abs(m.mean) - z * sqrt(m.sd**2 + m.mean**2)) / m.sd)


def _reachable(m: _Moments, tasks: int, design: Design) -> bool:
    """Whether the exact test can reject at all: enough tasks expected not to tie."""
    return tasks * m.untied >= design.fewest_untied


def power_of(rates: Sequence[float], difference: float, tasks: int, attempts: int, design: Design) -> float:
    """The approximate power of ``tasks`` × ``attempts`` to detect ``difference`` (0 when the exact
    test cannot reject with that few tasks expected to differ)."""
    _check_size(tasks, attempts)
    m = _moments(rates, shift_for(rates, difference), attempts, design)
    return _power(m, tasks, design) if _reachable(m, tasks, design) else 0.0


def tasks_needed(rates: Sequence[float], difference: float, attempts: int, design: Design) -> Need:
    """The fewest tasks that detect ``difference`` with ``attempts`` attempts each at the design's
    power: the normal approximation's size, raised to the exact test's floor."""
    _check_size(1, attempts)
    m = _moments(rates, shift_for(rates, difference), attempts, design)
    z_alpha, z_power = NormalDist().inv_cdf(1 - design.alpha / 2), NormalDist().inv_cdf(design.power)
    delta = abs(m.mean)
    root = (z_alpha * sqrt(m.sd**2 + delta**2) + z_power * m.sd) / delta
    tasks = max(1, ceil(root**2 - 1e-9))
    if m.untied <= 0:
        return Need(attempts, None, None, m.sd, m.untied)
    tasks = max(tasks, ceil(design.fewest_untied / m.untied - 1e-9))
    if tasks > MAX_TASKS:
        return Need(attempts, None, None, m.sd, m.untied)
    return Need(attempts, tasks, _power(m, tasks, design), m.sd, m.untied)


def detectable(rates: Sequence[float], tasks: int, attempts: int, design: Design, sign: int = 1) -> float | None:
    """The smallest difference (signed as ``sign``) that ``tasks`` × ``attempts`` detect at the
    design's power, or None when no difference the baseline's rates leave room for is."""
    _check_size(tasks, attempts)
    room = sum(1 - p for p in rates) / len(rates) if sign > 0 else sum(rates) / len(rates)

    def enough(size: float) -> bool:
        return power_of(rates, sign * size, tasks, attempts, design) >= design.power

    if room <= 0 or not enough(room):
        return None
    low, high = 0.0, room
    for _ in range(50):
        mid = (low + high) / 2
        low, high = (low, mid) if enough(mid) else (mid, high)
    return sign * high


def _check_size(tasks: int, attempts: int) -> None:
    if tasks < 1:
        raise PlanError(f"--tasks must be >= 1, not {tasks}")
    if attempts < 1:
        raise PlanError(f"--attempts must be >= 1, not {attempts}")
