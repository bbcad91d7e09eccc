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
import time
from pathlib import Path

import asyncpg
from buzz_operator.api.common import GROUP, VERSION
from buzz_operator.kube.client import Kube

from .conftest import TrialPodWatch, lease_holder, list_trials, replica, settled, tally, wait_for

TASKS = ["hello-file", "user-mention", "reply-to-thread", "create-channel-invite-users", "multiline-message"]
ATTEMPTS = 2  # 10 trials
KILL_POINTS = (
    ("a trial Running", lambda ts: any(_phase(t) == "Running" for t in ts)),
    ("a trial grading or bundling", lambda ts: any(_phase(t) in ("Collecting", "Grading", "Bundling") for t in ts)),
)


def _phase(trial: dict) -> str:  # type: ignore[type-arg]
    return str((trial.get("status") or {}).get("phase") or "Pending")


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
    pods = TrialPodWatch(kube, namespace)

    replicas = {name: replica(name, namespace, tmp_path) for name in ("replica-a", "replica-b")}
    pods.start()
    takeovers: list[str] = []
    started = time.monotonic()
    try:
        for process in replicas.values():
            process.start()
        await wait_for(lambda: lease_holder(kube, namespace), 60, "a replica to lead", poll=0.2)
        await kube.custom.create_namespaced_custom_object(GROUP, VERSION, namespace, "buzzsweeps", make_sweep(
            "failover", store_url=f"file://{store}", tasks=TASKS, attempts=ATTEMPTS, parallelism=4,
            cpuRequestFraction=0.1, retry={"maxRetries": 2, "backoffSeconds": 1}))
        for what, reached in KILL_POINTS:
            async def at_point(reached=reached) -> bool:  # type: ignore[no-untyped-def]
                return reached(await list_trials(kube, namespace))
            await wait_for(at_point, 600, what, poll=0.2)
            leader = await lease_holder(kube, namespace)
            assert leader in replicas, leader
            replicas[leader].kill()
            died = time.monotonic()
            before = await _versions(kube, namespace)
            handed = wrote = None
            while (handed is None or wrote is None) and time.monotonic() - died < 120:
                if handed is None and await lease_holder(kube, namespace) not in (None, leader):
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
        await pods.stop()
        codes = {name: process.stop() for name, process in replicas.items()}
    elapsed = time.monotonic() - started

    counted = tally(trials)
    names, terminal, scored, tries = counted.names, counted.terminal, counted.scored, counted.tries
    duplicate_pods = pods.duplicates
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
    assert duplicate_pods == 0, pods.twice()
    assert tenants == sum(tries.values()), (tenants, tries)
    assert not missing, missing
    assert all(_standby_ran_no_handler(log) for log in logs.values()), {n: log[:3000] for n, log in logs.items()}
