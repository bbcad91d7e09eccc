"""Headroom decides what a memory-hungry task scores, and the operator says so
(docs/resources.md): the two hungry tasks of tests/support/hungry_tasks.py, swept at 1× and at 3×
task.toml's memory on the local cluster's real kubelet and cgroups. At 1× `oom-container` is
`OOMKilled` (infra, retried until the retries run out) and `oom-process` keeps its 0 with
`ResourcePressure`; at 3× both pass. The results' box figures for both sweeps are printed."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from kopf.testing import KopfRunner

from tests.support.cluster import ROOT, settled_trials
from tests.support.hungry_tasks import HUNGRY, TASK_MIB, hungry_tasks


def _sweep(make_sweep, name: str, store: Path, multiple: int) -> dict:  # type: ignore[no-untyped-def, type-arg]
    body = make_sweep(name, store_url=f"file://{store}", tasks=list(HUNGRY), retry={"maxRetries": 1},
                      resources={"limitMultiple": multiple})
    body["spec"]["dataset"] = {"configMapRef": {"name": "hungry-tasks"}}
    return body


def _results(name: str, namespace: str, store: Path) -> dict:  # type: ignore[type-arg]
    shown = subprocess.run(
        [str(ROOT / ".venv" / "bin" / "buzzctl"), "sweep", "results", name, "-n", namespace,
         "--store", f"file://{store}", "-o", "json"], capture_output=True, text=True, check=True)
    return json.loads(shown.stdout)


def test_headroom_turns_an_oom_kill_and_a_pressured_zero_into_passes(  # type: ignore[no-untyped-def]
    namespace, crds, sweep_secrets, make_sweep, tmp_path: Path
) -> None:
    store = tmp_path / "store"
    subprocess.run(["kubectl", "-n", namespace, "create", "configmap", "hungry-tasks",
                    *(f"--from-literal={k}={v}" for k, v in hungry_tasks().items())], check=True, capture_output=True)
    sweeps = {"tight": _sweep(make_sweep, "tight", store, 1), "roomy": _sweep(make_sweep, "roomy", store, 3)}
    with KopfRunner(["run", "--standalone", "-n", namespace, "-m", "buzz_operator.handlers"], timeout=60) as runner:
        for body in sweeps.values():
            subprocess.run(["kubectl", "-n", namespace, "apply", "-f", "-"], input=json.dumps(body), check=True,
                           capture_output=True, text=True)
        trials = settled_trials(namespace, 4, 900)
        for name in sweeps:
            subprocess.run(["kubectl", "-n", namespace, "delete", "buzzsweep", name, "--wait=false"],
                           capture_output=True)
    assert runner.exception is None, runner.output
    by = {(t["spec"]["sweepName"], t["spec"]["task"]): t for t in trials}
    assert len(by) == 4, [(t["metadata"]["name"], t.get("status")) for t in trials]
    status = {key: t.get("status") or {} for key, t in by.items()}

    killed = status["tight", "oom-container"]
    assert (killed["phase"], killed.get("reason"), killed.get("failureClass")) == ("Failed", "OOMKilled", "infra"), killed
    assert killed["retries"] == 1 and [t["reason"] for t in killed["failedTries"]] == ["OOMKilled"] * 2, killed

    pressed = status["tight", "oom-process"]
    assert pressed["phase"] == "Succeeded" and pressed["reward"] == 0, pressed  # the score stands
    pressure = [c for c in pressed.get("conditions") or [] if c["type"] == "ResourcePressure"]
    assert pressure and pressure[0]["status"] == "True" and pressure[0]["reason"] == "ProcessesOOMKilled", pressed
    assert pressed["resourceUsage"]["agents"]["oomKills"] >= 1, pressed

    for task in HUNGRY:
        roomy = status["roomy", task]
        assert (roomy["phase"], roomy["reward"], roomy.get("retries", 0)) == ("Succeeded", 1, 0), roomy
        assert roomy["resourceUsage"]["agents"]["oomKills"] == 0, roomy
        assert roomy["resourceUsage"]["agents"]["peakMemoryMB"] > TASK_MIB, roomy  # it needed the room

    box = {name: _results(name, namespace, store)["conditions"][0] for name in sweeps}
    for name, row in box.items():
        print(f"\n[headroom] {name}: pass {row['pass_rate']:.2f} {row['statistics']['pass_rate']}; "
              f"box {row['statistics']['box']}")
    tight, roomy = (box[name]["statistics"]["box"] for name in ("tight", "roomy"))
    assert tight["infra_rate"]["estimate"] == 0.5 and tight["pressure_rate"]["estimate"] == 0.5, tight
    assert roomy["infra_rate"]["estimate"] == 0 and roomy["pressure_rate"]["estimate"] == 0, roomy
    assert box["roomy"]["pass_rate"] == 1 and box["tight"]["pass_rate"] == 0, box


def test_under_gvisor_a_process_over_the_limit_takes_the_sandbox_down(  # type: ignore[no-untyped-def]
    namespace, crds, sweep_secrets, make_sweep, tmp_path: Path
) -> None:
    """gVisor's Sentry holds all of the sandbox's memory, so the kernel kills it, not the one
    process: `oom-process`, which under runc on cgroup v1 keeps its container (ResourcePressure),
    ends `OOMKilled` under gVisor — infra, never a pressured 0 (docs/isolation.md#telemetry)."""
    store = tmp_path / "store"
    subprocess.run(["kubectl", "-n", namespace, "create", "configmap", "hungry-tasks",
                    *(f"--from-literal={k}={v}" for k, v in hungry_tasks().items())], check=True, capture_output=True)
    body = _sweep(make_sweep, "sandboxed", store, 1)
    body["spec"] |= {"include": ["oom-process"], "runtimeClassName": "gvisor", "retry": {"maxRetries": 0}}
    with KopfRunner(["run", "--standalone", "-n", namespace, "-m", "buzz_operator.handlers"], timeout=60) as runner:
        subprocess.run(["kubectl", "-n", namespace, "apply", "-f", "-"], input=json.dumps(body), check=True,
                       capture_output=True, text=True)
        (trial,) = settled_trials(namespace, 1, 600) or [None]
        subprocess.run(["kubectl", "-n", namespace, "delete", "buzzsweep", "sandboxed", "--wait=false"],
                       capture_output=True)
    assert runner.exception is None, runner.output
    status = (trial or {}).get("status") or {}
    assert (status.get("phase"), status.get("reason"), status.get("failureClass")) == ("Failed", "OOMKilled", "infra"), status
    assert not [c for c in status.get("conditions") or [] if c["type"] == "ResourcePressure"], status
