"""A condition's figures with their intervals (docs/statistics.md): pass rate, pass@k, cost per
trial and per solved task, tokens per trial, and each verifier dimension's rate.

These are the figures a comparison is made of, so they are computed over the trials whose score
stands — as the sweep's own rollup (sweep.rollup) does: a *broken* trial (its verifier or
evidence cannot be trusted) and an *infra* one (its retries ran out on a platform failure) say
nothing about the team, and are left out and counted. The seed-compatible columns of the
summary (summary.py) still count every committed trial.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from buzz_operator.api.trial import FailureClass
from buzz_operator.scoring.failures import classify_reason
from buzz_operator.scoring.passing import PASS_THRESHOLD, k_values

from .statistics import Resampling, TaskCounts, mean_interval, pass_at_k_value, pass_hat_k_value
from .trial import TrialRecord

REWARD = "reward"  # the verifiers' overall key; every other numeric key is a dimension


def exclusion(trial: TrialRecord) -> str | None:
    """Why the trial is left out — broken or infra — or None when its score stands. A reason this
    build does not know (another harness's exception name) is the team's outcome, scored as the
    seed scores it."""
    if trial.verifier_broken:
        return "broken"
    if not trial.exception_type:
        return None
    try:
        failure_class = classify_reason(trial.exception_type)
    except ValueError:
        return None
    if failure_class is FailureClass.BROKEN:
        return "broken"
    return "infra" if failure_class is FailureClass.INFRA else None


def passed(value: float) -> bool:
    return value >= PASS_THRESHOLD


def task_counts(trials: Iterable[TrialRecord], key: str = REWARD) -> dict[str, TaskCounts]:
    """Per task, attempts that report ``key`` and how many passed it. For ``reward`` every
    scored trial counts (no reward is 0, as the rollup scores it); a dimension counts only where
    the verifier wrote it — a trial that timed out before grading has no dimension to judge."""
    tried: dict[str, list[bool]] = defaultdict(list)
    for t in trials:
        if key == REWARD:
            tried[t.task].append(passed(t.reward))
        elif key in t.rewards:
            tried[t.task].append(passed(t.rewards[key]))
    return {task: TaskCounts(len(v), sum(v)) for task, v in sorted(tried.items())}


def dimensions(trials: Iterable[TrialRecord]) -> list[str]:
    return sorted({key for t in trials for key in t.rewards if key != REWARD})


# What the box did to a trial, each a rate of the results (docs/resources.md#infra-noise): its
# retries ran out on infra; processes were OOM-killed while the agents worked; it needed a fresh
# try, whatever the last one did (the noise a retry hid).
BOX_HITS: dict[str, Callable[[TrialRecord], bool]] = {
    "infra_rate": lambda t: exclusion(t) == "infra",
    "pressure_rate": lambda t: t.oom_kills > 0,
    "retried_rate": lambda t: t.failed_tries > 0,
}


@dataclass(frozen=True)
class ConditionStats:
    """The scored trials of one condition row, and the ones left out."""

    scored: Sequence[TrialRecord]
    excluded: Mapping[str, int]
    every: Sequence[TrialRecord] = ()  # scored and excluded alike: what the box did is asked of all

    @classmethod
    def of(cls, trials: Iterable[TrialRecord]) -> ConditionStats:
        scored: list[TrialRecord] = []
        every = list(trials)
        excluded = {"broken": 0, "infra": 0}
        for t in every:
            why = exclusion(t)
            if why is None:
                scored.append(t)
            else:
                excluded[why] += 1
        return cls(scored, excluded, every)

    def box_counts(self, hit: Callable[[TrialRecord], bool]) -> dict[str, TaskCounts]:
        """Per task (sorted), every committed trial and how many the box hit (`hit`, one of
        BOX_HITS): what the box rates and their pairing in compare are built from."""
        by_task: dict[str, list[bool]] = defaultdict(list)
        for t in self.every:
            by_task[t.task].append(bool(hit(t)))
        return {task: TaskCounts(len(v), sum(v)) for task, v in sorted(by_task.items())}

    def box_estimates(self) -> dict[str, float | None]:
        """The box rates without their intervals (for the CSV): each the mean over tasks of the
        task's share, the figure `box` puts its interval around."""
        out: dict[str, float | None] = {}
        for name, hit in BOX_HITS.items():
            counts = self.box_counts(hit).values()
            out[name] = sum(c.passed / c.n for c in counts) / len(counts) if counts else None
        return out

    def box(self, resampling: Resampling) -> dict[str, Any]:
        """What the box did to this condition's trials (docs/resources.md#infra-noise): the share
        that ended on an infra failure, the share whose container had processes OOM-killed while
        the agents worked and the share that needed a fresh try, each averaged over tasks with its
        interval, as the pass rate is."""
        def rate(hit: Callable[[TrialRecord], bool]) -> dict[str, float] | None:
            counts = list(self.box_counts(hit).values())
            return mean_interval(counts, resampling=resampling).document() if counts else None

        return {
            "trials": len(self.every),
            **{name: rate(hit) for name, hit in BOX_HITS.items()},
            "failed_tries": sum(t.failed_tries for t in self.every),
        }

    @property
    def solved(self) -> int:
        return sum(1 for t in self.scored if passed(t.reward))

    def cost_per_solved(self, ceiling: bool) -> float | None:
        """Everything the scored trials cost over the trials that solved their task: what one
        solution costs, failures' spend included. None when nothing was solved."""
        spent = sum(t.cost_usd_ceiling if ceiling else t.cost_usd for t in self.scored)
        return spent / self.solved if self.solved else None

    def document(self, resampling: Resampling) -> dict[str, Any]:
        by_task = task_counts(self.scored)
        counts = list(by_task.values())
        n = len(self.scored)
        most = max((c.n for c in counts), default=0)
        pass_k: dict[str, Any] = {}
        pass_all_k: dict[str, Any] = {}
        for k in k_values(most) if most else []:
            eligible = [c for c in counts if c.n >= k]
            if eligible:
                pass_k[str(k)] = mean_interval(eligible, pass_at_k_value(k), resampling).document()
                pass_all_k[str(k)] = mean_interval(eligible, pass_hat_k_value(k), resampling).document()
        return {
            "scored": n,
            "tasks": len(counts),
            "solved": self.solved,
            "excluded": dict(self.excluded),
            "pass_rate": mean_interval(counts, resampling=resampling).document() if counts else None,
            "pass_at_k": pass_k,
            "pass_hat_k": pass_all_k,
            "cost_usd": {
                "per_trial": {
                    "floor": sum(t.cost_usd for t in self.scored) / n if n else None,
                    "ceiling": sum(t.cost_usd_ceiling for t in self.scored) / n if n else None,
                },
                "per_solved_task": {
                    "floor": self.cost_per_solved(False),
                    "ceiling": self.cost_per_solved(True),
                },
            },
            "tokens_per_trial": sum(t.tokens for t in self.scored) / n if n else None,
            "dimensions": dimension_documents(self.scored, resampling),
            "box": self.box(resampling),
        }


def dimension_documents(trials: Sequence[TrialRecord], resampling: Resampling) -> dict[str, Any]:
    """Each verifier dimension's pass rate across the tasks whose verifier grades it (a shared
    name such as ``reply_to_thread`` pools the tasks that check it, task by task)."""
    out: dict[str, Any] = {}
    for key in dimensions(trials):
        counts = list(task_counts(trials, key).values())
        out[key] = {
            "tasks": len(counts),
            "trials": sum(c.n for c in counts),
            **mean_interval(counts, resampling=resampling).document(),
        }
    return out
