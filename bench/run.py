"""`make bench`: every benchmark in turn, then one table of every figure with its target.

Each benchmark is its own process (so one's memory, event loop or crash cannot colour the
next) and appends its figures to a shared results file (bench/figures.py). A benchmark that
crashes is named in the table as a miss rather than hiding the figures of the others.

    .venv/bin/python bench/run.py                 # all
    .venv/bin/python bench/run.py relay storage   # some, by script name
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from figures import RESULTS_ENV, load, table  # noqa: E402

# Cheapest first (no cluster), then the cluster benchmarks; scale last because it is longest.
# Its timeout keeps `make bench` under 20 minutes: a run that cannot finish 10,000 trials in it
# reports the figures of the trials it did, marked incomplete.
BENCHMARKS: dict[str, list[str]] = {
    "ledger": ["--quick"],
    "relay": [],
    "storage": [],
    "results": [],
    "trial": ["--attempts", "5"],
    "scale": ["--trials", "10000", "--timeout", "660"],
}


def main(argv: list[str]) -> int:
    chosen = argv or list(BENCHMARKS)
    unknown = [name for name in chosen if name not in BENCHMARKS]
    if unknown:
        print(f"unknown benchmark(s): {', '.join(unknown)}; known: {', '.join(BENCHMARKS)}")
        return 2
    crashed: list[str] = []
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="buzz-bench-") as tmp:
        results = Path(tmp) / "figures.jsonl"
        results.touch()
        for name in chosen:
            print(f"== bench/{name}.py", flush=True)
            began = time.monotonic()
            code = subprocess.call(
                [sys.executable, str(HERE / f"{name}.py"), *BENCHMARKS[name]],
                env={**os.environ, RESULTS_ENV: str(results)},
            )
            print(f"== bench/{name}.py: exit {code} after {time.monotonic() - began:.0f} s", flush=True)
            if code not in (0, 1):  # 1 = ran and missed a target; anything else = crashed
                crashed.append(f"{name} (exit {code})")
        figures = load(results)
    print(f"\nbuzz-operator benchmarks ({time.monotonic() - started:.0f} s on {os.cpu_count()} CPUs)\n")
    print(table(figures))
    notes = [f"- {f.name}: {f.note}" for f in figures if f.note]
    if notes:
        print("\nnotes:\n" + "\n".join(notes))
    for name in crashed:
        print(f"CRASHED: bench/{name} — its figures are missing above")
    missed = [f.name for f in figures if f.passed is False]
    print(f"\n{len(figures)} figures, {len(missed)} missed, {len(crashed)} benchmark(s) crashed")
    return 1 if missed or crashed else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
