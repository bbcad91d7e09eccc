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


def test_a_benchmark_that_dies_fails_the_run(tmp_path: Path) -> None:
    """The real runner, copied beside a benchmark script that raises: named as crashed, exit 1."""
    for name in ("run.py", "figures.py"):
        shutil.copy(BENCH / name, tmp_path / name)
    (tmp_path / "dies.py").write_text("raise RuntimeError('no cluster')\n")
    run = subprocess.run(
        [sys.executable, "-c", "import sys, run; run.BENCHMARKS = {'dies': []}; sys.exit(run.main([]))"],
        cwd=tmp_path, capture_output=True, text=True, timeout=60,
    )
    assert run.returncode == 1
    assert "CRASHED: bench/dies (exit 1 with no figure printed)" in run.stdout
    assert "0 figures, 0 missed, 1 benchmark(s) crashed" in run.stdout
