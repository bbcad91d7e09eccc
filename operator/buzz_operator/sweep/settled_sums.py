"""One sweep's settled trials added up as they settle, so a reconcile reads its active trials
alone (docs/design.md#settled-trials, item 8).

A reconcile's figures (counts, mean reward, pass@k, costs) and the planner's record of which
(task, attempt) pairs exist used to come from one pass over every trial of the sweep on every
tick: O(trials) work each 5 s, and every page of the settled trials' columns read back in
(sweep/drive/mapped.py). Here the settled trials' share is kept as running sums, changed when a
trial settles, is replaced (a regrade), or leaves (a rerun, a deletion). The reconcile adds its
watched trials to them and takes away the settled entry of any trial that is in both (one
being settled or unsettled just now: kopf's entry is the newer, as `SweepTrials` reads it).

Sums of money and reward are kept exact (`Fraction`s of the floats, which are exact): a trial
added and later removed leaves no rounding behind, and the figures do not depend on the order
the trials were seen in, so a restarted operator that lists them in another order reports the
same costs to the last bit.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable
from fractions import Fraction

from buzz_operator.scoring.passing import PASS_THRESHOLD
from buzz_operator.sweep.rollup import Tally
from buzz_operator.sweep.trial_view import TrialState, TrialView


class SettledSums:
    """The settled trials of one sweep, added up; `pairs` counts the trials of each
    (task, attempt), a slot per attempt (a sweep has at most 1,000)."""

    def __init__(self) -> None:
        self.counts = dict.fromkeys(TrialState, 0)
        self.created = 0
        self.scored = 0
        self.reward = Fraction(0)
        self.cost_floor = Fraction(0)
        self.cost_ceiling = Fraction(0)
        self.by_task: dict[str, list[int]] = {}  # task -> [scored, passed]
        self.pairs: dict[str, array[int]] = {}  # task -> trials per attempt (index: attempt)

    def add(self, trial: TrialView) -> None:
        self._count(trial, 1)

    def remove(self, trial: TrialView) -> None:
        """Take away a trial `add` counted (the same view)."""
        self._count(trial, -1)

    def _count(self, trial: TrialView, sign: int) -> None:
        self.counts[trial.state] += sign
        self.created += sign
        self.cost_floor += sign * Fraction(trial.cost_floor)
        self.cost_ceiling += sign * Fraction(trial.cost_ceiling)
        if trial.scored:
            reward = trial.reward if trial.reward is not None else 0.0
            self.scored += sign
            self.reward += sign * Fraction(reward)
            task = self.by_task.setdefault(trial.task, [0, 0])
            task[0] += sign
            task[1] += sign * (reward >= PASS_THRESHOLD)
            if task == [0, 0]:
                del self.by_task[trial.task]
        if trial.attempt >= 0:
            attempts = self.pairs.get(trial.task)
            if attempts is None:
                attempts = self.pairs[trial.task] = array("I")
            if len(attempts) <= trial.attempt:
                attempts.extend([0] * (trial.attempt + 1 - len(attempts)))
            attempts[trial.attempt] += sign
            if sign < 0 and not any(attempts):
                del self.pairs[trial.task]

    def __len__(self) -> int:
        return self.created

    def has(self, task: str, attempt: int) -> bool:
        """Whether a settled trial of the sweep is (task, attempt)."""
        attempts = self.pairs.get(task)
        return attempts is not None and 0 <= attempt < len(attempts) and attempts[attempt] > 0

    def tally(self, less: Iterable[TrialView] = ()) -> Tally:
        """The sums as a `Tally` the reconcile adds its watched trials to, less the settled
        entries of `less` (trials kopf watches again, whose newer entry it counts itself)."""
        out = Tally()
        out.counts = dict(self.counts)
        out.created, out.scored = self.created, self.scored
        reward, floor, ceiling = self.reward, self.cost_floor, self.cost_ceiling
        out.by_task = {task: list(counts) for task, counts in self.by_task.items()}
        for trial in less:
            out.counts[trial.state] -= 1
            out.created -= 1
            floor -= Fraction(trial.cost_floor)
            ceiling -= Fraction(trial.cost_ceiling)
            if trial.scored:
                value = trial.reward if trial.reward is not None else 0.0
                out.scored -= 1
                reward -= Fraction(value)
                task = out.by_task[trial.task]
                task[0] -= 1
                task[1] -= value >= PASS_THRESHOLD
        out.reward_sum, out.cost_floor, out.cost_ceiling = float(reward), float(floor), float(ceiling)
        return out


def sums_of(trials: Iterable[TrialView]) -> SettledSums:
    """The sums of `trials` added one by one (for a reader of settled trials that keeps none)."""
    sums = SettledSums()
    for trial in trials:
        sums.add(trial)
    return sums
