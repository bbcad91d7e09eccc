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
import time
from pathlib import Path

import asyncpg
from buzz_operator.api.common import GROUP, VERSION
from buzz_operator.kube.client import Kube

from .conftest import OperatorProcess, TrialPodWatch, list_trials, settled, tally, wait_for

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


async def test_operator_sigkilled_five_times(  # type: ignore[no-untyped-def]
    kube: Kube, namespace, crds, sweep_secrets, cluster_relay, make_sweep, tmp_path: Path
) -> None:
    store = tmp_path / "store"
    pods = TrialPodWatch(kube, namespace)

    operator = OperatorProcess(namespace, tmp_path)
    pods.start()
    killed_at: list[str] = []
    started = time.monotonic()
    try:
        operator.start()
        await kube.custom.create_namespaced_custom_object(GROUP, VERSION, namespace, "buzzsweeps", make_sweep(
            "killed", store_url=f"file://{store}", tasks=TASKS, attempts=ATTEMPTS, parallelism=4,
            cpuRequestFraction=0.1, retry={"maxRetries": 2, "backoffSeconds": 1}))
        for what, reached in KILL_POINTS:
            async def at_point(reached=reached) -> bool:  # type: ignore[no-untyped-def]
                return reached(await list_trials(kube, namespace), set(pods.seen))
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
        await pods.stop()
        code = operator.stop()
    elapsed = time.monotonic() - started

    counted = tally(trials)
    names, terminal, scored, tries = counted.names, counted.terminal, counted.scored, counted.tries
    duplicate_pods = pods.duplicates
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
    assert code == 0, operator.log_path.read_text()[-3000:]
    assert len(killed_at) == 5
    assert sorted(names) == sorted(set(names)) and len(names) == ATTEMPTS * len(TASKS)
    assert terminal == len(names)
    assert duplicate_pods == 0, pods.twice()
    assert duplicate_tenants == 0 and channels == len(rows) and unarchived == 0
    assert missing == []
    assert set(task_posts.values()) <= {1}, task_posts
