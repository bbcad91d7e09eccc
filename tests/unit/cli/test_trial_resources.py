"""buzzctl trial resources on a real file:// store: the headroom and the box's figures by phase
from the trial's result.json, and a bundle without them saying so rather than showing zeros."""

from __future__ import annotations

import json
from pathlib import Path

from buzz_operator.cli.main import app
from typer.testing import CliRunner

USED = {"agents": {"cgroup": 1, "peakMemoryMB": 63.9, "memoryLimitMB": 64.0, "oomKills": 2, "cpuSeconds": 1.25,
                   "periods": 30, "throttledPeriods": 12, "throttledSeconds": 0.8},
        "verifier": {"cgroup": 1, "peakMemoryMB": 63.9, "oomKills": 0, "cpuSeconds": 0.1}}
ROOM = {"limitMultiple": 3.0, "cpuRequestFraction": 1.0, "memoryRequestFraction": 0.5}


def _store(root: Path, metadata: dict) -> str:  # type: ignore[type-arg]
    trial = root / "s" / "s-hello-1"
    trial.mkdir(parents=True)
    (trial / "result.json").write_text(json.dumps({"trial_name": "s-hello-1", "agent_result": {"metadata": metadata}}))
    return root.as_uri()


def _run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, ["trial", "resources", *args])
    return result.exit_code, result.stdout


def test_the_box_by_phase(tmp_path: Path) -> None:
    code, out = _run("s-hello-1", "--sweep", "s", "--store", _store(tmp_path, {"headroom": ROOM, "resource_usage": USED}))
    lines = out.splitlines()
    assert code == 0 and lines[0] == "headroom: limits 3× task.toml, requests 1 CPU / 0.5 memory"
    assert lines[1].split() == ["cgroup", "v1", "agents", "verifier"]
    kills = next(line for line in lines if line.startswith("OOM kills"))
    assert kills.split()[-2:] == ["2", "0"]
    limit = next(line for line in lines if line.startswith("memory limit"))
    assert limit.endswith("—") and "64 MiB" in limit  # the verifier's limit was not read: a dash, not 0
    code, raw = _run("s-hello-1", "--sweep", "s", "--store", tmp_path.as_uri(), "--json")
    assert code == 0 and json.loads(raw) == {"headroom": ROOM, "resource_usage": USED}


def test_a_bundle_without_figures_says_so(tmp_path: Path) -> None:
    code, out = _run("s-hello-1", "--sweep", "s", "--store", _store(tmp_path, {"condition": "c"}))
    assert code == 0
    assert out.splitlines() == ["headroom: not recorded (a bundle from before it was)",
                                "resource use: not read (no cgroup figures in this bundle)"]


def test_an_uncommitted_trial_is_a_user_error(tmp_path: Path) -> None:
    (tmp_path / "s" / "s-hello-1").mkdir(parents=True)
    (tmp_path / "s" / "s-hello-1" / "config.json").write_text("{}")
    code, _ = _run("s-hello-1", "--sweep", "s", "--store", tmp_path.as_uri())
    assert code == 1
