"""`make bench`: every benchmark, N times each (--runs, default 3), then one table of every
figure with its target.

Each run of a benchmark is its own process (so one's memory, event loop or crash cannot colour
the next) and appends its figures to a shared results file (bench/figures.py). A benchmark exits
0 when every target it judged was met and 1 when one was missed; anything else is a crash, named
under the table, and so is a run that printed no figure or exited 1 without a missed target
(Python exits 1 on an uncaught exception, too). A crash fails the whole run: a benchmark that
measured nothing must never read as one that passed. With N > 1 each figure of the table is
pooled over the runs (figures.pool): the median of the N runs' medians is judged, and the
min..max printed is the run-to-run spread — a benchmark's samples within one run share that
run's machine load, so pooling them all would claim more independent samples than there are.

    .venv/bin/python bench/run.py                       # all, 3 runs each
    .venv/bin/python bench/run.py relay storage         # some, by script name
    .venv/bin/python bench/run.py --runs 1 trial        # one run: the table shows its samples

From a plain shell the local cluster's kubeconfig is found as `make` finds it.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from figures import (  # noqa: E402
    OUT_ENV,
    RESULTS_ENV,
    RUN_ENV,
    RUNS_HEADER,
    SAMPLES_HEADER,
    Figure,
    load,
    out_dir,
    pool,
    table,
)

# Cheapest first (no cluster), then the cluster benchmarks; the two 10,000-trial ones last.
# Their timeouts keep one run of scale under 12 minutes and of kwok (whose pods load the
# apiserver too) under 20: a run that cannot finish 10,000 trials in it reports the figures of
# the trials it did, marked incomplete.
BENCHMARKS: dict[str, list[str]] = {
    "ledger": ["--quick"],
    "relay": [],
    "storage": [],
    "results": [],
    "tick": [],
    "trial": ["--attempts", "5"],
    "warm": ["--attempts", "5"],
    "node": [],
    "headroom": ["--attempts", "3"],
    "scale": ["--trials", "10000", "--timeout", "660"],
    "kwok": ["--trials", "10000", "--timeout", "1100"],
    "kwok-warm": ["--trials", "1000", "--nodes", "10", "--parallelism", "100", "--warm", "16", "--hold", "10",
                  "--timeout", "600"],
}

# benchmarks that run another's script with other arguments
SCRIPTS = {"kwok-warm": "kwok"}

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
    env[OUT_ENV] = str(out_dir(env))
    return env


def fresh_outputs(out: Path) -> None:
    """Files the benchmarks append to over the runs of one `bench/run.py` start empty."""
    (out / "p1-phases.jsonl").unlink(missing_ok=True)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="bench/run.py", description="the benchmarks, then one table")
    parser.add_argument("--runs", type=int, default=3, help="runs of each benchmark (default 3)")
    parser.add_argument("names", nargs="*", metavar="NAME", help=f"benchmarks, of: {', '.join(BENCHMARKS)}")
    args = parser.parse_args(argv)
    chosen = args.names or list(BENCHMARKS)
    unknown = [name for name in chosen if name not in BENCHMARKS]
    if unknown or args.runs < 1:
        print(f"unknown benchmark(s): {', '.join(unknown)}; known: {', '.join(BENCHMARKS)}" if unknown
              else "--runs must be at least 1")
        return 2
    crashed: list[tuple[str, str]] = []  # (benchmark, what crashed and why)
    runs: list[list[Figure]] = [[] for _ in range(args.runs)]
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="buzz-bench-") as tmp:
        results = Path(tmp) / "figures.jsonl"
        results.touch()
        env = environment(results, dict(os.environ))
        fresh_outputs(Path(env[OUT_ENV]))
        for name in chosen:
            for run in range(args.runs):
                script = SCRIPTS.get(name, name)
                label = f"bench/{script}.py" + (f" ({name})" if script != name else "") + (
                    f", run {run + 1} of {args.runs}" if args.runs > 1 else "")
                print(f"== {label}", flush=True)
                began, before = time.monotonic(), len(load(results))
                code = subprocess.call([sys.executable, str(HERE / f"{script}.py"), *BENCHMARKS[name]],
                                       env={**env, RUN_ENV: str(run + 1)})
                print(f"== {label}: exit {code} after {time.monotonic() - began:.0f} s", flush=True)
                measured = load(results)[before:]
                runs[run] += measured
                if (why := crash_reason(code, measured)) is not None:
                    crashed.append((name, name + (f", run {run + 1}" if args.runs > 1 else "") + f" ({why})"))
    figures = pool(runs) if args.runs > 1 else runs[0]
    print(f"\nbuzz-operator benchmarks ({time.monotonic() - started:.0f} s on {os.cpu_count()} CPUs, "
          f"{args.runs} run(s) of each)\n")
    print(table(figures, RUNS_HEADER if args.runs > 1 else SAMPLES_HEADER))
    notes = [f"- {f.name}: {f.note}" for f in figures if f.note]
    if notes:
        print(("\nnotes (of the last run that measured each):\n" if args.runs > 1 else "\nnotes:\n")
              + "\n".join(notes))
    for _, what in crashed:
        print(f"CRASHED: bench/{what} — its figures are missing or incomplete above")
    missed = [f.name for f in figures if f.passed is False]
    print(f"\n{len(figures)} figures, {len(missed)} missed, {len({name for name, _ in crashed})} benchmark(s) crashed")
    return 1 if missed or crashed else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
