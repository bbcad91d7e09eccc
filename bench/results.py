"""buzzctl's results path: a sweep's bundles read from a file:// store into the summary rows, the
JSON document, and the HTML report — what `buzzctl sweep results` and `buzzctl report` do.

The sweep is built with the project's own ledger and storage code (tests/unit/results/
sweep_builder.py, every flag of the seed summariser present), then its trial dirs are
replicated to N trials. Prints the median and spread over 5 runs of each step.

Run: ``.venv/bin/python bench/results.py [--trials N]`` (default 1000).
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "operator"))
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from buzz_operator.cli.sweep_results import load_results_table  # noqa: E402
from buzz_operator.results import caveats, render_report, results_document  # noqa: E402
from buzz_operator.results.statistics import TaskCounts, mean_interval, paired_interval  # noqa: E402
from figures import INFO, LOWER, Figure, record  # noqa: E402

from tests.unit.results.sweep_builder import MIXED, build_sweep  # noqa: E402

RUNS = 5
# A person waits for this: a thousand-trial sweep should summarise in about a second from local disk
TARGET_SUMMARY_MS = 1500.0
# Every summary computes both intervals (2,000 resamples of 9 tasks x 5 attempts, overall and
# paired): well under a second, or a `buzzctl sweep results` waits on its statistics.
TARGET_INTERVALS_MS = 500.0


def replicate(root: Path, sweep: str, trials: int) -> None:
    base = sorted(p for p in (root / sweep).iterdir() if p.is_dir())
    for i in range(trials - len(base)):
        source = base[i % len(base)]
        shutil.copytree(source, root / sweep / f"{source.name}-r{i}")


def intervals_ms() -> list[float]:
    """Both bootstrap intervals of one summary, timed RUNS times."""
    tasks = [TaskCounts(5, c) for c in (0, 1, 2, 3, 4, 5, 2, 3, 1)]
    samples = []
    for _ in range(RUNS):
        began = time.perf_counter()
        mean_interval(tasks)
        paired_interval(list(zip(tasks, reversed(tasks), strict=True)))
        samples.append((time.perf_counter() - began) * 1000)
    return samples


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--trials", type=int, default=1000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="buzz-bench-results-") as tmp:
        root = Path(tmp)
        url = build_sweep(root, "bench", MIXED, sweep_config={"spec": {"attempts": 3}})
        replicate(root, "bench", args.trials)
        load_ms, doc_ms, report_ms = [], [], []
        for _ in range(RUNS):
            began = time.perf_counter()
            loaded = asyncio.run(load_results_table("bench", url, "default"))
            load_ms.append((time.perf_counter() - began) * 1000)
            began = time.perf_counter()
            document = results_document(
                loaded.table, loaded.store_url, with_failures=True, with_trials=True
            )
            doc_ms.append((time.perf_counter() - began) * 1000)
            began = time.perf_counter()
            render_report(document, caveats(loaded.table.rows))
            report_ms.append((time.perf_counter() - began) * 1000)
        n = len(loaded.table.trials) + len(loaded.table.unfinished)
    summary = record(
        Figure(f"results: read+summarise {n} trials (file://)", "ms", load_ms, LOWER, TARGET_SUMMARY_MS)
    )
    record(Figure(f"results: summary document, {n} trials", "ms", doc_ms, INFO))
    record(Figure(f"results: HTML report, {n} trials", "ms", report_ms, INFO))
    intervals = record(Figure("results: pass-rate and paired intervals, 9 tasks x 5 attempts", "ms",
                              intervals_ms(), LOWER, TARGET_INTERVALS_MS))
    return 0 if summary.passed and intervals.passed else 1


if __name__ == "__main__":
    sys.exit(main())
