"""Interval estimates over a suite of tasks, each tried a few times (docs/statistics.md).

The unit of sampling is the task: attempts of one task are correlated (the same instruction,
the same verifier), so a figure is the mean over tasks of a per-task figure, and its 95 %
interval is a two-stage percentile bootstrap — resample the tasks with replacement, then each
drawn task's attempts with replacement — seeded, so the same bundles always print the same
interval. Outcomes are binary (a trial or a verifier dimension passes at ≥ 1.0), which makes
the second stage a binomial draw: a task with c passes in n attempts resamples to
Binomial(n, c/n) passes, drawn here by inverting a precomputed CDF with one uniform number —
the same distribution as drawing n attempts with replacement, at one random number per task.

Only ``Random.random()`` is used: it is the one generator call Python guarantees to reproduce
across versions for a given seed. Paired differences use the same task draws for both sides,
and the exact sign-flip test gives their p-value. Pure stdlib.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from functools import cache
from math import comb, lcm
from random import Random
from typing import Any

DEFAULT_RESAMPLES = 2000
DEFAULT_SEED = 0  # fixed: a published interval must be reproducible from the bundles alone
LEVEL = 0.95
MIN_RESAMPLES = 100  # fewer makes the 2.5 % and 97.5 % quantiles a handful of draws


@dataclass(frozen=True, slots=True)
class TaskCounts:
    """One task's scored attempts: ``n`` tried, ``passed`` of them passed."""

    n: int
    passed: int

    def __post_init__(self) -> None:
        if self.n < 1 or not 0 <= self.passed <= self.n:
            raise ValueError(
                f"task counts need n >= 1 and 0 <= passed <= n, not n={self.n} passed={self.passed}"
            )

    @property
    def rate(self) -> float:
        return self.passed / self.n


@dataclass(frozen=True, slots=True)
class Interval:
    """A point estimate and its percentile interval at ``LEVEL``."""

    estimate: float
    low: float
    high: float

    def document(self) -> dict[str, float]:
        return {"estimate": self.estimate, "low": self.low, "high": self.high}


@dataclass(frozen=True, slots=True)
class Resampling:
    """How many bootstrap resamples, from which seed."""

    resamples: int = DEFAULT_RESAMPLES
    seed: int = DEFAULT_SEED

    def __post_init__(self) -> None:
        if self.resamples < MIN_RESAMPLES:
            raise ValueError(f"resamples must be >= {MIN_RESAMPLES}, not {self.resamples}")

    def document(self) -> dict[str, Any]:
        return {
            "method": "two-stage percentile bootstrap",
            "resamples": self.resamples,
            "seed": self.seed,
            "level": LEVEL,
        }


TaskValue = Callable[[int, int], float]  # (n, passed) → the task's figure


def rate_value(n: int, passed: int) -> float:
    return passed / n


def pass_at_k_value(k: int) -> TaskValue:
    """Chen et al.'s unbiased pass@k of one task, as sweep.rollup computes it."""

    def value(n: int, passed: int) -> float:
        return 1.0 if n - passed < k else 1.0 - comb(n - passed, k) / comb(n, k)

    return value


def pass_hat_k_value(k: int) -> TaskValue:
    """pass^k of one task: the unbiased estimate that all k attempts pass (scoring/passing.py)."""

    def value(n: int, passed: int) -> float:
        return comb(passed, k) / comb(n, k)

    return value


@cache
def _cdf(n: int, passed: int) -> tuple[float, ...]:
    """P(X ≤ j) for j = 0..n-1 of X ~ Binomial(n, passed/n): the second-stage draw's table."""
    p = passed / n
    total, out = 0.0, []
    for j in range(n):
        total += comb(n, j) * p**j * (1 - p) ** (n - j)
        out.append(total)
    return tuple(out)


def _redraw(rng: Random, task: TaskCounts) -> int:
    """The passes of ``task`` after resampling its attempts with replacement."""
    if task.passed in (0, task.n):
        return task.passed  # every draw repeats the one outcome; no random number is spent
    return bisect_right(_cdf(task.n, task.passed), rng.random())


def quantile(ordered: Sequence[float], q: float) -> float:
    """Linear interpolation between order statistics (Hyndman & Fan type 7, numpy's default)."""
    h = (len(ordered) - 1) * q
    below = int(h)
    above = min(below + 1, len(ordered) - 1)
    return ordered[below] + (h - below) * (ordered[above] - ordered[below])


def _percentile(draws: list[float], estimate: float) -> Interval:
    draws.sort()
    tail = (1 - LEVEL) / 2
    return Interval(estimate, quantile(draws, tail), quantile(draws, 1 - tail))


def _tables(tasks: Sequence[TaskCounts], value: TaskValue) -> list[tuple[float, ...]]:
    return [tuple(value(t.n, j) for j in range(t.n + 1)) for t in tasks]


def mean_interval(
    tasks: Sequence[TaskCounts], value: TaskValue = rate_value, resampling: Resampling = Resampling()
) -> Interval:
    """The mean over tasks of ``value(n, passed)``, with its two-stage bootstrap interval."""
    if not tasks:
        raise ValueError("an interval needs at least one task")
    tables = _tables(tasks, value)
    estimate = sum(table[t.passed] for t, table in zip(tasks, tables, strict=True)) / len(tasks)
    rng, count = Random(resampling.seed), len(tasks)
    draws = []
    for _ in range(resampling.resamples):
        total = 0.0
        for _ in range(count):
            i = int(rng.random() * count)
            total += tables[i][_redraw(rng, tasks[i])]
        draws.append(total / count)
    return _percentile(draws, estimate)


def paired_interval(
    pairs: Sequence[tuple[TaskCounts, TaskCounts]],
    value: TaskValue = rate_value,
    resampling: Resampling = Resampling(),
) -> Interval:
    """The mean over tasks of value(candidate) − value(baseline): both sides share each resample's
    task draws (the pairing), and each side's attempts are redrawn on their own (they are
    independent runs)."""
    if not pairs:
        raise ValueError("a paired interval needs at least one task both sides ran")
    base = _tables([a for a, _ in pairs], value)
    cand = _tables([b for _, b in pairs], value)
    estimate = sum(cand[i][b.passed] - base[i][a.passed] for i, (a, b) in enumerate(pairs)) / len(pairs)
    rng, count = Random(resampling.seed), len(pairs)
    draws = []
    for _ in range(resampling.resamples):
        total = 0.0
        for _ in range(count):
            i = int(rng.random() * count)
            a, b = pairs[i]
            total += cand[i][_redraw(rng, b)] - base[i][_redraw(rng, a)]
        draws.append(total / count)
    return _percentile(draws, estimate)


def sign_flip_p_value(differences: Sequence[Fraction]) -> float:
    """Two-sided exact p-value of H0 "each task's difference is as likely to have either sign":
    the share of the 2^m sign assignments whose |sum| is at least the observed |sum|.

    Counted exactly by dynamic programming over the reachable sums, in whole multiples of the
    differences' common denominator (so ties are ties, and the table's keys are ints):
    differences of rates over a few attempts take few distinct values, so the table stays small
    where enumerating 2^m patterns would not. Zero differences flip to themselves and cancel out
    of the ratio."""
    steps = [Fraction(d) for d in differences if d != 0]
    scale = lcm(*(d.denominator for d in steps)) if steps else 1
    whole = [abs(int(d * scale)) for d in steps]
    observed = abs(sum(int(d * scale) for d in steps))
    ways: dict[int, int] = {0: 1}
    for d in whole:
        step: dict[int, int] = {}
        for total, count in ways.items():
            for moved in (total + d, total - d):
                step[moved] = step.get(moved, 0) + count
        ways = step
    extreme = sum(count for total, count in ways.items() if abs(total) >= observed)
    return extreme / sum(ways.values())


def task_difference(baseline: TaskCounts, candidate: TaskCounts) -> Fraction:
    return Fraction(candidate.passed, candidate.n) - Fraction(baseline.passed, baseline.n)
