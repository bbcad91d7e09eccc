"""P1 trial overhead: what the operator adds to a trial whose agent answers at once, against
what a bare pod costs on the same cluster in the same run.

The operator runs as `buzz-operator -n NS` would (every handler of buzz_operator.handlers, in
bench/observed_operator.py, which also counts its API requests). A sweep of the stand-in oracle
condition (it posts DONE: as soon as it has the task) over one container task runs its
attempts one at a time. A watch on the BuzzTrials timestamps each phase as the benchmark sees
it (all phases through the same watch, so its delay cancels out), and the bundle's timing.json
gives the agent's active time (task posted -> DONE: detected, from the operator's own clock):

    operator-added = (created -> Succeeded) - agent active time
                   = (created -> task posted: provisioned, pod up, agents launched)
                   + (DONE: detected -> Succeeded: agents stopped, graded, bundle committed, released)

The baseline is a bare pod of the same task image, one container that sleeps: create -> Running
(watched) -> the first `true` exec answers. Ratio = median operator-added / median bare pod.
After the sweep, with the operator stopped, the pod the operator built for the first trial is
created by hand as many times and timed the same way: its shape (the stack install and the
forwarder sidecar start before the task container, each seen by the kubelet's next relist) is
the part of operator-added no operator step can remove (docs/performance.md).

Operator CPU per trial: utime+stime (and reaped children's) of the operator process from
/proc/<pid>/stat, read when the sweep is created (the operator started and idle: its imports and
startup are reported apart) and 1 s after the last trial finished, over the trials finished.
The sweep's once-only work (its first reconcile: the dataset read, the preflight's canary pod
and checks) is in that figure, a fifth of it with 5 trials; so the CPU is also read each time
the watch sees a trial finish, and the per-trial figure judged is the steady one: from the first
trial finished to the last, over the trials between (each with its share of the reconcile ticks
and the idle operator's own CPU in between).

Each finished trial's phases (bench/phases.py: created -> Provisioning -> ... -> Succeeded, from
its final status.phaseTimes and the watch) go to p1-phases.jsonl in the bench output folder
(bench/out/), plotted with the bare pods as p1-phases.png beside it.

    .venv/bin/python bench/trial.py [--attempts 5] [--task hello-file]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import replace
from pathlib import Path
from typing import Any

from buzz_operator.api.common import GROUP, VERSION
from buzz_operator.api.sweep import BuzzSweepSpec
from buzz_operator.api.trial import BuzzTrialSpec
from buzz_operator.dataset import builtin_dataset_path, load_dataset
from buzz_operator.kube import client as kube_client
from buzz_operator.kube import exec as kexec
from buzz_operator.kube import objects
from buzz_operator.kube.client import Kube
from buzz_operator.kube.runtimes import mounts_image_volumes
from buzz_operator.pod.trial_pod import build_trial_pod, forwarder_listen_address
from buzz_operator.trial.drive.setup import relay_service
from kubernetes_asyncio import watch
from kubernetes_asyncio.client.exceptions import ApiException

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
from cluster import stage, sweep_body  # noqa: E402
from figures import INFO, LOWER, RUN_ENV, Figure, out_dir  # noqa: E402
from figures import record as record_figure  # noqa: E402
from phases import PLOT_FILE, ROWS_FILE, SEGMENTS, breakdown, draw, read_rows  # noqa: E402

# The stand-in stack, copied by the init container or mounted as an image volume (docs/stack.md#mount);
# copy's figures keep their names, image's carry the label.
STACK = {"image": "docker.io/buzz/stack:dev", "layout": "folder"}
MOUNT_LABELS = {"copy": "", "image": " [mount image]"}
TARGET_RATIO = 1.5
TARGET_WRITES = 15.0
TARGET_CPU_S = 0.25
WRITE_METHODS = ("POST", "PUT", "PATCH", "DELETE")


async def bare_pod(kube: Kube, namespace: str, image: str, runtime_class: str | None = None) -> float:
    """Seconds from create to the first answered exec, for a one-container pod of `image` (under
    `runtime_class` when given, as the trials run: the baseline pays the same sandbox)."""
    body = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"bare-{uuid.uuid4().hex[:6]}"},
            "spec": {"containers": [{"name": "task", "image": image, "imagePullPolicy": "Never",
                                     "command": ["sh", "-c", 'trap "exit 0" TERM; while :; do sleep 3600 & wait $!; done']}],
                     "automountServiceAccountToken": False, "terminationGracePeriodSeconds": 1,
                     "restartPolicy": "Never", **({"runtimeClassName": runtime_class} if runtime_class else {})}}
    return await exec_ready_s(kube, namespace, body)


async def trial_pod_alone(kube: Kube, namespace: str, trial: dict[str, Any], sweep: BuzzSweepSpec) -> float:
    """Seconds from create to the first answered exec for the pod the operator builds for
    `trial` (build_trial_pod over its own spec: stack install, forwarder sidecar, task), created
    by hand with no operator running: what the pod's shape costs over the bare pod."""
    service = relay_service(sweep)
    listen, target = (None, None) if service is None else (
        forwarder_listen_address(sweep.relay.url),
        await objects.service_target(kube, namespace, service.name, service.port))
    meta = trial["metadata"]
    body = build_trial_pod(trial_name=meta["name"], trial_uid=meta["uid"], namespace=namespace, retry=0,
                           spec=BuzzTrialSpec.model_validate(trial["spec"]), trial_labels=meta.get("labels") or {},
                           relay_listen=listen, relay_target=target)
    body["metadata"]["name"] = f"alone-{uuid.uuid4().hex[:6]}"
    return await exec_ready_s(kube, namespace, body)


async def exec_ready_s(kube: Kube, namespace: str, body: dict[str, Any]) -> float:
    """Create `body`, watch it to Running, then exec `true` in its `task` container until it
    answers; the seconds from create to that answer. The pod is deleted after."""
    name = body["metadata"]["name"]
    stream = watch.Watch()
    began = time.perf_counter()
    await objects.create_pod(kube, namespace, body)
    try:
        async for event in stream.stream(kube.core.list_namespaced_pod, namespace,
                                         field_selector=f"metadata.name={name}", timeout_seconds=120):
            if (event["object"].status.phase or "") == "Running":
                break
    finally:
        await stream.close()  # each Watch owns an aiohttp session
    while True:
        try:
            result = await kexec.run(kube, namespace, name, "task", "true", timeout_s=10)
            if result.exit_code == 0:
                break
        except Exception:  # not exec-ready yet: the container is still starting
            pass
        await asyncio.sleep(0.05)
    elapsed = time.perf_counter() - began
    await objects.delete_pod(kube, namespace, name, grace_seconds=0)
    return elapsed


async def trial_pods_alone(kube: Kube, namespace: str, count: int) -> list[float]:
    """trial_pod_alone `count` times for the run's first trial, one pod at a time."""
    trials = await kube.custom.list_namespaced_custom_object(GROUP, VERSION, namespace, "buzztrials")
    if not trials["items"]:
        return []
    trial = trials["items"][0]
    sweep = await kube.custom.get_namespaced_custom_object(GROUP, VERSION, namespace, "buzzsweeps",
                                                          trial["spec"]["sweepName"])
    sweep_spec = BuzzSweepSpec.model_validate(sweep["spec"])
    return [await trial_pod_alone(kube, namespace, trial, sweep_spec) for _ in range(count)]


def stat_cpu_seconds(stat: str, ticks_per_s: int) -> float:
    """utime + stime + cutime + cstime (fields 14-17) of a /proc/<pid>/stat line, in seconds; the
    command name (field 2) is in parentheses and may itself hold spaces and parentheses."""
    fields = stat.rsplit(")", 1)[1].split()  # from field 3 on
    return sum(int(v) for v in fields[11:15]) / ticks_per_s


def cpu_seconds(pid: int) -> float:
    """CPU-seconds the process used so far: utime + stime, and those of its reaped children."""
    return stat_cpu_seconds(Path(f"/proc/{pid}/stat").read_text(), os.sysconf("SC_CLK_TCK"))


def _sampled(stats_path: Path) -> bool:
    return stats_path.is_file() and stats_path.stat().st_size > 0


async def settled_cpu(operator: subprocess.Popen[bytes], stats_path: Path, within_s: float = 60.0) -> float:
    """The operator's CPU-seconds once it has started (imported, logged in, its watches up): the
    first stats sample is written after the imports, then CPU must stay flat for a second."""
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline and not _sampled(stats_path):
        if operator.poll() is not None:
            break
        await asyncio.sleep(0.2)
    last = cpu_seconds(operator.pid)
    while time.monotonic() < deadline and operator.poll() is None:
        await asyncio.sleep(1.0)
        now = cpu_seconds(operator.pid)
        if now - last < 0.03:
            return now
        last = now
    return last


class PhaseClock:
    """Times (epoch seconds, this host) at which each trial was first seen in each phase (and
    created), and the last status seen of each."""

    def __init__(self, kube: Kube, namespace: str) -> None:
        self.kube, self.namespace = kube, namespace
        self.seen: dict[str, dict[str, float]] = {}
        self.status: dict[str, dict[str, object]] = {}
        self.pid: int | None = None  # the operator's: its CPU is read as each trial finishes
        self.finished_cpu: list[float] = []

    async def run(self) -> None:
        while True:
            stream = watch.Watch()
            try:
                async for event in stream.stream(self.kube.custom.list_namespaced_custom_object, GROUP, VERSION,
                                                 self.namespace, "buzztrials", timeout_seconds=60):
                    obj, now = event["object"], time.time()
                    phases = self.seen.setdefault(obj["metadata"]["name"], {"created": now})
                    self.status[obj["metadata"]["name"]] = obj.get("status") or {}
                    phase = (obj.get("status") or {}).get("phase")
                    if phase and phase not in phases:
                        phases[phase] = now
                        if phase in ("Succeeded", "Failed") and self.pid is not None:
                            self.finished_cpu.append(cpu_seconds(self.pid))
            except ApiException as error:
                # a CRD the stage just installed answers 429 "storage is (re)initializing" for a
                # moment; a clock that died on it would see no trial finish and call the run incomplete
                print(f"phase clock: watch failed ({error.status} {error.reason}); watching again", flush=True)
                await asyncio.sleep(0.5)
            finally:
                await stream.close()  # each Watch owns an aiohttp session


async def run(args: argparse.Namespace, tmp: Path, mount: str) -> int:
    runtime = {"runtimeClassName": args.runtime_class} if args.runtime_class else {}
    task = load_dataset(builtin_dataset_path(), [args.task], [])[0]
    image = task.image_ref(BuzzSweepSpec.model_fields["task_image_registry"].default, "builtin")
    stats_path, log_path = tmp / "operator.jsonl", Path(tempfile.gettempdir()) / "bench-trial-operator.log"
    kube = await kube_client.connect()
    operator: subprocess.Popen[bytes] | None = None
    clock_task: asyncio.Task[None] | None = None
    bare: list[float] = []
    alone: list[float] = []
    cpu: dict[str, float] = {}
    sweep_events = 0
    try:
        async with stage(kube, "bench-trial") as where:
            namespace = where.namespace
            for _ in range(args.attempts):  # the baseline first, while nothing else runs in the namespace
                bare.append(await bare_pod(kube, namespace, image, args.runtime_class))
            print(f"bare pod create -> exec-ready: {', '.join(f'{b:.2f}' for b in bare)} s", flush=True)
            clock = PhaseClock(kube, namespace)
            clock_task = asyncio.create_task(clock.run())
            with log_path.open("wb") as log:
                # Popen only forks; it does not wait
                operator = subprocess.Popen(  # noqa: ASYNC220
                    [sys.executable, os.environ.get("BUZZ_BENCH_OPERATOR", str(ROOT / "bench" / "observed_operator.py")),
                     namespace, str(stats_path)],
                    stdout=log, stderr=subprocess.STDOUT, env={**os.environ, "PYTHONPATH": str(ROOT / "operator")})
            began = time.monotonic()
            cpu["startup"] = await settled_cpu(operator, stats_path)
            cpu["started_after_s"] = time.monotonic() - began
            await asyncio.sleep(5.0)  # the idle operator's own CPU rate, to read the per-trial figure by
            cpu["idle_rate"] = (cpu_seconds(operator.pid) - cpu["startup"]) / 5.0
            body = sweep_body("p1", store_url=f"file://{tmp / 'store'}", tasks=[args.task], attempts=args.attempts,
                              parallelism=1, stack={**STACK, "mount": mount}, **runtime)
            cpu["begin"] = cpu_seconds(operator.pid)
            clock.pid = operator.pid
            await kube.custom.create_namespaced_custom_object(GROUP, VERSION, namespace, "buzzsweeps", body)
            deadline = time.monotonic() + args.timeout
            while time.monotonic() < deadline:
                done = [p for p in clock.seen.values() if "Succeeded" in p or "Failed" in p]
                if len(done) >= args.attempts:
                    break
                if operator.poll() is not None:
                    raise RuntimeError(f"operator exited {operator.returncode}; see {log_path}")
                if clock_task.done():  # the clock's own failure is the run's, never "0 trials succeeded"
                    clock_task.result()
                    raise RuntimeError("the phase clock stopped watching")
                await asyncio.sleep(1.0)
            if operator.poll() is None:
                await asyncio.sleep(1.0)  # the finish's own tail (release, Event) on the operator's clock
                cpu["end"] = cpu_seconds(operator.pid)
                if len(clock.finished_cpu) >= 2:
                    cpu["steady"] = (clock.finished_cpu[-1] - clock.finished_cpu[0]) / (len(clock.finished_cpu) - 1)
            seen, statuses = dict(clock.seen), dict(clock.status)
            stop(operator)
            sweep_events = await operator_events_on(kube, namespace, "BuzzSweep")
            # with the operator stopped, so nothing but the kubelet works on them
            alone = await trial_pods_alone(kube, namespace, args.attempts)
            print(f"trial pod alone create -> exec-ready: {', '.join(f'{a:.2f}' for a in alone)} s", flush=True)
    finally:
        if operator is not None:
            stop(operator)
        if clock_task is not None:
            clock_task.cancel()
        await kube.close()
    return report(args, bare, alone, seen, statuses, cpu, stats_path, tmp / "store" / "p1", sweep_events,
                  label=MOUNT_LABELS[mount] + (f" [{args.runtime_class}]" if args.runtime_class else ""))


async def operator_events_on(kube: Kube, namespace: str, kind: str) -> int:
    """Events the operator (kopf) posted about objects of `kind` in the namespace: the request
    counter sees every POST of an Event but not what it is about."""
    listed = await kube.core.list_namespaced_event(namespace, _preload_content=False)
    items = json.loads(await listed.read())["items"]
    return sum(1 for e in items if (e.get("involvedObject") or {}).get("kind") == kind
               and (e.get("source") or {}).get("component") == "kopf")


def sweep_writes(requests: dict[str, int], tries: int, sweep_events: int) -> int:
    """The writes of a run that are the sweep's, not a trial's: its status and metadata, its
    Events, and its preflight canary pod (named, but for its create: every pod create beyond one
    per try is the canary's)."""
    canary = (requests.get("POST pods", 0) - tries) + sum(
        n for key, n in requests.items() if key.split()[-1] == "pods(preflight)" and key.split()[0] in WRITE_METHODS)
    return (sum(n for key, n in requests.items() if key.split()[0] in WRITE_METHODS
                and key.split()[-1] in ("buzzsweeps", "buzzsweeps/status")) + sweep_events + canary)


def stop(operator: subprocess.Popen[bytes]) -> None:
    if operator.poll() is None:
        operator.send_signal(signal.SIGTERM)
        try:
            operator.wait(timeout=30)
        except subprocess.TimeoutExpired:
            operator.kill()
            operator.wait()


def agent_active_s(bundles: Path, trial: str) -> float | None:
    try:
        timing = json.loads((bundles / trial / "agent" / "buzz" / "timing.json").read_text())
    except (OSError, ValueError):
        return None
    value = timing.get("agent_active_seconds")
    return float(value) if isinstance(value, int | float) else None


def report(args: argparse.Namespace, bare: list[float], alone: list[float], seen: dict[str, dict[str, float]],
           statuses: dict[str, dict[str, object]], cpu: dict[str, float], stats_path: Path, bundles: Path,
           sweep_events: int, label: str = "") -> int:
    """Every figure of one mount's run; ``label`` follows each figure's name (empty for copy,
    whose figures keep the names earlier runs recorded them under)."""
    def record(figure: Figure) -> Figure:
        return record_figure(replace(figure, name=figure.name + label))

    ok = True
    finished = {name: p for name, p in seen.items() if "Succeeded" in p}
    failed = [name for name, p in seen.items() if "Failed" in p]
    if failed or len(finished) < args.attempts:
        print(f"INCOMPLETE: {len(finished)} of {args.attempts} trials succeeded; failed: {failed}")
        ok = False
    if not finished:
        return 1
    launch = [p["Running"] - p["created"] for p in finished.values() if "Running" in p]
    wall = {name: p["Succeeded"] - p["created"] for name, p in finished.items()}
    active = {name: a for name in finished if (a := agent_active_s(bundles, name)) is not None}
    if len(active) < len(finished):
        print(f"timing.json missing for {sorted(set(finished) - set(active))}")
        ok = False
    added = [wall[name] - active[name] for name in active]
    base = statistics.median(bare)
    record(Figure("P1 bare pod create -> exec-ready (baseline)", "s", bare, INFO, decimals=2))
    if alone:
        record(Figure("P1 the trial's pod alone (no operator) create -> exec-ready", "s", alone, INFO, decimals=2,
                      note=f"stack install, forwarder sidecar, task: {statistics.median(alone) - base:.2f} s of the "
                           "operator-added time is the pod's shape"))
    record(Figure("P1 trial created -> Succeeded (wall)", "s", list(wall.values()), INFO, decimals=2))
    record(Figure("P1 agent active: task posted -> DONE: (stand-in oracle)", "s", list(active.values()) or [0.0],
                  INFO, decimals=2, note="not operator time; from the bundle's timing.json"))
    record(Figure("P1 operator: trial created -> Running", "s", launch, INFO, decimals=2,
                  note="provisioned, pod up, agents launched and subscribed"))
    if added:
        ok &= bool(record(Figure("P1 trial overhead ratio (operator-added / bare pod)", "x",
                                 sorted(a / base for a in added), LOWER, TARGET_RATIO, decimals=2,
                                 note=f"operator-added {statistics.median(added):.2f} s vs bare pod {base:.2f} s; "
                                      f"task {args.task}")).passed)
    if "end" in cpu:
        used = cpu["end"] - cpu["begin"]
        profiled = os.environ.get("BUZZ_BENCH_OPERATOR")
        by = f"; operator run by {Path(profiled).name}" if profiled else ""
        whole = Figure("P1 operator CPU per finished trial, the sweep's once-only work included", "CPU-s",
                       [used / len(finished)], INFO if "steady" in cpu else LOWER, TARGET_CPU_S, decimals=3,
                       note=f"{used:.2f} CPU-s for {len(finished)} trials, sweep created -> 1 s after the "
                            f"last finished (idle operator {cpu['idle_rate']:.3f} CPU-s/s); "
                            f"startup {cpu['startup']:.2f} CPU-s in {cpu['started_after_s']:.1f} s, apart{by}")
        if (passed := record(whole).passed) is not None:  # judged only when there is no steady figure
            ok &= passed
        if "steady" in cpu:
            once = used - cpu["steady"] * len(finished)
            ok &= bool(record(Figure("P1 operator CPU per trial, steady (first trial finished -> last)", "CPU-s",
                                     [cpu["steady"]], LOWER, TARGET_CPU_S, decimals=3,
                                     note=f"over {len(finished) - 1} trials; the sweep's once-only work is the "
                                          f"rest, about {once:.2f} CPU-s{by}")).passed)
    plot_phases(finished, statuses, active, bare, label)
    records = [json.loads(line) for line in stats_path.read_text().splitlines() if line.strip()]
    samples = [r for r in records if r["kind"] == "sample"]
    if samples:
        requests: dict[str, int] = samples[-1]["requests"]
        writes = sum(n for key, n in requests.items() if key.split()[0] in WRITE_METHODS)
        top = ", ".join(f"{k} {v}" for k, v in sorted(requests.items(), key=lambda kv: -kv[1])[:8])
        # every write by verb and resource, per trial: where the writes go is what a cut needs to know
        print("writes per trial: " + ", ".join(
            f"{k} {v / len(finished):.1f}" for k, v in sorted(requests.items(), key=lambda kv: -kv[1])
            if k.split()[0] in WRITE_METHODS))
        tries = sum(int(statuses.get(name, {}).get("retries") or 0) + 1 for name in finished)  # type: ignore[call-overload]
        of_sweep = sweep_writes(requests, tries, sweep_events)
        # a trial's lifecycle is the writes on its own objects: it, its pods, Secrets and Events;
        # the sweep's (status per reconcile tick, conditions' Events, the preflight canary) are
        # shared by its trials, so a 5-trial sweep at parallelism 1 charges each a fifth of them
        ok &= bool(record(Figure("P1 operator API writes per trial (its own objects, whole corridor)", "",
                                 [(writes - of_sweep) / len(finished)], LOWER, TARGET_WRITES, decimals=1,
                                 note=f"{sum(requests.values()) / len(finished):.0f} requests per trial incl. "
                                      f"watches and exec; {top}")).passed)
        record(Figure("P1 the sweep's API writes per trial (one sweep of --attempts trials at parallelism 1)", "",
                      [of_sweep / len(finished)], INFO, decimals=1,
                      note=f"{of_sweep} writes: its status, its Events ({sweep_events}), the preflight canary; "
                           f"all trials' and the sweep's together {writes / len(finished):.1f} per trial"))
    return 0 if ok else 1


def plot_phases(finished: dict[str, dict[str, float]], statuses: dict[str, dict[str, object]],
                active: dict[str, float], bare: list[float], label: str = "") -> None:
    """Append this run's phase rows to the output folder's p1-phases.jsonl (a run on its own starts
    it anew), record each phase's durations as info figures, and redraw p1-phases.png; a labelled
    run's go to files named after its label: mount image's to p1-phases-image.jsonl and .png, a
    RuntimeClass's to p1-phases-<class>.* (both: p1-phases-image-<class>.*)."""
    run = os.environ.get(RUN_ENV)
    suffix = "".join(f"-{word}" for word in re.findall(r"\[(?:mount )?([a-z0-9.-]+)\]", label))
    rows_path = out_dir() / ROWS_FILE.replace(".jsonl", f"{suffix}.jsonl")
    if run is None:
        rows_path.unlink(missing_ok=True)
    rows: list[dict[str, object]] = [{"kind": "bare", "run": int(run or 1), "samples": bare}]
    for name in sorted(finished, key=lambda n: finished[n]["created"]):
        times = statuses.get(name, {}).get("phaseTimes")
        segments = breakdown(finished[name]["created"], finished[name], times if isinstance(times, dict) else {})
        rows.append({"kind": "trial", "run": int(run or 1), "trial": name, "segments": segments,
                     "active_s": active.get(name)})
    with rows_path.open("a", encoding="utf-8") as handle:
        handle.writelines(json.dumps(row) + "\n" for row in rows)
    trials = [r for r in rows if r["kind"] == "trial"]
    for segment in SEGMENTS:
        durations = [sum(end - begin for seg, begin, end, _ in t["segments"] if seg == segment)  # type: ignore[attr-defined]
                     for t in trials]
        record_figure(Figure(f"P1 phase: {segment}{label}", "s", durations, INFO, decimals=2))
    try:
        drawn = draw(read_rows(rows_path), rows_path.with_name(PLOT_FILE.replace(".png", f"{suffix}.png")))
    except ImportError as error:  # matplotlib is in the dev extras; without it the rows are still written
        print(f"phase plot not drawn ({error}); rows in {rows_path}")
    else:
        print(f"phase plot: {drawn}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--attempts", type=int, default=5)
    parser.add_argument("--task", default="hello-file")
    parser.add_argument("--timeout", type=float, default=600.0)
    parser.add_argument("--mount", choices=("both", *MOUNT_LABELS), default="both",
                        help="how trial pods get the stack (spec.stack.mount); both: copy, then image where the "
                             "cluster's runtime mounts image volumes")
    parser.add_argument("--runtime-class", default=None,
                        help="run the trials and the bare pods under this RuntimeClass (gvisor: docs/isolation.md); "
                             "its figures carry its name")
    args = parser.parse_args()
    mounts = list(MOUNT_LABELS) if args.mount == "both" else [args.mount]
    runtimes = node_runtimes()
    if args.mount == "both" and not (runtimes and all(mounts_image_volumes(r) for r in runtimes)):
        print(f"mount image not measured: the cluster's runtime {runtimes} mounts no image volumes "
              "(docs/local-cluster.md#containerd-2)", flush=True)
        mounts = ["copy"]
    code = 0
    for mount in mounts:  # each its own stage, operator and bare-pod baseline: side by side in one run
        print(f"-- spec.stack.mount {mount}", flush=True)
        with tempfile.TemporaryDirectory(prefix="bench-trial-") as tmp:
            code = max(code, asyncio.run(run(args, Path(tmp), mount)))
    return code


def node_runtimes() -> list[str]:
    """Every node's status.nodeInfo.containerRuntimeVersion."""
    return subprocess.run(["kubectl", "get", "nodes", "-o",
                           "jsonpath={.items[*].status.nodeInfo.containerRuntimeVersion}"],
                          capture_output=True, text=True, check=True).stdout.split()


if __name__ == "__main__":
    raise SystemExit(main())
