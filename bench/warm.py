"""Warm pods against cold ones (docs/warm-pods.md#measured), side by side in one run on the local
cluster, each against a bare pod of the same image timed in the same run.

The task is tests/support/hungry_tasks.py's slow one: hello-file's answer behind `sleep
--task-seconds`, so a trial runs long enough for the sweep's ticks to make the next trial's pod
while it runs, as any real trial does. One operator (bench/observed_operator.py, every handler)
runs, in turn:

1. **One at a time** — `--attempts` trials at parallelism 1, cold (spec.warmPods 0), then warm
   (spec.warmPods 1). Per trial, operator-added = (created -> Succeeded) - agent active time,
   as bench/trial.py reads it; the ratio is operator-added / the bare pod's create -> exec-ready.
   The warm figures are over the trials that claimed a warm pod (the first never can). Judged,
   target <= 1.0: a warm trial's pod is ready sooner after its launch asks than a bare pod
   starts, and a warm trial is ready (created -> Running: provisioned, agents subscribed) sooner
   than a bare pod starts. The rest is information; the cold figures are bounded below by the
   trial pod's own start (bench/trial.py's "pod alone").
2. **At the node's capacity** — `--throughput` trials at parallelism `--parallelism`, cold then
   warm (spec.warmPods = parallelism): trials per minute from the first trial created to the
   last finished.

Every trial's status.podStart (warm, the wait it saw, the pulls) is summed up beside. The images
are the node's own (imagePullPolicy Never): no pull is in either figure; what a pull adds is in
status.podStart.pullSeconds of a sweep pulling from a registry (docs/registry.md).

    .venv/bin/python bench/warm.py [--attempts 5] [--task-seconds 6] [--throughput 8] [--parallelism 2]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from buzz_operator.api.common import GROUP, VERSION
from buzz_operator.kube import client as kube_client
from buzz_operator.kube.client import Kube

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
from cluster import kubectl, stage, sweep_body  # noqa: E402
from figures import INFO, LOWER, Figure, record  # noqa: E402
from trial import PhaseClock, agent_active_s, bare_pod, stop  # noqa: E402

from tests.support.hungry_tasks import hello_image, slow_tasks  # noqa: E402

TARGET_WARM_RATIO = 1.0
TASK = "slow-1"


async def run_sweep(kube: Kube, namespace: str, clock: PhaseClock, name: str, store: Path, *, attempts: int,
                    parallelism: int, warm: int, timeout_s: float) -> tuple[dict[str, dict[str, float]], float]:
    """One sweep to its end: the phases of its finished trials and its wall time (first trial
    created -> last finished)."""
    body = sweep_body(name, store_url=f"file://{store}", tasks=[TASK], attempts=attempts, parallelism=parallelism,
                      warmPods=warm, cpuRequestFraction=0.1)
    body["spec"]["dataset"] = {"configMapRef": {"name": "slow-tasks"}}
    await kube.custom.create_namespaced_custom_object(GROUP, VERSION, namespace, "buzzsweeps", body)
    prefix = f"{name}-"
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        mine = {n: p for n, p in clock.seen.items() if n.startswith(prefix)}
        if sum(1 for p in mine.values() if "Succeeded" in p or "Failed" in p) >= attempts:
            break
        await asyncio.sleep(1.0)
    finished = {n: p for n, p in clock.seen.items() if n.startswith(prefix) and "Succeeded" in p}
    if not finished:
        return {}, 0.0
    wall = max(p["Succeeded"] for p in finished.values()) - min(p["created"] for p in finished.values())
    return finished, wall


def added(finished: dict[str, dict[str, float]], bundles: Path, names: list[str]) -> list[float]:
    out = []
    for trial in names:
        active = agent_active_s(bundles, trial)
        if active is not None:
            out.append(finished[trial]["Succeeded"] - finished[trial]["created"] - active)
    return out


def starts(clock: PhaseClock, names: list[str]) -> list[dict[str, Any]]:
    return [dict(clock.status.get(n, {}).get("podStart") or {}) for n in names]  # type: ignore[call-overload]


async def main_async(args: argparse.Namespace, tmp: Path) -> int:
    kube = await kube_client.connect()
    operator: subprocess.Popen[bytes] | None = None
    clock_task: asyncio.Task[None] | None = None
    ok = True
    try:
        async with stage(kube, "bench-warm") as where:
            namespace = where.namespace
            kubectl("-n", namespace, "create", "configmap", "slow-tasks",
                    *(f"--from-literal={k}={v}" for k, v in slow_tasks(1, args.task_seconds).items()))
            bare = [await bare_pod(kube, namespace, hello_image()) for _ in range(args.attempts)]
            base = statistics.median(bare)
            clock = PhaseClock(kube, namespace)
            clock_task = asyncio.create_task(clock.run())
            log_path = Path(tempfile.gettempdir()) / "bench-warm-operator.log"
            with log_path.open("wb") as log:
                operator = subprocess.Popen(  # noqa: ASYNC220
                    [sys.executable, str(ROOT / "bench" / "observed_operator.py"), namespace, str(tmp / "ops.jsonl")],
                    stdout=log, stderr=subprocess.STDOUT, env={**os.environ, "PYTHONPATH": str(ROOT / "operator")})
            record(Figure("W bare pod create -> exec-ready (baseline)", "s", bare, INFO, decimals=2))
            ratios: dict[str, list[float]] = {}
            for label, warm in (("cold", 0), ("warm", 1)):
                name = f"one-{label}"
                finished, _ = await run_sweep(kube, namespace, clock, name, tmp / "store", attempts=args.attempts,
                                              parallelism=1, warm=warm, timeout_s=args.timeout)
                if len(finished) < args.attempts:
                    print(f"INCOMPLETE: {name}: {len(finished)} of {args.attempts} trials succeeded", flush=True)
                    ok = False
                names = sorted(finished, key=lambda n: finished[n]["created"])
                picked = [n for n, s in zip(names, starts(clock, names), strict=True) if bool(s.get("warm")) == bool(warm)]
                seconds = [float(s.get("seconds") or 0) for s in starts(clock, picked)]
                got = added(finished, tmp / "store" / name, picked)
                ratios[label] = sorted(a / base for a in got)
                claimed = sum(1 for s in starts(clock, names) if s.get("warm"))
                note = (f"operator-added {statistics.median(got):.2f} s vs bare pod {base:.2f} s over {len(got)} "
                        f"{label} trials; their pods ran {statistics.median(seconds):.2f} s after the launch asked "
                        f"(status.podStart.seconds); {claimed} of {len(names)} trials claimed a warm pod"
                        if got else "no trial to measure")
                # ready: created -> Running, the agents subscribed and the task about to be posted
                ready = sorted((finished[n]["Running"] - finished[n]["created"]) / base for n in picked
                               if "Running" in finished[n])
                pod_wait = sorted(sec / base for sec in seconds)
                record(Figure(f"W trial pod ready after the launch asked, {label} / bare pod start", "x",
                              pod_wait or [0.0], LOWER if warm else INFO, TARGET_WARM_RATIO if warm else None,
                              decimals=2, note="status.podStart.seconds over the bare pod's create -> exec-ready"))
                if warm:
                    ok &= bool(record(Figure("W trial ready (created -> Running) warm / bare pod start", "x",
                                             ready or [float("inf")], LOWER, TARGET_WARM_RATIO, decimals=2,
                                             note="provisioned, pod claimed, agents launched and subscribed")).passed)
                    record(Figure("W trial overhead ratio, warm (operator-added / bare pod)", "x",
                                  ratios[label] or [0.0], INFO, decimals=2, note=note))
                else:
                    record(Figure("W trial ready (created -> Running) cold / bare pod start", "x", ready or [0.0],
                                  INFO, decimals=2, note="provisioned, pod started, agents launched and subscribed"))
                    record(Figure("W trial overhead ratio, cold (operator-added / bare pod)", "x",
                                  ratios[label] or [0.0], INFO, decimals=2,
                                  note=note + "; bounded below by the trial pod's own start (bench/trial.py)"))
            for label, warm in (("cold", 0), ("warm", args.parallelism)):
                name = f"many-{label}"
                finished, wall = await run_sweep(kube, namespace, clock, name, tmp / "store", attempts=args.throughput,
                                                 parallelism=args.parallelism, warm=warm, timeout_s=args.timeout)
                if len(finished) < args.throughput or wall <= 0:
                    print(f"INCOMPLETE: {name}: {len(finished)} of {args.throughput} trials succeeded", flush=True)
                    ok = False
                    continue
                claimed = sum(1 for s in starts(clock, list(finished)) if s.get("warm"))
                record(Figure(f"W trials per minute at parallelism {args.parallelism}, {label}", "/min",
                              [60.0 * len(finished) / wall], INFO, decimals=2,
                              note=f"{len(finished)} trials of {args.task_seconds} s tasks in {wall:.1f} s; "
                                   f"{claimed} claimed a warm pod"))
    finally:
        if operator is not None:
            stop(operator)
        if clock_task is not None:
            clock_task.cancel()
        await kube.close()
    return 0 if ok else 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--attempts", type=int, default=5)
    parser.add_argument("--task-seconds", type=int, default=6)
    parser.add_argument("--throughput", type=int, default=8)
    parser.add_argument("--parallelism", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=600.0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-warm-") as tmp:
        return asyncio.run(main_async(args, Path(tmp)))


if __name__ == "__main__":
    raise SystemExit(main())
