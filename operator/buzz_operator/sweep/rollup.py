"""Sweep-level figures from trial summaries: counts, mean reward, pass@k, cost.

pass@k is the unbiased estimator of Chen et al. (2021) as Harbor computes it: per task, with
n scored attempts of which c passed, pass@k = 1 − C(n−c, k) / C(n, k), averaged over the
tasks that have at least k scored attempts. A trial passes when its reward is ≥ 1.0 (the
verifiers' "fully solved"); partial rewards count toward the mean, not toward pass@k.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from math import comb

from buzz_operator.sweep.summary import TrialState, TrialSummary

PASS_THRESHOLD = 1.0


@dataclass(frozen=True)
class SweepRollup:
    pending: int = 0
    running: int = 0
    succeeded: int = 0
    failed: int = 0
    broken: int = 0
    total: int = 0
    not_created: int = 0
    scored: int = 0
    mean_reward: float | None = None
    pass_at_k: dict[str, float] = field(default_factory=dict)
    cost_floor: float = 0.0
    cost_ceiling: float = 0.0

    @property
    def active(self) -> int:
        """Created trials not yet terminal: they run on even when admission has stopped."""
        return self.running + self.pending - self.not_created

    @property
    def finished(self) -> bool:
        """Every planned trial reached a terminal state."""
        return self.total > 0 and self.pending == 0 and self.running == 0


def pass_at_k(n: int, c: int, k: int) -> float:
    """Probability that at least one of k attempts drawn from n (c of them passing) passes."""
    if not 0 <= c <= n:
        raise ValueError(f"need 0 <= c <= n (n={n}, c={c})")
    if not 1 <= k <= n:
        raise ValueError(f"need 1 <= k <= n (n={n}, k={k})")
    if n - c < k:
        return 1.0
    return 1.0 - comb(n - c, k) / comb(n, k)


def k_values(attempts: int) -> list[int]:
    """1, 2, 4, … up to attempts, plus attempts itself: a handful of keys whatever k is."""
    values = []
    k = 1
    while k < attempts:
        values.append(k)
        k *= 2
    values.append(attempts)
    return values


def rollup(trials: Sequence[TrialSummary], attempts: int, *, planned: int | None = None) -> SweepRollup:
    """Figures for one sweep. ``planned`` is tasks × attempts; trials not yet created count as pending."""
    if attempts < 1:
        raise ValueError(f"attempts must be >= 1, not {attempts}")
    counts = dict.fromkeys(TrialState, 0)
    for trial in trials:
        counts[trial.state] += 1
    created = len(trials)
    total = max(planned or 0, created)
    scored = [trial for trial in trials if trial.scored]
    rewards = [trial.reward if trial.reward is not None else 0.0 for trial in scored]

    by_task: dict[str, list[float]] = defaultdict(list)
    for trial, reward in zip(scored, rewards, strict=True):
        by_task[trial.task].append(reward)
    pass_rates: dict[str, float] = {}
    for k in k_values(attempts):
        estimates = [
            pass_at_k(len(values), sum(1 for value in values if value >= PASS_THRESHOLD), k)
            for values in by_task.values()
            if len(values) >= k
        ]
        if estimates:
            pass_rates[str(k)] = sum(estimates) / len(estimates)

    return SweepRollup(
        pending=counts[TrialState.PENDING] + (total - created),
        running=counts[TrialState.RUNNING],
        succeeded=counts[TrialState.SUCCEEDED],
        failed=counts[TrialState.FAILED],
        broken=counts[TrialState.BROKEN],
        total=total,
        not_created=total - created,
        scored=len(scored),
        mean_reward=sum(rewards) / len(rewards) if rewards else None,
        pass_at_k=pass_rates,
        cost_floor=sum(trial.cost_floor for trial in trials),
        cost_ceiling=sum(trial.cost_ceiling for trial in trials),
    )
