"""`make bench`: every benchmark in turn, then one table of every figure with its target.

Each benchmark is its own process (so one's memory, event loop or crash cannot colour the
next) and appends its figures to a shared results file (bench/figures.py). A benchmark exits 0
when every target it judged was met and 1 when one was missed; anything else is a crash, named
under the table, and so is a benchmark that printed no figure or exited 1 without a missed
target (Python exits 1 on an uncaught exception, too). A crash fails the run: a benchmark that
measured nothing must never read as one that passed.

    .venv/bin/python bench/run.py                 # all
    .venv/bin/python bench/run.py relay storage   # some, by script name

From a plain shell the local cluster's kubeconfig is found as `make` finds it.
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

from figures import RESULTS_ENV, Figure, load, table  # noqa: E402

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


# `make` exports this when KUBECONFIG is unset (Makefile); a plain shell gets the same.
LOCAL_KUBECONFIG = Path("/var/tmp/buzz-operator/pki/kubeconfig")


def crash_reason(code: int, figures: list[Figure]) -> str | None:
    """Why a benchmark that exited ``code`` after recording ``figures`` counts as crashed, or None."""
    if code not in (0, 1):
        return f"exit {code}"
    if not figures:
        return f"exit {code} with no figure printed"
    if code == 1 and not any(f.passed is False for f in figures):
        return "exit 1 with no target missed (an exception?)"
    return None


def environment(results: Path, environ: dict[str, str]) -> dict[str, str]:
    env = {**environ, RESULTS_ENV: str(results)}
    if not env.get("KUBECONFIG") and LOCAL_KUBECONFIG.is_file():
        env["KUBECONFIG"] = str(LOCAL_KUBECONFIG)
    return env


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
        env = environment(results, dict(os.environ))
        for name in chosen:
            print(f"== bench/{name}.py", flush=True)
            began, before = time.monotonic(), len(load(results))
            code = subprocess.call([sys.executable, str(HERE / f"{name}.py"), *BENCHMARKS[name]], env=env)
            print(f"== bench/{name}.py: exit {code} after {time.monotonic() - began:.0f} s", flush=True)
            if (why := crash_reason(code, load(results)[before:])) is not None:
                crashed.append(f"{name} ({why})")
        figures = load(results)
    print(f"\nbuzz-operator benchmarks ({time.monotonic() - started:.0f} s on {os.cpu_count()} CPUs)\n")
    print(table(figures))
    notes = [f"- {f.name}: {f.note}" for f in figures if f.note]
    if notes:
        print("\nnotes:\n" + "\n".join(notes))
    for name in crashed:
        print(f"CRASHED: bench/{name} — its figures are missing or incomplete above")
    missed = [f.name for f in figures if f.passed is False]
    print(f"\n{len(figures)} figures, {len(missed)} missed, {len(crashed)} benchmark(s) crashed")
    return 1 if missed or crashed else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
