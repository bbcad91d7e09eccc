"""P5 scale with real pods: a 10,000-trial sweep whose every trial runs its pod through the pod
lifecycle on many fake nodes, kwok's (hack/kwok.sh), registered with the local apiserver.

What runs for real: the local Kubernetes (apiserver, etcd, the real kube-scheduler placing every
pod, the controller manager), kwok moving each pod on its fake node from Pending to Running and
finishing its deletion, and the operator process (bench/observed_operator.py --pod-path): the
sweep path unchanged (planning, admission, trial creation, rollup, summary.json, status writes,
the janitor listing pods and Secrets every minute) and, per trial, a daemon that builds the real
trial pod with the operator's own pod builder (pod/trial_pod.py), creates it, waits for it as the launch step does,
writes the trial's terminal status and deletes the pod as teardown does (bench/pod_path.py says
what it leaves out: everything that needs a process in the pod).

Unlike bench/scale.py, whose fixture writes each trial's status with no pod, the apiserver here
carries the pods too: creates, the scheduler's bindings, kwok's status writes, deletes, and every
watch of them, all on this machine's two cores.

Measured, over the whole run:
* admission throughput: trials created per second (per 20 s window);
* pods created per second (per 20 s window), as a watch on the namespace's pods sees them;
* trial created -> its pod Running as the operator saw it, p50 and p95;
* watch lag: a ConfigMap stamped with this process's clock once a second and watched inside the
  operator's event loop (shared with kopf and every daemon): apiserver delivery plus loop backlog;
* operator RSS: the peak and its growth from 10 % of the trials to the end;
* the operator's API requests and writes per trial (sweep path and pod lifecycle together);
* pods left when the sweep finished (each trial deletes its own, the janitor the orphans);
* pods created per trial and the peak of warm pods, with --warm N (spec.warmPods): a warm pod
  no trial claims is a pod made for nothing, so the target is at most 1.05.

    .venv/bin/python bench/kwok.py                      # 10,000 trials on 50 fake nodes
    .venv/bin/python bench/kwok.py --trials 1000 --nodes 10
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from buzz_operator.api.common import GROUP, VERSION
from buzz_operator.api.labels import TRIAL as TRIAL_LABEL
from buzz_operator.api.trial_names import pod_name
from buzz_operator.kube import client as kube_client
from buzz_operator.kube.client import Kube
from kubernetes_asyncio import watch
from kubernetes_asyncio.client.exceptions import ApiException

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
from cluster import stage, sweep_body  # noqa: E402
from cpu_share import print_split, snapshot, split  # noqa: E402
from figures import HIGHER, INFO, LOWER, Figure, percentile, record  # noqa: E402
from pod_path import PROBE, PROBE_STAMP  # noqa: E402
from scale import (  # noqa: E402
    DATASET_PREFIX,
    MAX_ATTEMPTS,
    TARGET_RATE,
    WINDOW_S,
    ask_heap,
    memory_and_requests,
    not_accepted,
    proc_rss_mb,
    stop,
    windows,
    write_dataset,
)

RELEASE_AT_ONCE = 16
# the operator this benchmark runs: bench/profiled_operator.py puts it under cProfile (bench/README.md)
OPERATOR_SCRIPT = os.environ.get("BUZZ_BENCH_OPERATOR") or "bench/observed_operator.py"
# a warm pod no trial claims is a pod made for nothing: at most 5 % of them (docs/warm-pods.md)
TARGET_PODS_PER_TRIAL = 1.05
KWOK = ["bash", str(ROOT / "hack" / "kwok.sh")]


class PodClock:
    """When each trial and each pod of the namespace was first seen, and each pod's first Running
    and its deletion, from watches restarted from a list whenever they end (nothing is missed)."""

    def __init__(self, kube: Kube, namespace: str) -> None:
        self.kube, self.namespace = kube, namespace
        self.trials: dict[str, float] = {}
        self.pods: dict[str, float] = {}
        self.running: dict[str, float] = {}
        self.deleted: dict[str, float] = {}

    def _pod(self, kind: str, pod: dict[str, Any], now: float) -> None:
        name = pod["metadata"]["name"]
        self.pods.setdefault(name, now)
        if kind == "DELETED":
            self.deleted.setdefault(name, now)
        elif (pod.get("status") or {}).get("phase") == "Running":
            self.running.setdefault(name, now)

    async def _follow(self, lister: Any, args: tuple[Any, ...], on: Any) -> None:
        while True:
            listed = await lister(*args)
            listed = listed if isinstance(listed, dict) else self.kube.api.sanitize_for_serialization(listed)
            now = time.time()
            for item in listed["items"]:
                on("ADDED", item, now)
            stream = watch.Watch()
            try:
                async for event in stream.stream(lister, *args, resource_version=listed["metadata"]["resourceVersion"],
                                                 timeout_seconds=30):
                    obj = event["object"]
                    obj = obj if isinstance(obj, dict) else self.kube.api.sanitize_for_serialization(obj)
                    on(event["type"], obj, time.time())
            except ApiException as exc:
                if exc.status != 410:
                    raise
            finally:
                await stream.close()  # each Watch owns an aiohttp session

    def tasks(self) -> list[asyncio.Task[None]]:
        trials = (self.kube.custom.list_namespaced_custom_object, (GROUP, VERSION, self.namespace, "buzztrials"),
                  lambda kind, obj, now: self.trials.setdefault(obj["metadata"]["name"], now))
        pods = (self.kube.core.list_namespaced_pod, (self.namespace,), self._pod)
        return [asyncio.create_task(self._follow(*trials)), asyncio.create_task(self._follow(*pods))]


async def stamp_forever(kube: Kube, namespace: str) -> None:
    """The watch-lag probe's clock: the ConfigMap's stamp annotation, once a second."""
    body = {"metadata": {"name": PROBE, "annotations": {PROBE_STAMP: f"{time.time():.6f}"}}}
    with contextlib.suppress(ApiException):
        await kube.core.create_namespaced_config_map(namespace, body)
    while True:
        await asyncio.sleep(1.0)
        await kube.core.patch_namespaced_config_map(
            PROBE, namespace, {"metadata": {"annotations": {PROBE_STAMP: f"{time.time():.6f}"}}})


async def release_trial_finalizers(kube: Kube, namespace: str) -> int:
    """kopf's finalizer off every trial (the operator is about to stop), RELEASE_AT_ONCE at a time:
    one kubectl per trial would take longer than the run."""
    names: list[str] = []
    token = None
    while True:
        page = await kube.custom.list_namespaced_custom_object(GROUP, VERSION, namespace, "buzztrials", limit=500,
                                                              _continue=token)
        names += [i["metadata"]["name"] for i in page["items"] if i["metadata"].get("finalizers")]
        token = page["metadata"].get("continue")
        if not token:
            break
    gate = asyncio.Semaphore(RELEASE_AT_ONCE)

    async def release(name: str) -> None:
        async with gate:
            with contextlib.suppress(ApiException):
                await kube.custom.patch_namespaced_custom_object(
                    GROUP, VERSION, namespace, "buzztrials", name, {"metadata": {"finalizers": None}},
                    _content_type="application/merge-patch+json")

    await asyncio.gather(*(release(n) for n in names))
    return len(names)


async def trial_pods_left(kube: Kube, namespace: str, within_s: float = 60.0) -> tuple[int, float]:
    """Trial pods still there (the sweep counts a trial done at its status write; its pod's delete
    follows), read from the apiserver until none is left or `within_s` passed; (count, seconds)."""
    began = time.monotonic()
    while True:
        pods = await kube.core.list_namespaced_pod(namespace, label_selector=TRIAL_LABEL)
        left = sum(1 for p in pods.items if not p.metadata.deletion_timestamp)
        if left == 0 or time.monotonic() - began >= within_s:
            return left, time.monotonic() - began
        await asyncio.sleep(1.0)


def kwok(*args: str) -> None:
    done = subprocess.run([*KWOK, *args], capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"hack/kwok.sh {' '.join(args)} failed: {done.stderr.strip()[-1000:]}")


async def run(args: argparse.Namespace, tmp: Path) -> int:
    tasks = max(1, -(-args.trials // MAX_ATTEMPTS))
    attempts = max(1, args.trials // tasks)
    total = attempts * tasks
    stats_path, log_path = tmp / "operator.jsonl", Path(tempfile.gettempdir()) / "bench-kwok-operator.log"
    kwok("up")
    kwok("nodes", str(args.nodes))
    kube = await kube_client.connect()
    operator: subprocess.Popen[bytes] | None = None
    background: list[asyncio.Task[None]] = []
    samples: list[dict[str, Any]] = []
    store = tmp / "store"
    write_dataset(store / DATASET_PREFIX, tasks)
    heaps_asked = 0
    try:
        # the trials' kopf finalizers are released here, many at once (release_trial_finalizers)
        async with stage(kube, "bench-kwok", finalized=("buzzsweeps",)) as where:
            namespace = where.namespace
            clock = PodClock(kube, namespace)
            background = [*clock.tasks(), asyncio.create_task(stamp_forever(kube, namespace))]
            env = {**os.environ, "PYTHONPATH": str(ROOT / "operator"), "BUZZ_BENCH_POD_HOLD_S": str(args.hold)}
            with log_path.open("wb") as log:
                # Popen only forks; it does not wait
                operator = subprocess.Popen([sys.executable, str(ROOT / OPERATOR_SCRIPT), namespace,  # noqa: ASYNC220
                                             str(stats_path), "--pod-path"], stdout=log, stderr=subprocess.STDOUT,
                                            env=env)
            cpu_before = snapshot(operator.pid, os.getpid())
            print(f"{total:,} trials: 1 sweep x {tasks} tasks x {attempts} attempts, parallelism {args.parallelism}, "
                  f"{args.nodes} fake nodes; namespace {namespace}", flush=True)
            started = time.time()
            await kube.custom.create_namespaced_custom_object(
                GROUP, VERSION, namespace, "buzzsweeps",
                sweep_body("kwok", store_url=f"file://{store}", attempts=attempts, parallelism=args.parallelism,
                           dataset={"objectStore": {"prefix": DATASET_PREFIX}}, warmPods=args.warm))
            deadline, last_print = started + args.timeout, 0.0
            while time.time() < deadline:
                status = (await kube.custom.get_namespaced_custom_object(
                    GROUP, VERSION, namespace, "buzzsweeps", "kwok")).get("status") or {}
                now = time.time()
                samples.append({"t": now, "rss_mb": proc_rss_mb(operator.pid), "created": len(clock.trials),
                                "succeeded": int(status.get("succeeded") or 0),
                                "pods_live": len(clock.pods) - len(clock.deleted),
                                "warm": int((status.get("images") or {}).get("warm") or 0)})
                if operator.poll() is not None:
                    raise RuntimeError(f"operator exited {operator.returncode}; log {log_path}:\n"
                                       + log_path.read_text()[-3000:])
                if stopped := next((task for task in background if task.done()), None):  # they never end by themselves
                    raise RuntimeError(f"a watch of the benchmark's stopped: {stopped.exception()!r}")
                if refusal := not_accepted([status]):
                    raise RuntimeError(f"the sweep was refused: {refusal}")
                if now - last_print >= 30:
                    last_print = now
                    s = samples[-1]
                    print(f"  {now - started:5.0f} s: trials created {s['created']:,}, pods created "
                          f"{len(clock.pods):,}, live {s['pods_live']:,}, succeeded {s['succeeded']:,}, "
                          f"operator RSS {s['rss_mb']:.0f} MB", flush=True)
                if heaps_asked == 0 and samples[-1]["created"] >= total // 10:
                    heaps_asked = await ask_heap(operator, stats_path, heaps_asked)
                if samples[-1]["succeeded"] >= total:
                    break
                await asyncio.sleep(2.0)
            elapsed = time.time() - started
            cpu = split(cpu_before, snapshot(operator.pid, os.getpid()))
            left, drained_s = await trial_pods_left(kube, namespace)
            await ask_heap(operator, stats_path, heaps_asked)
            released = await release_trial_finalizers(kube, namespace)
            print(f"released kopf's finalizer of {released:,} trials", flush=True)
            stop(operator)
    finally:
        if operator is not None:
            stop(operator)
        for task in background:
            task.cancel()
        await asyncio.gather(*background, return_exceptions=True)
        await kube.close()
        with contextlib.suppress(RuntimeError):
            kwok("down")
    return report(total, elapsed, clock, samples, stats_path, left, drained_s, args.warm, args.hold, cpu)


def spread(values: list[float]) -> str:
    return f"p50 {percentile(values, 50):.0f}, p95 {percentile(values, 95):.0f}, max {max(values):.0f}"


def report(total: int, elapsed: float, clock: PodClock, samples: list[dict[str, Any]], stats_path: Path,
           left: int, drained_s: float, warm: int = 0, hold: float = 0.0,
           cpu: list[tuple[str, float, float]] | None = None) -> int:
    records = [json.loads(line) for line in stats_path.read_text().splitlines() if line.strip()]
    operator_samples = [r for r in records if r["kind"] == "sample"]
    pods = [r for r in records if r["kind"] == "pod"]
    lags = [r["ms"] for r in records if r["kind"] == "lag"]
    heaps = [r for r in records if r["kind"] == "heap"]
    done = samples[-1]["succeeded"] if samples else 0
    ok = True
    print(f"{done:,} of {total:,} trials succeeded in {elapsed:.0f} s; {len(clock.pods):,} pods created, "
          f"{len(clock.running):,} seen Running, {len(clock.deleted):,} deleted")
    if done < total:
        print(f"INCOMPLETE: the run stopped at its timeout with {done:,} of {total:,} trials done")
        ok = False

    trial_times = sorted(clock.trials.values())
    rates = windows(trial_times, WINDOW_S) or [len(trial_times) / max(elapsed, 1e-9)]
    if hold:  # each trial holds its slot `hold` seconds: admission cannot pass parallelism / hold, so not judged
        record(Figure(f"P5 admission throughput with pods ({len(trial_times):,} trials, {hold:.0f} s runs)", "trials/s",
                      rates, INFO, note=f"per {WINDOW_S:.0f} s window; bounded by parallelism / --hold"))
    else:
        ok &= bool(record(Figure(f"P5 admission throughput with pods ({len(trial_times):,} trials)", "trials/s", rates,
                                 HIGHER, TARGET_RATE, note=f"per {WINDOW_S:.0f} s window")).passed)
    pod_times = sorted(clock.pods.values())
    pod_rates = windows(pod_times, WINDOW_S) or [len(pod_times) / max(elapsed, 1e-9)]
    record(Figure("P5 pods created per second (kwok nodes)", "pods/s", pod_rates, INFO,
                  note=f"per {WINDOW_S:.0f} s window; peak live pods {max(s['pods_live'] for s in samples):,}"))
    if done:
        claimed = sum(1 for r in pods if r.get("warm"))
        # every pod the namespace saw but the dev relay's: trial pods, warm pods, nothing else
        per_trial = Figure(f"P5 pods created per trial, spec.warmPods {warm}", "", [(len(clock.pods) - 1) / done],
                           LOWER if warm else INFO, TARGET_PODS_PER_TRIAL, decimals=3,
                           note=f"{len(clock.pods) - 1:,} pods for {done:,} trials; {claimed:,} trials claimed a "
                                f"warm pod; peak warm pods {max(s['warm'] for s in samples):,}")
        passed = record(per_trial).passed
        ok &= passed is not False
    to_running = [(clock.running[pod_name(t, 0)] - created) * 1000 for t, created in clock.trials.items()
                  if pod_name(t, 0) in clock.running]
    in_operator = [r["create_ms"] + r["running_ms"] for r in pods]
    if to_running:
        record(Figure("P5 trial created -> pod Running (watch), p50", "ms", [percentile(to_running, 50)], INFO,
                      decimals=0, note=f"{spread(to_running)} ms over {len(to_running):,} trials"))
        record(Figure("P5 trial created -> pod Running (watch), p95", "ms", [percentile(to_running, 95)], INFO,
                      decimals=0))
    if in_operator:
        record(Figure("P5 pod create -> Running seen by the operator, p95", "ms", [percentile(in_operator, 95)],
                      INFO, decimals=0, note=f"{spread(in_operator)} ms: create call plus the launch step's wait"))
    if lags:
        record(Figure("P5 watch lag in the operator's event loop, p50", "ms", [percentile(lags, 50)], INFO, decimals=0,
                      note=f"{spread(lags)} ms over {len(lags):,} stamps"))
        record(Figure("P5 watch lag in the operator's event loop, p95", "ms", [percentile(lags, 95)], INFO,
                      decimals=0))

    memories = [r for r in records if r["kind"] == "memory"]
    ok &= memory_and_requests("P5", "sweep path + pod lifecycle", operator_samples, heaps, trial_times, done,
                              memories)
    ok &= bool(record(Figure("P5 trial pods left a minute after the sweep finished", "pods", [float(left)], LOWER,
                             0.0, decimals=0, note=f"each trial deletes its pod; the last went {drained_s:.0f} s "
                                                   "after the sweep counted every trial")).passed)
    if cpu:
        print_split(cpu, elapsed)
        share = {name: part for name, _, part in cpu}
        record(Figure("P5 the operator's share of the machine's CPU", "%", [share.get("operator", 0.0) * 100], INFO,
                      decimals=1, note=f"the cluster's (apiserver, etcd, scheduler, controller manager, kwok, kubelet, "
                                       f"containerd) {sum(p for n, p in share.items() if n not in ('operator', 'idle', 'benchmark', 'other')) * 100:.1f} %, "
                                       f"idle {share.get('idle', 0.0) * 100:.1f} %"))
    if pods:
        print(f"operator-side pod lifecycle: create {statistics.median(r['create_ms'] for r in pods):.0f} ms, "
              f"to Running {statistics.median(r['running_ms'] for r in pods):.0f} ms, status + delete "
              f"{statistics.median(r['deleted_ms'] for r in pods):.0f} ms (medians)")
    return 0 if ok else 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=10_000)
    parser.add_argument("--nodes", type=int, default=50, help="fake nodes kwok runs")
    parser.add_argument("--parallelism", type=int, default=500, help="spec.parallelism of the sweep")
    parser.add_argument("--warm", type=int, default=0, help="spec.warmPods of the sweep (docs/warm-pods.md)")
    parser.add_argument("--hold", type=float, default=0.0, help="seconds each trial keeps its pod Running")
    parser.add_argument("--timeout", type=float, default=900.0, help="give up after this many seconds")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-kwok-") as tmp:
        try:
            return asyncio.run(run(args, Path(tmp)))
        finally:
            print(f"operator log: {Path(tempfile.gettempdir()) / 'bench-kwok-operator.log'}")


if __name__ == "__main__":
    raise SystemExit(main())
