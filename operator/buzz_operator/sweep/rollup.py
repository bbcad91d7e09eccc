"""Sweep-level figures from trial summaries: counts, mean reward, pass@k (scoring/passing.py),
cost."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from buzz_operator.scoring.passing import PASS_THRESHOLD, k_values, pass_at_k
from buzz_operator.sweep.trial_view import TrialState, TrialView


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


class Tally:
    """A sweep's figures added up a trial at a time: what `rollup` needs of each trial is counted
    as it goes by — per task only how many were scored and how many passed — so the trials can be
    read once, as a stream, and none is held (a list of every trial on every reconcile was the
    largest thing a 100,000-trial sweep's tick allocated: docs/performance.md#memory)."""

    def __init__(self) -> None:
        self.counts = dict.fromkeys(TrialState, 0)
        self.created = 0
        self.scored = 0
        self.reward_sum = 0.0
        self.by_task: dict[str, list[int]] = {}  # task -> [scored, passed]
        self.cost_floor = 0.0
        self.cost_ceiling = 0.0

    def add(self, trial: TrialView) -> None:
        self.counts[trial.state] += 1
        self.created += 1
        self.cost_floor += trial.cost_floor
        self.cost_ceiling += trial.cost_ceiling
        if trial.scored:
            reward = trial.reward if trial.reward is not None else 0.0
            self.scored += 1
            self.reward_sum += reward
            task = self.by_task.get(trial.task)
            if task is None:
                task = self.by_task[trial.task] = [0, 0]
            task[0] += 1
            task[1] += reward >= PASS_THRESHOLD

    def merge(self, other: Tally) -> None:
        for state, count in other.counts.items():
            self.counts[state] += count
        self.created += other.created
        self.scored += other.scored
        self.reward_sum += other.reward_sum
        self.cost_floor += other.cost_floor
        self.cost_ceiling += other.cost_ceiling
        for name, (n, c) in other.by_task.items():
            task = self.by_task.setdefault(name, [0, 0])
            task[0] += n
            task[1] += c

    def figures(self, attempts: int, *, planned: int | None = None) -> SweepRollup:
        """``planned`` is tasks × attempts; trials not yet created count as pending."""
        if attempts < 1:
            raise ValueError(f"attempts must be >= 1, not {attempts}")
        total = max(planned or 0, self.created)
        pass_rates: dict[str, float] = {}
        for k in k_values(attempts):
            estimates = [pass_at_k(n, c, k) for n, c in self.by_task.values() if n >= k]
            if estimates:
                pass_rates[str(k)] = sum(estimates) / len(estimates)
        counts = self.counts
        return SweepRollup(
            pending=counts[TrialState.PENDING] + (total - self.created),
            running=counts[TrialState.RUNNING],
            succeeded=counts[TrialState.SUCCEEDED],
            failed=counts[TrialState.FAILED],
            broken=counts[TrialState.BROKEN],
            total=total,
            not_created=total - self.created,
            scored=self.scored,
            mean_reward=self.reward_sum / self.scored if self.scored else None,
            pass_at_k=pass_rates,
            cost_floor=self.cost_floor,
            cost_ceiling=self.cost_ceiling,
        )


def tally(trials: Iterable[TrialView]) -> Tally:
    counted = Tally()
    for trial in trials:
        counted.add(trial)
    return counted


def rollup(trials: Iterable[TrialView], attempts: int, *, planned: int | None = None) -> SweepRollup:
    """Figures for one sweep, the trials read once. ``planned`` is tasks × attempts; trials not yet
    created count as pending."""
    return tally(trials).figures(attempts, planned=planned)
