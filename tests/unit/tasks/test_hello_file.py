"""hello-file: its real test.sh and solve.sh, run against a temporary directory standing in for /app."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.unit.tasks.runner import TASKS_ROOT, run_test_sh

TASK = "hello-file"


def _reward(app_dir: Path, verifier_dir: Path) -> str:
    done = run_test_sh(TASK, verifier_dir, BUZZ_APP_DIR=str(app_dir))
    assert done.returncode == 0, done.stderr
    return (verifier_dir / "reward.txt").read_text()


@pytest.mark.parametrize(
    ("content", "reward"),
    [
        (b"Hello, world!", "1\n"),
        (b"Hello, world!\n", "1\n"),
        (b"  Hello, world!  \n\n", "1\n"),
        (b"hello, world!", "0\n"),
        (b"Hello, world", "0\n"),
        (b"Hello, world!!", "0\n"),
        (b"", "0\n"),
        (b"\xff\xfe", "0\n"),
    ],
    ids=["exact", "newline", "padded", "lowercase", "no-bang", "extra-bang", "empty", "not-utf8"],
)
def test_reward_follows_the_stripped_content(content: bytes, reward: str, tmp_path: Path) -> None:
    app = tmp_path / "app"
    app.mkdir()
    (app / "hello.txt").write_bytes(content)
    assert _reward(app, tmp_path / "verifier") == reward


def test_missing_file_scores_zero(tmp_path: Path) -> None:
    (tmp_path / "app").mkdir()
    assert _reward(tmp_path / "app", tmp_path / "verifier") == "0\n"


def test_oracle_solution_scores_one(tmp_path: Path) -> None:
    app = tmp_path / "app"
    env = {**os.environ, "BUZZ_APP_DIR": str(app)}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    solve = TASKS_ROOT / TASK / "solution" / "solve.sh"
    subprocess.run(["bash", str(solve)], env=env, check=True, capture_output=True, timeout=30)
    assert _reward(app, tmp_path / "verifier") == "1\n"
