"""The builtin suite under gVisor scores what it scores under runc (docs/isolation.md#gvisor).

Two sweeps of the whole builtin suite, one attempt each, stand-in oracle and the development
relay, run side by side from one operator: one with `spec.runtimeClassName: gvisor` (the local
cluster's RuntimeClass, handler runsc: hack/gvisor.sh), one with the cluster's default (runc).
Every trial of both must succeed with the same reward per task. While they run, the test
looks into each trial pod's task container by exec, as the team's processes would: the kernel it
sees (`uname -r`: gVisor's, so the sweep ran in the sandbox, not merely named it), no Kubernetes
API token, and the same capabilities under both runtimes, without NET_RAW. After, each trial's
cgroup telemetry shows what gVisor's emulated cgroupfs gives and what it does not."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

from kopf.testing import KopfRunner

from tests.support.cluster import kubectl_json

TERMINAL = {"Succeeded", "Failed"}
SUITE = sorted(p.name for p in (Path(__file__).resolve().parents[3] / "tasks").iterdir() if p.is_dir())


# What the task container shows a process of the team (docs/isolation.md#what-a-trial-can-reach):
# the kernel it talks to, whether a Kubernetes API token is mounted, its effective capabilities.
PROBE = ("uname -r; test -e /var/run/secrets/kubernetes.io/serviceaccount/token && echo token || echo no-token; "
         "sed -n 's/^CapEff:[[:space:]]*//p' /proc/self/status")
CAP_NET_RAW = 13


def _probe(namespace: str, pod: str) -> tuple[str, str, int] | None:
    ran = subprocess.run(["kubectl", "-n", namespace, "exec", pod, "-c", "task", "--", "sh", "-c", PROBE],
                         capture_output=True, text=True)
    lines = ran.stdout.split()
    return (lines[0], lines[1], int(lines[2], 16)) if ran.returncode == 0 and len(lines) == 3 else None


def test_the_suite_under_gvisor_scores_what_it_scores_under_runc(  # type: ignore[no-untyped-def]
    namespace, crds, sweep_secrets, make_sweep, tmp_path: Path
) -> None:
    store = tmp_path / "store"
    sweeps = {
        "sandboxed": make_sweep("sandboxed", store_url=f"file://{store}", tasks=SUITE, runtimeClassName="gvisor",
                                cpuRequestFraction=0.1, parallelism=4),
        "plain": make_sweep("plain", store_url=f"file://{store}", tasks=SUITE, cpuRequestFraction=0.1,
                            parallelism=4),
    }
    kernels: dict[str, str] = {}
    seen: dict[str, tuple[str, str, int]] = {}
    with KopfRunner(["run", "--standalone", "-n", namespace, "-m", "buzz_operator.handlers"], timeout=60) as runner:
        for body in sweeps.values():
            subprocess.run(["kubectl", "-n", namespace, "apply", "-f", "-"], input=json.dumps(body), check=True,
                           capture_output=True, text=True)
        deadline, trials = time.monotonic() + 1200, []
        while time.monotonic() < deadline:
            for pod in kubectl_json("-n", namespace, "get", "pods")["items"]:
                name, spec = pod["metadata"]["name"], pod["spec"]
                running = (pod.get("status") or {}).get("phase") == "Running"
                ours = running and name not in kernels and name.startswith(("sandboxed-", "plain-"))
                if ours and (probe := _probe(namespace, name)) is not None:
                    kernels[name], seen[name] = f"{spec.get('runtimeClassName')}:{probe[0]}", probe
            trials = kubectl_json("-n", namespace, "get", "buzztrials")["items"]
            if len(trials) == 2 * len(SUITE) and all((t.get("status") or {}).get("phase") in TERMINAL
                                                     for t in trials):
                break
            time.sleep(1)
        for name in sweeps:
            subprocess.run(["kubectl", "-n", namespace, "delete", "buzzsweep", name, "--wait=false"],
                           capture_output=True)
    assert runner.exception is None, runner.output
    print(f"\n[gvisor] kernels seen: {sorted(set(kernels.values()))}")
    status = {(t["spec"]["sweepName"], t["spec"]["task"]): t.get("status") or {} for t in trials}
    assert len(status) == 2 * len(SUITE), sorted(status)
    failed = {key: (s.get("phase"), s.get("reason"), s.get("message")) for key, s in status.items()
              if s.get("phase") != "Succeeded"}
    assert not failed, failed
    rewards = {sweep: {task: s.get("reward") for (name, task), s in status.items() if name == sweep}
               for sweep in sweeps}
    assert rewards["sandboxed"] == rewards["plain"], rewards
    sandboxed = {k for n, k in kernels.items() if n.startswith("sandboxed-")}
    plain = {k for n, k in kernels.items() if n.startswith("plain-")}
    # every gVisor pod looked at ran gVisor's kernel, and no runc pod did
    assert sandboxed and all(k.startswith("gvisor:") and "gvisor" in k.split(":", 1)[1] for k in sandboxed), kernels
    assert plain and not any("gvisor" in k for k in plain), kernels
    # under both: no API token to reach the cluster with, the same capabilities, and no raw sockets
    assert {token for _, token, _ in seen.values()} == {"no-token"}, seen
    capabilities = {name.split("-")[0]: caps for name, (_, _, caps) in seen.items()}
    assert len(set(capabilities.values())) == 1 and not next(iter(capabilities.values())) >> CAP_NET_RAW & 1, seen
    # the box's telemetry: gVisor's own cgroupfs gives the limit and CPU time but no peak, OOM
    # count or throttling, which are left unset, never 0 (docs/isolation.md#telemetry)
    usage = {sweep: [(s.get("resourceUsage") or {}).get("agents") or {} for (n, _), s in status.items() if n == sweep]
             for sweep in sweeps}
    print(f"[gvisor] agents' usage, one trial each: sandboxed {usage['sandboxed'][0]}; plain {usage['plain'][0]}")
    assert all(u.get("memoryLimitMB") and u.get("cpuSeconds") is not None for u in usage["sandboxed"]), usage
    assert all(u.get(key) is None for u in usage["sandboxed"] for key in ("peakMemoryMB", "oomKills", "throttledPeriods"))
    assert all(u.get("peakMemoryMB") and u.get("oomKills") is not None for u in usage["plain"]), usage
