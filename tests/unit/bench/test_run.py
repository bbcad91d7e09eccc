"""bench/run.py: a benchmark that died or measured nothing is a crash, never a pass."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[3] / "bench"
sys.path.insert(0, str(BENCH))

from figures import LOWER, Figure  # noqa: E402
from run import crash_reason, environment  # noqa: E402

MET = Figure("p50", "ms", [1.0], LOWER, 5)
MISSED = Figure("p50", "ms", [9.0], LOWER, 5)


@pytest.mark.parametrize(("code", "figures", "crashed"), [
    (0, [MET], None),
    (1, [MISSED], None),                       # ran, and a target was missed
    (0, [], "exit 0 with no figure printed"),
    (1, [], "exit 1 with no figure printed"),  # died before measuring anything
    (1, [MET], "exit 1 with no target missed (an exception?)"),
    (2, [MET], "exit 2"),
    (-9, [], "exit -9"),
])
def test_crash_reason(code: int, figures: list[Figure], crashed: str | None) -> None:
    assert crash_reason(code, figures) == crashed


def test_an_explicit_kubeconfig_is_kept(tmp_path: Path) -> None:
    env = environment(tmp_path / "f.jsonl", {"KUBECONFIG": "/elsewhere"})
    assert env["KUBECONFIG"] == "/elsewhere" and env["BUZZ_BENCH_RESULTS"] == str(tmp_path / "f.jsonl")


def runner(tmp_path: Path, scripts: dict[str, str], argv: list[str]) -> subprocess.CompletedProcess[str]:
    """The real runner, copied beside benchmark scripts of its own, run as `bench/run.py ARGV`."""
    for name in ("run.py", "figures.py"):
        shutil.copy(BENCH / name, tmp_path / name)
    for name, text in scripts.items():
        (tmp_path / f"{name}.py").write_text(text)
    benchmarks = {name: [] for name in scripts}
    return subprocess.run(
        [sys.executable, "-c", f"import sys, run; run.BENCHMARKS = {benchmarks!r}; sys.exit(run.main({argv!r}))"],
        cwd=tmp_path, capture_output=True, text=True, timeout=60, env={"PATH": "/usr/bin:/bin"},
    )


def test_a_benchmark_that_dies_fails_the_run(tmp_path: Path) -> None:
    run = runner(tmp_path, {"dies": "raise RuntimeError('no cluster')\n"}, ["--runs", "1"])
    assert run.returncode == 1
    assert "CRASHED: bench/dies (exit 1 with no figure printed)" in run.stdout
    assert "0 figures, 0 missed, 1 benchmark(s) crashed" in run.stdout


def test_every_run_of_a_benchmark_that_dies_is_named_and_it_counts_once(tmp_path: Path) -> None:
    run = runner(tmp_path, {"dies": "raise RuntimeError('no cluster')\n"}, [])  # --runs 3 by default
    assert run.returncode == 1
    for n in (1, 2, 3):
        assert f"CRASHED: bench/dies, run {n} (exit 1 with no figure printed)" in run.stdout
    assert "0 figures, 0 missed, 1 benchmark(s) crashed" in run.stdout


# run N of bench/run.py records RUN_VALUES[N] (and 4 more samples around it); run 2 of flaky exits 3
MEASURES = """
import os, sys
from figures import LOWER, Figure, record
run = int(os.environ["BUZZ_BENCH_RUN"])
value = {1: 1.0, 2: 9.0, 3: 2.0}[run]
record(Figure("p50", "ms", [value - 0.5, value, value + 0.5], LOWER, 5))
sys.exit(3 if "flaky" in __file__ and run == 2 else 0)
"""


def test_runs_are_pooled_as_the_median_of_their_medians_with_the_run_to_run_spread(tmp_path: Path) -> None:
    run = runner(tmp_path, {"steady": MEASURES}, [])
    assert run.returncode == 0, run.stdout
    lines = run.stdout.splitlines()
    header = next(line for line in lines if line.startswith("figure"))
    row = lines[lines.index(header) + 2]
    assert "median of the runs' medians (min..max of them, n runs)" in header
    assert row.split() == ["p50", "<=", "5", "ms", "2.0", "ms", "(1.0..9.0,", "n=3)", "pass"]
    assert "1 figures, 0 missed, 0 benchmark(s) crashed" in run.stdout


def test_a_run_that_crashes_fails_the_whole_run_though_the_others_measured(tmp_path: Path) -> None:
    run = runner(tmp_path, {"flaky": MEASURES}, ["--runs", "3"])
    assert run.returncode == 1
    assert "CRASHED: bench/flaky, run 2 (exit 3)" in run.stdout
    assert "(1.0..9.0, n=3)" in run.stdout  # its figures were recorded before it died, so they count
    assert "1 figures, 0 missed, 1 benchmark(s) crashed" in run.stdout


def test_runs_below_one_and_unknown_names_are_refused(tmp_path: Path) -> None:
    assert runner(tmp_path, {"steady": MEASURES}, ["--runs", "0"]).returncode == 2
    assert "unknown benchmark(s): nope" in runner(tmp_path, {"steady": MEASURES}, ["nope"]).stdout
