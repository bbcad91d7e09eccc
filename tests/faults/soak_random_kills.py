"""The soak run of #47 (`make soak`; not in `make test`: 1,000 trials take hours on 2 cores).

Two operator replicas with leader election (docs/leadership.md) carry sweeps of real trials on the
local cluster — the stand-in stack, the builtin suite (hello-file and the Buzz-native tasks),
spec.parallelism at the node's full width — first a baseline sweep with no kills, then the soak
sweep with the **leader** SIGKILLed at random every 20–60 s, and started again as a standby once
the other replica holds the Lease (started at once, it would take back its own Lease before the
standby's wait is over: a restart, not a takeover).

Printed, then asserted:
- every trial committed exactly once: each trial terminal, its bundle's result.json and
  receipts.jsonl in the store, one relay tenant (a `benchmark.trial_manifest` row) per try, each
  archived; no trial pod made twice (the pod watch);
- nothing left after twice the janitor's interval (its grace to find and reap leftovers): no pod
  of a trial (trial, warm or pull pod), no trial Secret;
- each takeover: seconds from the kill until the other replica held the Lease;
- trials per minute without and with the kills, over the middle of each sweep (from 10 % to
  90 % of its trials settled), so the baseline's start and end do not weigh on it.

Sizes from the environment: BUZZ_SOAK_TRIALS (1,000), BUZZ_SOAK_BASELINE (a tenth of them, at
least 10), BUZZ_SOAK_PARALLELISM (8), BUZZ_SOAK_KILL_S ("20-60"), BUZZ_SOAK_SEED (the kills'
random seed, printed). docs/performance.md#soak has the figures of the last run.
"""

from __future__ import annotations

import asyncio
import os
import random
import time
from pathlib import Path

import asyncpg
from buzz_operator.api import labels
from buzz_operator.api.common import GROUP, VERSION
from buzz_operator.kube.client import Kube

from .conftest import (
    OperatorProcess,
    TrialPodWatch,
    lease_holder,
    list_trials,
    replica,
    settled,
    tally,
    wait_for,
)

ROOT = Path(__file__).resolve().parents[2]
TASKS = sorted(p.name for p in (ROOT / "tasks").iterdir() if (p / "task.toml").is_file())
TRIALS = int(os.environ.get("BUZZ_SOAK_TRIALS", "1000"))
BASELINE = int(os.environ.get("BUZZ_SOAK_BASELINE", str(max(TRIALS // 10, 10))))
PARALLELISM = int(os.environ.get("BUZZ_SOAK_PARALLELISM", "8"))
KILL_MIN_S, KILL_MAX_S = (float(x) for x in os.environ.get("BUZZ_SOAK_KILL_S", "20-60").split("-"))
SEED = int(os.environ.get("BUZZ_SOAK_SEED", str(int(time.time()))))
JANITOR_S = 10.0  # OperatorProcess runs the janitor every 10 s
TRIAL_S = 1800.0  # the longest a sweep may take per 100 trials before the run gives up


async def run_sweep(kube: Kube, namespace: str, make_sweep, store: Path, name: str, trials: int,  # type: ignore[no-untyped-def]
                    replicas: dict[str, OperatorProcess], kills: random.Random | None) -> tuple[list[dict], float, list[str]]:  # type: ignore[type-arg]
    """Run one sweep of `trials` to the end, killing the leader at random when `kills` is given:
    (its trials, trials settled per minute from 10 % to 90 % of them, the kills made)."""
    attempts = -(-trials // len(TASKS))
    await kube.custom.create_namespaced_custom_object(GROUP, VERSION, namespace, "buzzsweeps", make_sweep(
        name, store_url=f"file://{store}", tasks=TASKS, attempts=attempts, parallelism=PARALLELISM,
        cpuRequestFraction=0.1, retry={"maxRetries": 2, "backoffSeconds": 1}))
    planned = attempts * len(TASKS)
    started = time.monotonic()
    next_kill = started + (kills.uniform(KILL_MIN_S, KILL_MAX_S) if kills else float("inf"))
    made: list[str] = []
    deadline = started + TRIAL_S * max(planned / 100, 1)
    progress: list[tuple[float, int]] = []  # (seconds since creation, trials settled)
    while time.monotonic() < deadline:
        found = [t for t in await list_trials(kube, namespace) if t["spec"].get("sweepName") == name]
        done = sum(settled(t) for t in found)
        progress.append((time.monotonic() - started, done))
        if len(found) == planned and done == planned:
            return found, _middle_rate(progress, planned), made
        if kills and time.monotonic() >= next_kill:
            leader = await lease_holder(kube, namespace)
            if leader in replicas and replicas[leader].proc is not None and replicas[leader].proc.poll() is None:
                replicas[leader].kill()
                died = time.monotonic()
                handed = None
                while handed is None and time.monotonic() - died < 60:
                    if await lease_holder(kube, namespace) not in (None, leader):
                        handed = time.monotonic() - died
                    else:
                        await asyncio.sleep(0.2)
                made.append(f"{leader} @{died - started:.0f}s ({done}/{planned} settled), "
                            + (f"Lease handed over after {handed:.1f}s" if handed is not None else "no takeover in 60s"))
                replicas[leader].start()  # back as a standby
            next_kill = time.monotonic() + kills.uniform(KILL_MIN_S, KILL_MAX_S)
        await asyncio.sleep(2)
    raise AssertionError(f"sweep {name}: not every trial settled within {deadline - started:.0f}s")


def _middle_rate(progress: list[tuple[float, int]], planned: int) -> float:
    """Trials settled per minute between the polls where 10 % and 90 % of them had settled."""
    low = next(p for p in progress if p[1] >= planned * 0.1)
    high = next(p for p in progress if p[1] >= planned * 0.9)
    return 60 * (high[1] - low[1]) / (high[0] - low[0]) if high[0] > low[0] else float("nan")


async def committed(cluster_relay, store: Path, name: str, trials: list[dict]) -> dict[str, int]:  # type: ignore[no-untyped-def, type-arg]
    """What each trial left behind, counted: bundles, receipts, tenants and their archiving."""
    counted = tally(trials)
    bundles = [store / name / n for n in counted.names]
    conn = await asyncpg.connect(cluster_relay.target.pg_dsn)
    try:
        tenants = await conn.fetchval("SELECT count(*) FROM benchmark.trial_manifest WHERE run_id = $1", name)
        unarchived = await conn.fetchval("SELECT count(*) FROM benchmark.trial_manifest WHERE run_id = $1 "
                                         "AND archived_at IS NULL", name)
    finally:
        await conn.close()
    return {
        "trials": len(counted.names),
        "distinct": len(set(counted.names)),
        "terminal": counted.terminal,
        "scored 1.0": counted.scored,
        "tries": sum(counted.tries.values()),
        "bundles": sum((path / "result.json").is_file() for path in bundles),
        "receipts": sum((path / "agent" / "receipts.jsonl").is_file() or any(path.rglob("receipts.jsonl"))
                        for path in bundles),
        "tenants": tenants,
        "unarchived": unarchived,
    }


async def leftovers(kube: Kube, namespace: str) -> dict[str, int]:
    pods = await kube.core.list_namespaced_pod(namespace, label_selector=labels.TRIAL)
    warm = await kube.core.list_namespaced_pod(namespace, label_selector=f"{labels.WARM}=true")
    secrets = await kube.core.list_namespaced_secret(namespace, label_selector=labels.TRIAL)
    return {"pods": len(pods.items), "warm pods": len(warm.items), "secrets": len(secrets.items)}


async def test_a_thousand_trials_with_the_leader_killed_at_random(  # type: ignore[no-untyped-def]
    kube: Kube, namespace, crds, sweep_secrets, cluster_relay, make_sweep, tmp_path: Path
) -> None:
    store = tmp_path / "store"
    pods = TrialPodWatch(kube, namespace)
    replicas = {name: replica(name, namespace, tmp_path) for name in ("replica-a", "replica-b")}
    print(f"\nsoak: {TRIALS} trials over {len(TASKS)} tasks ({', '.join(TASKS)}), baseline {BASELINE}, "
          f"parallelism {PARALLELISM}, kills every {KILL_MIN_S:.0f}-{KILL_MAX_S:.0f}s, seed {SEED}", flush=True)
    pods.start()
    try:
        for process in replicas.values():
            process.start()
        await wait_for(lambda: lease_holder(kube, namespace), 60, "a replica to lead", poll=0.2)
        began = time.monotonic()
        calm, calm_rate, _ = await run_sweep(kube, namespace, make_sweep, store, "calm", BASELINE, replicas, None)
        print(f"soak: baseline {len(calm)} trials in {time.monotonic() - began:.0f}s, no kills", flush=True)
        began = time.monotonic()
        soak, soak_rate, kills = await run_sweep(kube, namespace, make_sweep, store, "soak", TRIALS, replicas,
                                                 random.Random(SEED))
        print(f"soak: {len(soak)} trials in {time.monotonic() - began:.0f}s, leader killed {len(kills)}x", flush=True)
        await asyncio.sleep(2 * JANITOR_S)
        left = await leftovers(kube, namespace)
    finally:
        await pods.stop()
        codes = {name: process.stop() for name, process in replicas.items()}
    figures = {name: await committed(cluster_relay, store, name, trials)
               for name, trials in (("calm", calm), ("soak", soak))}
    rate = {"calm": calm_rate, "soak": soak_rate}
    for name, counted in figures.items():
        print(f"soak: {name}: " + ", ".join(f"{k} {v}" for k, v in counted.items())
              + f"; {rate[name]:.1f} trials/min from 10 % to 90 % settled")
    print(f"soak: kills: {'; '.join(kills)}")
    print(f"soak: after {2 * JANITOR_S:.0f}s: " + ", ".join(f"{k} {v}" for k, v in left.items())
          + f"; duplicate pods {pods.duplicates}; replica exit codes {codes}")
    assert all(code == 0 for code in codes.values()), codes
    for counted in figures.values():
        assert counted["distinct"] == counted["trials"] == counted["terminal"], counted
        assert counted["bundles"] == counted["trials"] == counted["receipts"], counted
        assert counted["tenants"] == counted["tries"] and counted["unarchived"] == 0, counted
    assert pods.duplicates == 0, pods.twice()
    assert left == {"pods": 0, "warm pods": 0, "secrets": 0}, left
    assert kills, "no kill was made: the soak sweep ended before the first"
    assert all("handed over" in kill for kill in kills), kills
