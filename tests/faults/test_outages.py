"""The relay, Postgres and the object store each unavailable for 30 s in the middle of a sweep,
one after the other. They are this test's own instances — a dev relay on a private Postgres
(hack/postgres.sh under a private BUZZ_RUN and port) and a private S3 server (hack/s3.sh
likewise) — so the shared services other sessions use are never touched:

- relay: its pod deleted, re-created 30 s later (its state lives in Postgres);
- Postgres: `pg_ctl stop -m fast`, started again 30 s later (data kept on disk);
- object store: the S3 server (versitygw, hack/s3.sh) stopped, started again 30 s later; its
  objects are on disk, so every bundle committed before the stop must still be there after.

No trial may be scored 0 because of an outage, and every trial's bundle must be in the store
afterwards with all its files.

Prints: outages: <scored>/<n> scored 1.0, <zero> scored 0, <failed> failed (<reasons>), bundles <b>/<n>.
"""

from __future__ import annotations

import asyncio
import subprocess
import time
from collections import defaultdict
from pathlib import Path

import asyncpg
from buzz_operator.api.common import GROUP, VERSION
from buzz_operator.dev import deploy_relay
from buzz_operator.kube import objects
from buzz_operator.kube.client import Kube
from buzz_operator.relay.nostr import Keypair
from buzz_operator.relay.tenant import await_healthy
from buzz_operator.relay.tenant_models import RelayTarget
from buzz_operator.storage import open_store
from buzz_operator.storage.s3_admin import ensure_bucket
from kopf.testing import KopfRunner

from tests.support.cluster import create_registry_login

from .conftest import (
    RELAY_URL,
    PrivateService,
    host_ip,
    list_trials,
    operator_args,
    settled,
    wait_for,
    with_database,
)

OUTAGE_S = 30.0
TASKS = ["hello-file", "user-mention", "reply-to-thread"]
ATTEMPTS = 4
REQUIRED = ("config.json", "result.json", "agent/buzz/receipts.jsonl")


def _pg_bin() -> str:
    found = sorted(Path("/usr/lib/postgresql").glob("*/bin"), key=lambda p: [int(x) for x in p.parent.name.split(".")
                                                                               if x.isdigit()])
    return str(found[-1])


async def test_relay_postgres_and_store_outages(  # type: ignore[no-untyped-def]
    kube: Kube, namespace, crds, make_sweep, private_postgres: PrivateService, private_s3: PrivateService,
    local_registry: str, tmp_path: Path,
) -> None:
    # --- the private relay on the private Postgres
    admin_dsn = private_postgres.hack("dsn")
    conn = await asyncpg.connect(admin_dsn)
    await conn.execute('CREATE DATABASE "relay"')
    await conn.close()
    dsn = with_database(admin_dsn, "relay")
    owner, relay_key = Keypair.generate(), Keypair.generate()
    relay_args = dict(name="relay", relay_url=RELAY_URL, owner_pubkey=owner.pubkey_hex,
                      relay_secret_hex=relay_key.secret_hex, database_url=with_database(admin_dsn, "relay",
                                                                                        host=host_ip()))
    relay = await deploy_relay.deploy(kube, namespace, **relay_args)  # type: ignore[arg-type]
    target = RelayTarget(url=RELAY_URL, owner_secret_hex=owner.secret_hex, pg_dsn=dsn,
                         connect_url=f"ws://{relay.target}")
    await await_healthy(target, timeout_s=60)
    # --- the private S3 server and the sweep's Secrets
    s3 = dict(line.split("=", 1) for line in private_s3.hack("env").splitlines() if "=" in line)
    bucket = "outages"
    ensure_bucket(s3["BUZZ_S3_ENDPOINT"], bucket, access_key=s3["BUZZ_S3_ACCESS_KEY"],
                  secret_key=s3["BUZZ_S3_SECRET_KEY"], region=s3["BUZZ_S3_REGION"])
    url = f"s3://{bucket}/runs"
    for name, data in {
        "relay-owner": {"owner-key": owner.secret_hex, "postgres-dsn": dsn},
        "api-keys": {"STANDIN_API_KEY": "standin-outages"},
        "s3-creds": {"AWS_ACCESS_KEY_ID": s3["BUZZ_S3_ACCESS_KEY"], "AWS_SECRET_ACCESS_KEY": s3["BUZZ_S3_SECRET_KEY"],
                     "AWS_REGION": s3["BUZZ_S3_REGION"]},
    }.items():
        await objects.create_secret(kube, namespace, objects.secret_body(name, data, labels={}, owner=None))
    await create_registry_login(kube, namespace, local_registry)
    body = make_sweep("outages", store_url=url, tasks=TASKS, attempts=ATTEMPTS, parallelism=3,
                      cpuRequestFraction=0.1, retry={"maxRetries": 5, "backoffSeconds": 5},
                      storage={"url": url, "endpoint": s3["BUZZ_S3_ENDPOINT"],
                               "credentialsSecretRef": {"name": "s3-creds"}})

    async def relay_outage() -> None:
        await objects.delete_pod(kube, namespace, "relay", grace_seconds=0)
        await objects.wait_pod_gone(kube, namespace, "relay", timeout_s=60)
        await asyncio.sleep(OUTAGE_S)
        await deploy_relay.deploy(kube, namespace, **relay_args)  # type: ignore[arg-type]

    async def postgres_outage() -> None:
        data = private_postgres.run / "postgres" / "data"
        await asyncio.to_thread(subprocess.run, ["runuser", "-u", "postgres", "--", f"{_pg_bin()}/pg_ctl", "-D",
                                                 str(data), "-m", "fast", "-w", "stop"], check=True, capture_output=True)
        await asyncio.sleep(OUTAGE_S)
        await asyncio.to_thread(private_postgres.hack, "up")

    committed_before: list[str] = []

    async def store_outage() -> None:
        committed_before[:] = [key for key in await open_store(
            url, endpoint=s3["BUZZ_S3_ENDPOINT"], access_key=s3["BUZZ_S3_ACCESS_KEY"],
            secret_key=s3["BUZZ_S3_SECRET_KEY"], region=s3["BUZZ_S3_REGION"]).list("outages")
            if key.endswith("/result.json")]
        await asyncio.to_thread(private_s3.hack, "down")
        try:
            await asyncio.sleep(OUTAGE_S)
        finally:
            await asyncio.to_thread(private_s3.hack, "up")

    active_at: dict[str, int] = {}
    hit: dict[str, set[str]] = defaultdict(set)  # outage -> trial phases and retry reasons seen during it
    current: list[str] = []

    async def observe() -> None:
        while True:
            for trial in await list_trials(kube, namespace):
                status = trial.get("status") or {}
                if current and not settled(trial):
                    hit[current[0]].add(str(status.get("phase")))
                    for condition in status.get("conditions", []):
                        if condition["type"] == "Retrying" and condition["status"] == "True":
                            hit[current[0]].add(f"retry:{condition['reason']}")
            await asyncio.sleep(1)

    observer = asyncio.create_task(observe())
    started = time.monotonic()
    with KopfRunner(operator_args(namespace), timeout=60) as runner:
        await kube.custom.create_namespaced_custom_object(GROUP, VERSION, namespace, "buzzsweeps", body)

        async def some_running() -> bool:
            return any((t.get("status") or {}).get("phase") == "Running" for t in await list_trials(kube, namespace))

        await wait_for(some_running, 300, "a trial Running", poll=0.5)
        for what, outage in (("relay", relay_outage), ("postgres", postgres_outage), ("store", store_outage)):
            active_at[what] = sum(not settled(t) for t in await list_trials(kube, namespace))
            current[:] = [what]
            await outage()
            await asyncio.sleep(5)
            current.clear()

        async def all_settled() -> list[dict] | None:  # type: ignore[type-arg]
            found = await list_trials(kube, namespace)
            return found if len(found) == len(TASKS) * ATTEMPTS and all(settled(t) for t in found) else None

        trials = await wait_for(all_settled, 600, "every trial settled", poll=2)
        observer.cancel()
    assert runner.exception is None, runner.output[-3000:]
    elapsed = time.monotonic() - started

    store = open_store(url, endpoint=s3["BUZZ_S3_ENDPOINT"], access_key=s3["BUZZ_S3_ACCESS_KEY"],
                       secret_key=s3["BUZZ_S3_SECRET_KEY"], region=s3["BUZZ_S3_REGION"])
    keys = await store.list("outages")
    # a restart loses nothing that was committed before it
    assert set(committed_before) <= set(keys), sorted(set(committed_before) - set(keys))
    per_trial: dict[str, list[str]] = defaultdict(list)
    for key in keys:
        parts = key.split("/", 2)
        if len(parts) == 3:
            per_trial[parts[1]].append(parts[2])
    statuses = {t["metadata"]["name"]: t["status"] for t in trials}
    scored = [n for n, s in statuses.items() if s.get("reward") == 1.0]
    zero = [n for n, s in statuses.items() if s.get("reward") == 0]
    failed = {n: f"{s.get('failureClass')}/{s.get('reason')}" for n, s in statuses.items() if s["phase"] == "Failed"}
    committed = [n for n in statuses if "result.json" in per_trial.get(n, [])]
    incomplete = {n: [f for f in REQUIRED if f not in per_trial.get(n, [])] for n in statuses}
    incomplete = {n: missing for n, missing in incomplete.items() if missing}
    counts = {n: len([f for f in files if not f.startswith("retries/")]) for n, files in per_trial.items()}
    retried = sum(s.get("retries", 0) for s in statuses.values())
    kept_attempts = sum(1 for files in per_trial.values() for f in files
                        if f.startswith("retries/") and f.endswith("/result.json"))
    print(f"\noutages of {OUTAGE_S:.0f}s (relay, postgres, store; active trials at each {active_at}), {elapsed:.0f}s: "
          f"{len(scored)}/{len(statuses)} scored 1.0, {len(zero)} scored 0, {len(failed)} failed {failed}, "
          f"bundles {len(committed)}/{len(statuses)} committed, {len(incomplete)} missing files, "
          f"files per bundle {min(counts.values(), default=0)}-{max(counts.values(), default=0)}, "
          f"{retried} infra retries with {kept_attempts} failed tries' evidence kept; during each outage "
          f"{ {k: sorted(v) for k, v in hit.items()} }")
    assert all(count > 0 for count in active_at.values()), active_at
    if zero:  # say why each was scored 0: its task, its status and what its verifier printed
        why = {}
        for n in zero:
            stdout = await store.get(f"outages/{n}/verifier/test-stdout.txt") if \
                "verifier/test-stdout.txt" in per_trial.get(n, []) else b""
            why[n] = {k: statuses[n].get(k) for k in ("task", "outcome", "reason", "message", "retries", "stepRetries")}
            why[n]["verifier"] = stdout.decode(errors="replace")[-1500:]
        raise AssertionError(f"scored 0 during outages: {why}")
    assert all(s["phase"] in ("Succeeded", "Failed") for s in statuses.values())
    assert all(reason.startswith("infra/") for reason in failed.values()), failed
    # retries back off 5, 10, 20, 40, 80 s: a 30 s outage must not exhaust them
    assert failed == {}, failed
    assert sorted(committed) == sorted(statuses), sorted(set(statuses) - set(committed))
    assert incomplete == {}, incomplete
