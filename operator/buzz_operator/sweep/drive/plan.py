"""The plan of a tick: which (task, attempt) pairs exist and the sweep's figures, from its
watched trials and its settled trials' running sums (sweep/settled_sums.py), so a tick reads its
active trials alone, however many have settled; then the missing trials are planned, the first
few of them named (sweep/planner.py): those admission may start now and the next ones, whose
pods are kept warm and images pulled ahead."""

from __future__ import annotations

from dataclasses import dataclass

from buzz_operator.sweep.drive.inputs import SweepInputs
from buzz_operator.sweep.drive.tick import Tick
from buzz_operator.sweep.planner import Existing, MissingTrials, plan_missing
from buzz_operator.sweep.rollup import Tally


@dataclass(frozen=True)
class Plan:
    counted: Tally  # the sweep's trials as they were at the start of the tick; admit adds the new ones
    created: int  # how many existed before this tick created any
    missing: MissingTrials


def named(read: SweepInputs, tick: Tick) -> int:
    """How many missing trials are named: those admission may start now (spec.parallelism), and as
    many again plus the warm pods' surplus, whose pods are made and images pulled ahead."""
    warm = read.spec.warm_pods if read.spec.warm_pods is not None else tick.settings.warm_pods
    return 2 * read.spec.parallelism + warm


def plan(tick: Tick, read: SweepInputs) -> Plan:
    task_names = [t.name for t in read.tasks]
    settled, also_watched = tick.mine.settled_sums()
    existing = Existing(task_names, read.spec.attempts, settled=settled)
    counted = settled.tally(less=also_watched)
    for trial in tick.mine.watched:
        existing.add(trial.task, trial.attempt)
        counted.add(trial)
    missing = plan_missing(tick.name, tick.uid, read.manifest.sha256, task_names, read.spec.attempts, existing,
                           limit=named(read, tick))
    return Plan(counted, counted.created, missing)
