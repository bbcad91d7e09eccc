"""Two operator replicas with leader election (docs/leadership.md), the leader SIGKILLed twice
mid-sweep — a trial Running, then a trial grading or bundling — and started again as a standby
each time: the standby takes the Lease and carries the sweep to the end. Every trial ends exactly
once, no pod or relay tenant is made twice, every bundle is in the store, and no replica ran a
handler before it led.

Prints, per kill, how long from the leader's death until the Lease changed hands and until the new
leader's first write to a BuzzTrial or BuzzSweep (docs/leadership.md#measured).
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

import asyncpg
from buzz_operator.api.common import GROUP, VERSION
from buzz_operator.kube import leases
from buzz_operator.kube.client import Kube

from .conftest import list_trials, settled, wait_for

TASKS = ["hello-file", "user-mention", "reply-to-thread", "create-channel-invite-users", "multiline-message"]
ATTEMPTS = 2  # 10 trials
LEASE = "buzz-operator"
KILL_POINTS = (
    ("a trial Running", lambda ts: any(_phase(t) == "Running" for t in ts)),
    ("a trial grading or bundling", lambda ts: any(_phase(t) in ("Collecting", "Grading", "Bundling") for t in ts)),
)


def _phase(trial: dict) -> str:  # type: ignore[type-arg]
    return str((trial.get("status") or {}).get("phase") or "Pending")


class Replica:
    """`buzz-operator --leader-election` as a child process named ``name`` in the Lease."""

    def __init__(self, name: str, namespace: str, workdir: Path) -> None:
        self.name, self.namespace, self.workdir, self.proc = name, namespace, workdir, None
        self.log_path = workdir / f"operator-{name}.log"
        self.starts = 0

    def start(self) -> None:
        script = os.path.join(os.path.dirname(sys.executable), "buzz-operator")
        env = {**os.environ, "BUZZ_WORKDIR": str(self.workdir / self.name), "BUZZ_SWEEP_INTERVAL_S": "2",
               "BUZZ_JANITOR_INTERVAL_S": "10", "POD_NAME": self.name}
        (self.workdir / self.name).mkdir(exist_ok=True)
        with self.log_path.open("a") as log:
            log.write(f"--- start {self.starts + 1}\n")
        self.proc = subprocess.Popen([script, "-n", self.namespace, "--liveness", "", "--leader-election",
                                      "--lease-name", LEASE, "--lease-namespace", self.namespace],
                                     stdout=self.log_path.open("ab"), stderr=subprocess.STDOUT, env=env)
        self.starts += 1

    def kill(self) -> None:
        assert self.proc is not None and self.proc.poll() is None, f"replica {self.name} died on its own"
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=30)

    def stop(self) -> int:
        assert self.proc is not None
        if self.proc.poll() is not None:
            return int(self.proc.returncode)
        self.proc.send_signal(signal.SIGTERM)
        return int(self.proc.wait(timeout=60))


async def _holder(kube: Kube, namespace: str) -> str | None:
    lease = await leases.read_lease(kube, namespace, LEASE, timeout_s=5)
    return ((lease or {}).get("spec") or {}).get("holderIdentity")


async def _versions(kube: Kube, namespace: str) -> dict[str, str]:
    """resourceVersion of every BuzzTrial and BuzzSweep: only the operator writes them."""
    out = {}
    for plural in ("buzztrials", "buzzsweeps"):
        listed = await kube.custom.list_namespaced_custom_object(GROUP, VERSION, namespace, plural)
        out |= {f"{plural}/{o['metadata']['name']}": o["metadata"]["resourceVersion"] for o in listed["items"]}
    return out


def _standby_ran_no_handler(log: str) -> bool:
    """In every start of a replica, kopf's first line comes after the replica said it leads."""
    for start in log.split("--- start ")[1:]:
        lines = start.splitlines()
        leads = next((i for i, line in enumerate(lines) if " leads" in line), None)
        kopf = next((i for i, line in enumerate(lines) if "kopf." in line), None)
        if kopf is not None and (leads is None or kopf < leads):
            return False
    return True


async def test_the_standby_takes_over_when_the_leader_is_sigkilled(  # type: ignore[no-untyped-def]
    kube: Kube, namespace, crds, sweep_secrets, cluster_relay, make_sweep, tmp_path: Path
) -> None:
    store = tmp_path / "store"
    pods_seen: dict[str, set[str]] = defaultdict(set)
    stop_watching = asyncio.Event()

    async def watch_pods() -> None:
        while not stop_watching.is_set():
            listed = await kube.core.list_namespaced_pod(namespace, label_selector="app.kubernetes.io/component"
                                                                               "=trial-pod")
            for pod in listed.items:
                pods_seen[pod.metadata.name].add(pod.metadata.uid)
            await asyncio.sleep(0.5)

    replicas = {name: Replica(name, namespace, tmp_path) for name in ("replica-a", "replica-b")}
    watcher = asyncio.create_task(watch_pods())
    takeovers: list[str] = []
    started = time.monotonic()
    try:
        for replica in replicas.values():
            replica.start()
        await wait_for(lambda: _holder(kube, namespace), 60, "a replica to lead", poll=0.2)
        await kube.custom.create_namespaced_custom_object(GROUP, VERSION, namespace, "buzzsweeps", make_sweep(
            "failover", store_url=f"file://{store}", tasks=TASKS, attempts=ATTEMPTS, parallelism=4,
            cpuRequestFraction=0.1, retry={"maxRetries": 2, "backoffSeconds": 1}))
        for what, reached in KILL_POINTS:
            async def at_point(reached=reached) -> bool:  # type: ignore[no-untyped-def]
                return reached(await list_trials(kube, namespace))
            await wait_for(at_point, 600, what, poll=0.2)
            leader = await _holder(kube, namespace)
            assert leader in replicas, leader
            replicas[leader].kill()
            died = time.monotonic()
            before = await _versions(kube, namespace)
            handed = wrote = None
            while (handed is None or wrote is None) and time.monotonic() - died < 120:
                if handed is None and await _holder(kube, namespace) not in (None, leader):
                    handed = time.monotonic() - died
                now = await _versions(kube, namespace)
                if wrote is None and any(before.get(k) != v for k, v in now.items()):
                    wrote = time.monotonic() - died
                await asyncio.sleep(0.2)
            takeovers.append(f"{what}: Lease handed over after {handed:.1f}s, first write after {wrote:.1f}s"
                             if handed is not None and wrote is not None else f"{what}: no takeover in 120s")
            replicas[leader].start()  # back as a standby

        async def all_settled() -> list[dict] | None:  # type: ignore[type-arg]
            found = await list_trials(kube, namespace)
            return found if len(found) == ATTEMPTS * len(TASKS) and all(settled(t) for t in found) else None

        trials = await wait_for(all_settled, 900, "every trial settled", poll=2)
    finally:
        stop_watching.set()
        await watcher
        codes = {name: replica.stop() for name, replica in replicas.items()}
    elapsed = time.monotonic() - started

    names = [t["metadata"]["name"] for t in trials]
    terminal = sum(t["status"]["phase"] in ("Succeeded", "Failed") for t in trials)
    scored = sum(t["status"].get("reward") == 1.0 for t in trials)
    tries = {t["metadata"]["name"]: t["status"].get("retries", 0) + 1 for t in trials}
    duplicate_pods = sum(len(uids) - 1 for uids in pods_seen.values())
    conn = await asyncpg.connect(cluster_relay.target.pg_dsn)
    try:
        tenants = await conn.fetchval("SELECT count(*) FROM benchmark.trial_manifest WHERE run_id = 'failover'")
    finally:
        await conn.close()
    missing = [n for n in names if not (store / "failover" / n / "result.json").is_file()]
    logs = {name: r.log_path.read_text(errors="replace") for name, r in replicas.items()}
    print(f"\nleader SIGKILLed {len(takeovers)}x in {elapsed:.0f}s ({'; '.join(takeovers)}): {terminal}/{len(names)} "
          f"terminal ({scored} scored 1.0), {duplicate_pods} duplicate pods, {tenants} tenants for "
          f"{sum(tries.values())} tries, {len(missing)} bundles missing")
    assert all(code == 0 for code in codes.values()), {n: logs[n][-3000:] for n, c in codes.items() if c}
    assert len(takeovers) == 2 and all("handed over" in t for t in takeovers), takeovers
    assert sorted(names) == sorted(set(names)) and len(names) == ATTEMPTS * len(TASKS)
    assert terminal == len(names), [(t["metadata"]["name"], t["status"]) for t in trials]
    assert duplicate_pods == 0, {n: u for n, u in pods_seen.items() if len(u) > 1}
    assert tenants == sum(tries.values()), (tenants, tries)
    assert not missing, missing
    assert all(_standby_ran_no_handler(log) for log in logs.values()), {n: log[:3000] for n, log in logs.items()}
