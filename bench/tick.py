"""What one sweep reconcile allocates and spends for its trials, at 10,000 and 100,000 trials (no cluster).

A sweep's reconcile plans what is missing and adds up the status figures each tick (5 s) — from
its watched trials and the settled trials' running sums since 2026-12-06
(sweep/settled_sums.py), from a pass over every trial before — and, when it is due, reads every
trial for summary.json. What a tick allocates and frees, the
allocators keep (docs/performance.md#memory), so a transient that grows with the sweep is RSS
that grows with it. This builds the settled trials' columns of one namespace as the operator
keeps them (sweep/drive/settled.py, from trial bodies as the apiserver returns them, in mapped
files: sweep/drive/mapped.py) and measures the peak of traced Python memory (tracemalloc) and the
CPU time of each pass a tick makes, the way the operator makes it (sweep/known.py, the planner's
marks, the running sums), and beside it the pass over every trial (until 2026-12-06) and the
list-and-set shape before that (until 2026-12-03) — so they can be read side by side.

Run: ``.venv/bin/python bench/tick.py`` (10,000 and 100,000 trials; about a minute) or
``--trials 10000``. Figures are information, not targets: the target is the RSS (bench/scale.py).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "operator"))

from buzz_operator.storage.file_store import FileStore
from buzz_operator.sweep.drive import documents
from buzz_operator.sweep.drive.mapped import MappedStore
from buzz_operator.sweep.drive.settled import SettledTrials
from buzz_operator.sweep.known import SweepTrials
from buzz_operator.sweep.planner import Existing
from buzz_operator.sweep.rollup import Tally, rollup
from buzz_operator.sweep.summary_doc import results_digest, summary_head
from figures import INFO, Figure, record

TASKS = 250
NAMESPACE, SWEEP = "bench", "tick"
MB = 1 << 20


def trial_body(i: int, attempts: int) -> dict[str, Any]:
    task, attempt = f"task-{i % TASKS:04d}", i // TASKS + 1
    ok = i % 3 != 0
    return {
        "apiVersion": "bench.buzz.dev/v1alpha1", "kind": "BuzzTrial",
        "metadata": {"name": f"{SWEEP}-{i:08x}{attempts:02x}", "namespace": NAMESPACE,
                     "labels": {"bench.buzz.dev/settled": "true"}},
        "spec": {"sweepName": SWEEP, "task": task, "attempt": attempt, "endpoints": ["claude", "gpt"]},
        "status": {"phase": "Succeeded" if ok else "Failed", "outcome": "ok" if ok else "timeout",
                   "failureClass": None if ok else "outcome", "reward": 1.0 if ok else 0.0,
                   "costUSD": {"floor": 0.01 * (i % 7), "ceiling": 0.012 * (i % 7)},
                   "stack": {"digest": "a" * 64}},
    }


def settled_sweep(trials: int, folder: Path) -> tuple[SettledTrials, list[str], int]:
    attempts = -(-trials // TASKS)
    settled = SettledTrials(store=MappedStore(folder))
    for i in range(trials):
        settled.add(trial_body(i, attempts))
    return settled, [f"task-{t:04d}" for t in range(TASKS)], attempts


def peak(step: Callable[[], object]) -> tuple[float, float]:
    """(peak traced MB above the start, CPU seconds) of one call."""
    tracemalloc.start()
    start = tracemalloc.get_traced_memory()[0]
    began = time.process_time()
    step()
    cpu = time.process_time() - began
    top = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return (top - start) / MB, cpu


def measure(trials: int) -> dict[str, tuple[float, float]]:
    with tempfile.TemporaryDirectory() as columns:
        return _measure(trials, Path(columns))


def _measure(trials: int, columns: Path) -> dict[str, tuple[float, float]]:
    settled, tasks, attempts = settled_sweep(trials, columns)
    mine = SweepTrials([], settled=lambda: settled.summaries(NAMESPACE, SWEEP),
                       settled_by_name=lambda: settled.summaries_by_name(NAMESPACE, SWEEP),
                       settled_get=lambda name: settled.get(NAMESPACE, name),
                       settled_sums=lambda: settled.sums(NAMESPACE, SWEEP))

    def plan_and_tally() -> None:  # as sweep/drive/plan.py: the running sums and the watched trials
        sums, also = mine.settled_sums()
        existing, counted = Existing(tasks, attempts, settled=sums), sums.tally(less=also)
        for trial in mine.watched:
            existing.add(trial.task, trial.attempt)
            counted.add(trial)
        sum(1 for attempt in range(1, attempts + 1) for task in tasks if (task, attempt) in existing)
        counted.figures(attempts, planned=len(tasks) * attempts)

    def plan_and_tally_pass() -> None:  # until 2026-12-06: one pass over every trial each tick
        existing, counted = Existing(tasks, attempts), Tally()
        for trial in mine:
            existing.add(trial.task, trial.attempt)
            counted.add(trial)
        sum(1 for attempt in range(1, attempts + 1) for task in tasks if (task, attempt) in existing)
        counted.figures(attempts, planned=len(tasks) * attempts)

    def before_list_and_set() -> None:  # the reconcile's shape until 2026-12-03
        listed = list(mine)
        existing = {(t.task, t.attempt) for t in listed}
        rollup(listed, attempts, planned=len(tasks) * attempts)
        sum(t.cost_ceiling for t in listed)
        del existing

    def head() -> None:
        summary_head(sweep=SWEEP, namespace=NAMESPACE, condition="c", condition_hash="h" * 64,
                     rollup=rollup(mine, attempts), trials=mine, attempts=attempts,
                     now=datetime.now(UTC))

    with tempfile.TemporaryDirectory() as folder:
        store = FileStore(Path(folder))
        head_doc = {"sweep": SWEEP}

        def write() -> None:
            asyncio.run(documents.write_summary(store, SWEEP, head_doc, mine.by_name()))

        def write_before() -> None:  # sorted as a list of every summary, as until 2026-12-03
            ordered = sorted(mine, key=lambda t: t.name)
            asyncio.run(documents.write_summary(store, SWEEP, head_doc, ordered))

        return {
            "plan and tally (every tick), running sums": peak(plan_and_tally),
            "plan and tally, a pass over every trial (before 2026-12-06)": peak(plan_and_tally_pass),
            "plan and tally, as a list and a set (before)": peak(before_list_and_set),
            "results digest (a tick a rewrite may be due)": peak(lambda: results_digest(mine)),
            "summary head with its stack rows": peak(head),
            "summary.json written, in name order": peak(write),
            "summary.json written, sorted as a list (before)": peak(write_before),
        }


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, action="append", help="trials in the sweep (repeatable)")
    args = parser.parse_args(argv)
    sizes = args.trials or [10_000, 100_000]
    for size in sizes:
        for step, (mb, cpu) in measure(size).items():
            record(Figure(f"P2 reconcile peak traced memory, {step}, {size:,} trials", "MB", [mb], INFO,
                          decimals=2, note=f"{cpu:.2f} CPU-s traced"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
