"""Planning a sweep into trials with deterministic names.

A trial's name is a pure function of (sweep, condition hash, task, attempt), so planning is
idempotent: an operator that restarts mid-sweep plans the same names, finds the trials that
already exist, and creates only the missing ones (a 409 means "already made", never a
duplicate). The hash suffix keeps names unique and short whatever the task names are.
"""

from __future__ import annotations

from collections.abc import Container, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from buzz_operator.api import labels
from buzz_operator.api.naming import dns_label_prefix, label_value, sha256_hex
from buzz_operator.api.trial_names import TRIAL_NAME_MAX, relay_trial_id

SUFFIX_HEX = 10
# "<prefix>-<10 hex>" must fit TRIAL_NAME_MAX, which leaves room for a pod's "-r<retry>".
PREFIX_MAX = TRIAL_NAME_MAX - SUFFIX_HEX - 1


@dataclass(frozen=True)
class PlannedTrial:
    name: str
    sweep: str
    task: str
    attempt: int
    trial_id: str  # relay trial id of the first try
    labels: dict[str, str] = field(default_factory=dict)


def trial_name(sweep_name: str, condition_hash: str, task: str, attempt: int) -> str:
    """``<sweep>-<sha256(condition hash, task, attempt)[:10]>``, a DNS-1123 label.

    The suffix does not include the sweep, so the same condition/task/attempt carries the same
    suffix in every sweep (easy to line up across sweeps); the sweep prefix keeps names in one
    namespace apart, and is itself shortened with a hash of the full sweep name when needed.
    """
    suffix = sha256_hex(condition_hash, task, str(attempt))[:SUFFIX_HEX]
    return f"{dns_label_prefix(sweep_name, PREFIX_MAX)}-{suffix}"


def trial_labels(sweep_name: str, condition_hash: str, task: str, attempt: int) -> dict[str, str]:
    return {
        labels.SWEEP: label_value(sweep_name),
        labels.TASK: label_value(task),
        labels.ATTEMPT: str(attempt),
        labels.CONDITION: condition_hash[: labels.CONDITION_LABEL_HEX],
        labels.MANAGED_BY: labels.MANAGER,
    }


def _checked(tasks: Sequence[str], attempts: int, condition_hash: str) -> None:
    if attempts < 1:
        raise ValueError(f"attempts must be >= 1, not {attempts}")
    if not condition_hash:
        raise ValueError("condition_hash must not be empty")
    seen: set[str] = set()
    for task in tasks:
        if not task:
            raise ValueError("task names must not be empty")
        if task in seen:
            raise ValueError(f"task {task!r} is listed twice")
        seen.add(task)


def _planned(sweep_name: str, sweep_uid: str, condition_hash: str, task: str, attempt: int) -> PlannedTrial:
    name = trial_name(sweep_name, condition_hash, task, attempt)
    return PlannedTrial(
        name=name,
        sweep=sweep_name,
        task=task,
        attempt=attempt,
        trial_id=relay_trial_id(sweep_uid, name, 0),
        labels=trial_labels(sweep_name, condition_hash, task, attempt),
    )


def plan_trials(
    sweep_name: str,
    sweep_uid: str,
    condition_hash: str,
    tasks: Sequence[str],
    attempts: int,
) -> list[PlannedTrial]:
    """Every trial of the sweep, attempt-major: attempt 1 of every task comes first.

    Admission starts trials in this order, so a sweep stopped early (budget, suspend) has
    covered every task once before any task twice — pass@1 is meaningful at any point.
    """
    _checked(tasks, attempts, condition_hash)
    return [_planned(sweep_name, sweep_uid, condition_hash, task, attempt)
            for attempt in range(1, attempts + 1) for task in tasks]


class Settled(Protocol):
    def has(self, task: str, attempt: int) -> bool: ...


class Existing:
    """Which of the plan's (task, attempt) pairs have a BuzzTrial: those `settled` has (the
    settled trials' running sums, sweep/settled_sums.py), and those marked here from the watched
    trials, a byte per planned trial (100 KB at 100,000), where a set of the pairs was about 100
    bytes a trial, made anew every reconcile. A pair outside the plan (a task the dataset no
    longer lists) is never asked about."""

    def __init__(self, tasks: Sequence[str], attempts: int, settled: Settled | None = None) -> None:
        self.index = {task: i for i, task in enumerate(tasks)}
        self.attempts = attempts
        self.marks = bytearray(len(self.index) * max(attempts, 0))
        self.settled = settled

    def _slot(self, task: str, attempt: int) -> int | None:
        i = self.index.get(task)
        if i is None or not 1 <= attempt <= self.attempts:
            return None
        return (attempt - 1) * len(self.index) + i

    def add(self, task: str, attempt: int) -> None:
        if (slot := self._slot(task, attempt)) is not None:
            self.marks[slot] = 1

    def __contains__(self, pair: object) -> bool:
        if not isinstance(pair, tuple) or len(pair) != 2:
            return False
        slot = self._slot(*pair)
        if slot is None:
            return False
        return bool(self.marks[slot]) or (self.settled is not None and self.settled.has(*pair))


@dataclass(frozen=True)
class MissingTrials:
    """The planned trials that have no BuzzTrial yet: how many, and the first of them in plan order."""

    count: int
    first: list[PlannedTrial]


def plan_missing(
    sweep_name: str,
    sweep_uid: str,
    condition_hash: str,
    tasks: Sequence[str],
    attempts: int,
    existing: Container[tuple[str, int]],
    limit: int,
) -> MissingTrials:
    """plan_trials without the trials in `existing` ((task, attempt) pairs), named only for the
    first `limit` of them: admission never starts more than spec.parallelism in one tick, and
    naming all of a 100,000-trial sweep on every tick cost 1.4 CPU-s (bench/scale.py). A pair
    stands for its name because the name is a pure function of (sweep, condition, task, attempt)."""
    _checked(tasks, attempts, condition_hash)
    first: list[PlannedTrial] = []
    count = 0
    for attempt in range(1, attempts + 1):
        for task in tasks:
            if (task, attempt) in existing:
                continue
            count += 1
            if len(first) < limit:
                first.append(_planned(sweep_name, sweep_uid, condition_hash, task, attempt))
    return MissingTrials(count, first)
