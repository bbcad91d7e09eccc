"""P5 the real corridor at the most concurrent trials one node holds: trials per minute, and the
time from admission to the task posted.

Everything is real: the operator process with every handler (bench/observed_operator.py, as
`buzz-operator -n NS`), the dev relay, the stand-in stack answering at once (the oracle policy),
trial pods on the local cluster's one real node. A sweep of `--trials` attempts of one task runs
with spec.parallelism `--parallelism` and spec.cpuRequestFraction `--cpu-request-fraction`
(each pod then requests that share of the task's CPU limit, so several fit beside each other).

How many trial pods the node holds is computed from what the first trial pod requests (its
containers, its largest init container, the sidecar forwarder) against the node's allocatable
minus what the node's other pods request, per resource; the one that runs out first is named.
The run's own peak of trials in Running at once is printed beside it.

Measured: trials finished per minute (first admission to last finish), and per trial the time
from admission (the BuzzTrial created, as the benchmark's watch sees it) to the task posted
(status.phase Running, which the run step enters right before posting the task), p50 and p95.

    .venv/bin/python bench/node.py [--trials 27] [--parallelism 9] [--cpu-request-fraction 0.1]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from buzz_operator.api.common import GROUP, VERSION
from buzz_operator.api.labels import TRIAL as TRIAL_LABEL
from buzz_operator.kube import client as kube_client
from buzz_operator.kube.client import Kube

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
from cluster import stage, sweep_body  # noqa: E402
from figures import INFO, Figure, percentile, record  # noqa: E402
from trial import PhaseClock, stop  # noqa: E402

RESOURCES = ("cpu", "memory")
SUFFIXES = {"m": 1e-3, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "Ki": 2**10, "Mi": 2**20, "Gi": 2**30,
            "Ti": 2**40}


def parse_quantity(text: str) -> float:
    """A Kubernetes quantity ("500m", "1Gi", "2") as a number of its base unit."""
    for suffix in sorted(SUFFIXES, key=len, reverse=True):
        if text.endswith(suffix):
            return float(text[: -len(suffix)]) * SUFFIXES[suffix]
    return float(text)


def pod_requests(pod: dict[str, Any]) -> dict[str, float]:
    """What the scheduler counts for a pod: the sum over its containers and sidecars (init
    containers with restartPolicy Always), or the largest plain init container if that is more."""
    spec = pod["spec"]

    def req(container: dict[str, Any], name: str) -> float:
        value = ((container.get("resources") or {}).get("requests") or {}).get(name)
        return float(parse_quantity(value)) if value is not None else 0.0

    sidecars = [c for c in spec.get("initContainers") or [] if c.get("restartPolicy") == "Always"]
    plain = [c for c in spec.get("initContainers") or [] if c.get("restartPolicy") != "Always"]
    out = {}
    for name in RESOURCES:
        steady = sum(req(c, name) for c in [*spec["containers"], *sidecars])
        out[name] = max([steady, *(req(c, name) + sum(req(s, name) for s in sidecars) for c in plain)])
    return out


async def node_room(kube: Kube, pod: dict[str, Any]) -> tuple[str, int, str]:
    """(node, how many pods like `pod` it holds besides what runs there now, the limiting resource)."""
    node_name = pod["spec"].get("nodeName")
    node = await kube.core.read_node(node_name)
    allocatable = {name: float(parse_quantity(node.status.allocatable[name])) for name in (*RESOURCES, "pods")}
    others = await kube.core.list_pod_for_all_namespaces(field_selector=f"spec.nodeName={node_name}")
    used = {name: 0.0 for name in (*RESOURCES, "pods")}
    for other in others.items:
        if other.status.phase in ("Succeeded", "Failed") or other.metadata.name == pod["metadata"]["name"] \
                or (other.metadata.labels or {}).get(TRIAL_LABEL):
            continue  # the trial pods are what is counted
        counted = pod_requests(kube.api.sanitize_for_serialization(other))
        for name in RESOURCES:
            used[name] += counted[name]
        used["pods"] += 1
    each = {**pod_requests(pod), "pods": 1.0}
    room = {name: int((allocatable[name] - used[name]) // each[name]) for name in each if each[name] > 0}
    limit = min(room, key=lambda name: room[name])
    detail = ", ".join(f"{name} {room[name]} ({each[name]:g} each of {allocatable[name] - used[name]:g} free)"
                       for name in room)
    return node_name, room[limit], f"{limit}; by resource: {detail}"


async def first_trial_pod(kube: Kube, namespace: str, within_s: float = 120.0) -> dict[str, Any] | None:
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        pods = await kube.core.list_namespaced_pod(namespace, label_selector=TRIAL_LABEL)
        for pod in pods.items:
            if pod.spec.node_name:
                return kube.api.sanitize_for_serialization(pod)
        await asyncio.sleep(0.5)
    return None


async def run(args: argparse.Namespace, tmp: Path) -> int:
    stats_path, log_path = tmp / "operator.jsonl", Path(tempfile.gettempdir()) / "bench-node-operator.log"
    kube = await kube_client.connect()
    operator: subprocess.Popen[bytes] | None = None
    clock_task: asyncio.Task[None] | None = None
    peak = 0
    room: tuple[str, int, str] | None = None
    try:
        async with stage(kube, "bench-node") as where:
            namespace = where.namespace
            clock = PhaseClock(kube, namespace)
            clock_task = asyncio.create_task(clock.run())
            with log_path.open("wb") as log:
                # Popen only forks; it does not wait
                operator = subprocess.Popen(  # noqa: ASYNC220
                    [sys.executable, str(ROOT / "bench" / "observed_operator.py"), namespace, str(stats_path)],
                    stdout=log, stderr=subprocess.STDOUT, env={**os.environ, "PYTHONPATH": str(ROOT / "operator")})
            body = sweep_body("node", store_url=f"file://{tmp / 'store'}", tasks=[args.task], attempts=args.trials,
                              parallelism=args.parallelism, cpuRequestFraction=args.cpu_request_fraction)
            await kube.custom.create_namespaced_custom_object(GROUP, VERSION, namespace, "buzzsweeps", body)
            if (pod := await first_trial_pod(kube, namespace)) is not None:
                room = await node_room(kube, pod)
                print(f"node {room[0]} holds {room[1]} trial pods; limited by {room[2]}", flush=True)
            deadline = time.monotonic() + args.timeout
            while time.monotonic() < deadline:
                phases = list(clock.seen.values())
                done = [p for p in phases if "Succeeded" in p or "Failed" in p]
                busy = sum(1 for p in phases if "Running" in p and not ("Succeeded" in p or "Failed" in p))
                peak = max(peak, busy)
                if len(done) >= args.trials:
                    break
                if operator.poll() is not None:
                    raise RuntimeError(f"operator exited {operator.returncode}; see {log_path}")
                await asyncio.sleep(0.5)
            seen = dict(clock.seen)
            stop(operator)
    finally:
        if operator is not None:
            stop(operator)
        if clock_task is not None:
            clock_task.cancel()
        await kube.close()
    return report(args, seen, peak, room)


def report(args: argparse.Namespace, seen: dict[str, dict[str, float]], peak: int,
           room: tuple[str, int, str] | None) -> int:
    finished = {n: p for n, p in seen.items() if "Succeeded" in p}
    failed = [n for n, p in seen.items() if "Failed" in p]
    ok = not failed and len(finished) >= args.trials
    if not ok:
        print(f"INCOMPLETE: {len(finished)} of {args.trials} trials succeeded; failed: {failed}")
    if not finished:
        return 1
    first = min(p["created"] for p in seen.values())
    last = max(p["Succeeded"] for p in finished.values())
    posted = [p["Running"] - p["created"] for p in finished.values() if "Running" in p]
    held = f"node holds {room[1]} (limited by {room[2]})" if room else "node room not read"
    record(Figure(f"P5 real corridor: trials per minute at parallelism {args.parallelism}", "trials/min",
                  [len(finished) / ((last - first) / 60)], INFO,
                  note=f"{len(finished)} trials in {last - first:.0f} s; peak {peak} in Running at once; {held}; "
                       f"cpuRequestFraction {args.cpu_request_fraction}"))
    record(Figure("P5 real corridor: admission -> task posted, p50", "s", [percentile(posted, 50)], INFO,
                  decimals=2, note=f"p95 {percentile(posted, 95):.2f} s, max {max(posted):.2f} s over {len(posted)}"))
    record(Figure("P5 real corridor: admission -> task posted, p95", "s", [percentile(posted, 95)], INFO, decimals=2))
    return 0 if ok else 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=27)
    # the local node holds 9 trial pods at cpuRequestFraction 0.1 (2 CPUs, 0.2 a pod; printed per run)
    parser.add_argument("--parallelism", type=int, default=9)
    parser.add_argument("--cpu-request-fraction", type=float, default=0.1)
    parser.add_argument("--task", default="hello-file")
    parser.add_argument("--timeout", type=float, default=900.0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-node-") as tmp:
        try:
            return asyncio.run(run(args, Path(tmp)))
        finally:
            print(f"operator log: {Path(tempfile.gettempdir()) / 'bench-node-operator.log'}")


if __name__ == "__main__":
    raise SystemExit(main())
