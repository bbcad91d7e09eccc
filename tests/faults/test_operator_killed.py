"""The operator SIGKILLed at five points of a 20-trial sweep and restarted each time (the
`buzz-operator` console script as a subprocess): first trials just created, a trial launching,
a trial Running, a trial grading or bundling, half the trials finished. Every trial ends exactly
once, no pod or relay tenant is made twice, and every bundle is in the store.

Prints: operator killed 5x: <terminal>/20 terminal, <dup> duplicate pods, <dup> duplicate tenants,
<missing> bundles missing.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

import asyncpg
from buzz_operator.api.common import GROUP, VERSION
from buzz_operator.kube.client import Kube

from .conftest import list_trials, settled, wait_for

TASKS = ["hello-file", "user-mention", "reply-to-thread", "create-channel-invite-users",
         "read-named-path-outside-workspace"]
ATTEMPTS = 4  # 5 tasks × 4 = 20 trials
# Each point sees the trials and the names of the trial pods seen so far. Entering Provisioning
# and Launching is not written (trial/state.write_can_wait): a trial is launching when its pod
# exists while its status still says Pending.
KILL_POINTS = (
    ("first trials created", lambda ts, pods: len(ts) > 0),
    ("a trial launching", lambda ts, pods: any(_phase(t) in ("Pending", "Provisioning", "Launching")
                                                and t["metadata"]["name"] in pods for t in ts)),
    ("a trial Running", lambda ts, pods: any(_phase(t) == "Running" for t in ts)),
    ("a trial grading or bundling",
     lambda ts, pods: any(_phase(t) in ("Collecting", "Grading", "Bundling") for t in ts)),
    ("half the trials finished", lambda ts, pods: sum(_phase(t) in ("Succeeded", "Failed") for t in ts) >= 10),
)


def _phase(trial: dict) -> str:  # type: ignore[type-arg]
    return str((trial.get("status") or {}).get("phase") or "Pending")


class Operator:
    """`buzz-operator -n <namespace>` as a child process we can SIGKILL."""

    def __init__(self, namespace: str, workdir: Path) -> None:
        self.namespace, self.workdir, self.proc = namespace, workdir, None
        self.log = (workdir / "operator.log").open("ab")
        self.starts = 0

    def start(self) -> None:
        script = os.path.join(os.path.dirname(sys.executable), "buzz-operator")
        env = {**os.environ, "BUZZ_WORKDIR": str(self.workdir), "BUZZ_SWEEP_INTERVAL_S": "2",
               "BUZZ_JANITOR_INTERVAL_S": "10"}
        self.proc = subprocess.Popen([script, "-n", self.namespace, "--liveness", ""], stdout=self.log,
                                     stderr=subprocess.STDOUT, env=env)
        self.starts += 1

    def kill(self) -> None:
        assert self.proc is not None and self.proc.poll() is None, "the operator died on its own"
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=30)

    def stop(self) -> int:
        assert self.proc is not None
        if self.proc.poll() is not None:
            return int(self.proc.returncode)
        self.proc.send_signal(signal.SIGTERM)
        try:
            return int(self.proc.wait(timeout=60))
        finally:
            self.log.close()


async def test_operator_sigkilled_five_times(  # type: ignore[no-untyped-def]
    kube: Kube, namespace, crds, sweep_secrets, cluster_relay, make_sweep, tmp_path: Path
) -> None:
    store = tmp_path / "store"
    pods_seen: dict[str, set[str]] = defaultdict(set)  # pod name -> uids
    stop_watching = asyncio.Event()

    async def watch_pods() -> None:
        while not stop_watching.is_set():
            listed = await kube.core.list_namespaced_pod(namespace, label_selector="app.kubernetes.io/component"
                                                                               "=trial-pod")
            for pod in listed.items:
                pods_seen[pod.metadata.name].add(pod.metadata.uid)
            await asyncio.sleep(0.5)

    operator = Operator(namespace, tmp_path)
    watcher = asyncio.create_task(watch_pods())
    killed_at: list[str] = []
    started = time.monotonic()
    try:
        operator.start()
        await kube.custom.create_namespaced_custom_object(GROUP, VERSION, namespace, "buzzsweeps", make_sweep(
            "killed", store_url=f"file://{store}", tasks=TASKS, attempts=ATTEMPTS, parallelism=4,
            cpuRequestFraction=0.1, retry={"maxRetries": 2, "backoffSeconds": 1}))
        for what, reached in KILL_POINTS:
            async def at_point(reached=reached) -> bool:  # type: ignore[no-untyped-def]
                return reached(await list_trials(kube, namespace), set(pods_seen))
            await wait_for(at_point, 600, what, poll=0.2)
            operator.kill()
            killed_at.append(f"{what} @{time.monotonic() - started:.0f}s")
            await asyncio.sleep(1)
            operator.start()

        async def all_settled() -> list[dict] | None:  # type: ignore[type-arg]
            found = await list_trials(kube, namespace)
            return found if len(found) == ATTEMPTS * len(TASKS) and all(settled(t) for t in found) else None

        trials = await wait_for(all_settled, 900, "every trial settled", poll=2)
    finally:
        stop_watching.set()
        await watcher
        code = operator.stop()
    elapsed = time.monotonic() - started

    names = [t["metadata"]["name"] for t in trials]
    terminal = sum(t["status"]["phase"] in ("Succeeded", "Failed") for t in trials)
    scored = sum(t["status"].get("reward") == 1.0 for t in trials)
    tries = {t["metadata"]["name"]: t["status"].get("retries", 0) + 1 for t in trials}
    duplicate_pods = sum(len(uids) - 1 for uids in pods_seen.values())
    conn = await asyncpg.connect(cluster_relay.target.pg_dsn)
    try:
        rows = await conn.fetch("SELECT trial_id, channel_id::text AS channel FROM benchmark.trial_manifest "
                                "WHERE run_id = 'killed'")
        channels = await conn.fetchval("SELECT count(*) FROM relay.channels WHERE id = ANY($1::text[])",
                                       [r["channel"] for r in rows])
        unarchived = await conn.fetchval("SELECT count(*) FROM benchmark.trial_manifest WHERE run_id = 'killed' "
                                         "AND archived_at IS NULL")
    finally:
        await conn.close()
    duplicate_tenants = len(rows) - sum(tries.values())
    bundles = {n: store / "killed" / n for n in names}
    missing = [n for n, path in bundles.items() if not (path / "result.json").is_file()]
    files = {n: sum(1 for p in path.rglob("*") if p.is_file()) for n, path in bundles.items() if path.is_dir()}
    task_posts = {}
    for n, path in bundles.items():
        evidence = path / "agent" / "buzz" / "buzz-evidence.json"
        if evidence.is_file():
            task_posts[n] = sum(m["author_role"] == "user" for m in json.loads(evidence.read_text())["messages"])
    print(f"\noperator SIGKILLed {len(killed_at)}x ({'; '.join(killed_at)}), {operator.starts} starts, {elapsed:.0f}s:"
          f" {terminal}/{len(names)} terminal ({scored} scored 1.0), {duplicate_pods} duplicate pods, "
          f"{duplicate_tenants} duplicate tenants ({len(rows)} tenants for {sum(tries.values())} tries, "
          f"{channels} channels, {unarchived} unarchived), {len(missing)} bundles missing "
          f"(files per bundle {min(files.values(), default=0)}-{max(files.values(), default=0)}), "
          f"task posts per native trial {sorted(set(task_posts.values()))}, infra retries "
          f"{sum(tries.values()) - len(tries)}")
    assert code == 0, (tmp_path / "operator.log").read_text()[-3000:]
    assert len(killed_at) == 5
    assert sorted(names) == sorted(set(names)) and len(names) == ATTEMPTS * len(TASKS)
    assert terminal == len(names)
    assert duplicate_pods == 0, {n: u for n, u in pods_seen.items() if len(u) > 1}
    assert duplicate_tenants == 0 and channels == len(rows) and unarchived == 0
    assert missing == []
    assert set(task_posts.values()) <= {1}, task_posts
