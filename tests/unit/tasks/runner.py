"""Runs a task's real tests/test.sh with bash, pointed at host paths through its BUZZ_* overrides."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

TASKS_ROOT = Path(__file__).resolve().parents[3] / "tasks"


@dataclass(frozen=True)
class Verdict:
    returncode: int
    stdout: str
    stderr: str
    reward: dict[str, Any]
    details: dict[str, Any]


def run_test_sh(task: str, verifier_dir: Path, **overrides: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    # `python3` in test.sh must be an interpreter we know exists here: the one running pytest.
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env["BUZZ_TESTS_DIR"] = str(TASKS_ROOT / task / "tests")
    env["BUZZ_VERIFIER_DIR"] = str(verifier_dir)
    env.update(overrides)
    return subprocess.run(
        ["bash", str(TASKS_ROOT / task / "tests" / "test.sh")],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def grade(task: str, evidence: Path, verifier_dir: Path, **overrides: str) -> Verdict:
    """Run test.sh on ``evidence`` and read back reward.json and details.json."""
    done = run_test_sh(task, verifier_dir, BUZZ_EVIDENCE=str(evidence), **overrides)
    assert done.returncode == 0, f"test.sh failed ({done.returncode}): {done.stderr}"
    reward = json.loads((verifier_dir / "reward.json").read_text())
    details = json.loads((verifier_dir / "details.json").read_text())
    return Verdict(done.returncode, done.stdout, done.stderr, reward, details)


def expected_metrics(
    reward_dimensions: tuple[str, ...], diagnostic_dimensions: tuple[str, ...], failing: frozenset[str]
) -> dict[str, float]:
    """Every dimension 1.0 unless listed as failing; reward only follows the reward dimensions."""
    unknown = failing - set(reward_dimensions) - set(diagnostic_dimensions)
    assert not unknown, f"case names unknown dimensions {sorted(unknown)}"
    metrics = {name: 0.0 if name in failing else 1.0 for name in (*reward_dimensions, *diagnostic_dimensions)}
    metrics["reward"] = 0.0 if failing & set(reward_dimensions) else 1.0
    return metrics
