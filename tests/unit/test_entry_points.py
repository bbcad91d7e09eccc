"""Every console entry point prints help for --help and exits 0, touching nothing: the console
scripts of pyproject.toml and every module that runs under `python -m`. Found by scanning, so a
new entry point is covered without editing this file.

Each runs in an empty directory with an environment that holds no relay, database or cluster
settings: `python -m buzz_operator.dev.relay --help` used to fail with "RELAY_URL: required",
and the stack builder used to build a stack into a directory named `--help`."""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "operator"
BIN = Path(sys.executable).parent


def console_scripts() -> list[str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    return sorted(project["scripts"])


def runnable_modules() -> list[str]:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        if path.name == "__main__.py":
            found.append(".".join(path.parent.relative_to(PACKAGE).parts))
        elif 'if __name__ == "__main__":' in text:
            found.append(".".join(path.with_suffix("").relative_to(PACKAGE).parts))
    return found


def run_help(command: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(cwd), "PYTHONDONTWRITEBYTECODE": "1"}
    return subprocess.run([*command, "--help"], cwd=cwd, env=env, capture_output=True, text=True,
                          stdin=subprocess.DEVNULL, timeout=60)


def test_the_scan_finds_the_known_entry_points() -> None:
    assert {"buzzctl", "buzz-operator", "relay-forwarder"} <= set(console_scripts())
    assert {"buzz_operator.dev.relay", "buzz_operator.main", "buzz_operator.dev.stack.build",
            "buzz_operator.relay.forwarder"} <= set(runnable_modules())


@pytest.mark.parametrize("script", console_scripts())
def test_console_script_prints_help(script: str, tmp_path: Path) -> None:
    done = run_help([str(BIN / script)], tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "usage" in done.stdout.lower(), done.stdout
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("module", runnable_modules())
def test_python_m_module_prints_help(module: str, tmp_path: Path) -> None:
    done = run_help([sys.executable, "-m", module], tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.strip(), f"{module} --help printed nothing on stdout: {done.stderr}"
    assert list(tmp_path.iterdir()) == [], f"{module} --help wrote {list(tmp_path.iterdir())}"
