"""Headroom decides what a memory-hungry task scores, and the operator says so
(docs/resources.md): the same two tasks, swept at 1× and at 3× task.toml's memory on the local
cluster's real kubelet and cgroups.

Both tasks are hello-file's verifier behind a command that wants 640 MiB, in a task that asks
for 384 MiB:
- `oom-container` takes its container down when the kernel kills for memory, as cgroup v2's
  `memory.oom.group` (which the kubelet sets) does to any process over the limit. On cgroup v1
  the kernel kills one process, so the command first makes the container's init the kernel's
  choice (`oom_score_adj` 1000, which any process may raise): the kubelet reports the container
  `OOMKilled`, the try is infra, retried, and at 1× the retries run out.
- `oom-process` lets the kernel kill only the command (cgroup v1's way, and v2's with the
  kubelet's singleProcessOOMKill): the container lives, the team saves nothing and scores 0 —
  the score stands, and the trial carries `ResourcePressure`.
At 3× both pass. The results' box figures for both sweeps are printed."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

from buzz_operator.api.sweep import DEFAULT_TASK_IMAGE_REGISTRY
from buzz_operator.dataset import builtin_dataset_path, load_dataset
from kopf.testing import KopfRunner

from tests.support.cluster import ROOT, kubectl_json

TERMINAL = {"Succeeded", "Failed"}
HOG_MIB, TASK_MIB = 640, 384
# touches every page, so the memory is resident and not the zero page
HOG = (f"python3 -c \"b = bytearray({HOG_MIB} * 2**20); b[::4096] = b'x' * ({HOG_MIB} * 256); "
       "print('Hello, world!')\"")
COMMANDS = {"oom-process": HOG, "oom-container": f"echo 1000 > /proc/1/oom_score_adj; {HOG}"}


def hungry_tasks() -> dict[str, str]:
    """The two tasks as ConfigMap data (paths with '__'): hello-file with a hungry command."""
    source = ROOT / "tasks" / "hello-file"
    hello = next(t for t in load_dataset(builtin_dataset_path(), ["hello-file"], []) if t.name == "hello-file")
    image = hello.image_ref(DEFAULT_TASK_IMAGE_REGISTRY, "builtin")
    toml = (source / "task.toml").read_text()
    assert "memory_mb = 1024" in toml
    toml = toml.replace("memory_mb = 1024", f"memory_mb = {TASK_MIB}").replace(
        "[environment]\n", f'[environment]\ndocker_image = "{image}"\n')
    data = {}
    for name, command in COMMANDS.items():
        data |= {
            f"{name}__task.toml": toml,
            f"{name}__instruction.md": f"Run `{command}` in a shell and save what it prints to `/app/hello.txt`.\n",
            f"{name}__environment__Dockerfile": (source / "environment" / "Dockerfile").read_text(),
            f"{name}__tests__test.sh": (source / "tests" / "test.sh").read_text(),
        }
    return data


def _sweep(make_sweep, name: str, store: Path, multiple: int) -> dict:  # type: ignore[no-untyped-def, type-arg]
    body = make_sweep(name, store_url=f"file://{store}", tasks=sorted(COMMANDS), retry={"maxRetries": 1},
                      resources={"limitMultiple": multiple})
    body["spec"]["dataset"] = {"configMapRef": {"name": "hungry-tasks"}}
    return body


def _results(name: str, namespace: str, store: Path) -> dict:  # type: ignore[type-arg]
    shown = subprocess.run(
        [str(ROOT / ".venv" / "bin" / "buzzctl"), "sweep", "results", name, "-n", namespace,
         "--store", f"file://{store}", "-o", "json"], capture_output=True, text=True, check=True)
    return json.loads(shown.stdout)


def _settled(namespace: str, count: int, deadline_s: float) -> list[dict]:  # type: ignore[type-arg]
    deadline = time.monotonic() + deadline_s
    trials: list[dict] = []  # type: ignore[type-arg]
    while time.monotonic() < deadline:
        trials = kubectl_json("-n", namespace, "get", "buzztrials")["items"]
        if len(trials) == count and all((t.get("status") or {}).get("phase") in TERMINAL for t in trials):
            break
        time.sleep(2)
    return trials


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
        trials = _settled(namespace, 4, 900)
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

    for task in COMMANDS:
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
