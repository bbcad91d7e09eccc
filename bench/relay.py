"""Relay benchmark: tenant provisioning, evidence export and DONE detection against the in-process
development relay on real Postgres. Prints p50/p95 per figure with its target and PASS/MISS.

P3 compares provisioning with the seed's way of doing the same relay work (reference
docs/tenant.md#provisioning, docs/tenant.md#directory, docs/relay-protocol.md#cli): one CLI process per relay call — `channels create`, one
`channels add-member` per seat, `users set-profile` as the user and as each seat, and one
`users get` over the 60 directory pubkeys — run here as `python -m buzz_operator.dev.agent.cli`
(the stand-in `buzz` CLI). The baseline leaves out the seed's psycopg connect, advisory lock and
INSERT, which the operator's figure includes, so the ratio errs in the seed's favour.

The relay runs as its own process (`python -m buzz_operator.dev.relay`), as it does in the
cluster, so the relay's own work does not run on the measured client's event loop.

    .venv/bin/python bench/relay.py        # DSN from BUZZ_PG_DSN or `bash hack/postgres.sh dsn`
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import secrets
import statistics
import subprocess
import sys
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import asyncpg
from buzz_operator.condition.seats import Seat
from buzz_operator.dev.relay import RelayConfig
from buzz_operator.relay.client import RelayClient
from buzz_operator.relay.evidence import export_evidence
from buzz_operator.relay.identities import stable_keypair
from buzz_operator.relay.messages import wait_for_done
from buzz_operator.relay.nostr import Keypair
from buzz_operator.relay.tenant import _plan, healthcheck, provision
from buzz_operator.relay.tenant_models import DirectoryEntry, ProvisioningError, RelayTarget, TenantRequest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
from figures import HIGHER, INFO, LOWER, Figure, percentile, record  # noqa: E402

from tests.support.ports import free_port  # noqa: E402

RUNS = 7
PROVISION_RUNS = 15
BASELINE_RUNS = 5


def _dsn() -> str:
    if dsn := os.environ.get("BUZZ_PG_DSN"):
        return dsn
    return subprocess.run(["bash", str(ROOT / "hack" / "postgres.sh"), "dsn"], check=True,
                          capture_output=True, text=True).stdout.strip()


def _with_db(dsn: str, database: str) -> str:
    p = urlsplit(dsn)
    return urlunsplit((p.scheme, p.netloc, f"/{database}", p.query, p.fragment))


SEATS = [Seat("lead-1", "lead", "orchestrator", "lead", "ep", "rev", "buzz-agent", True, 1)] + [
    Seat(f"worker-{i}", "worker", "worker", "worker", "ep", "rev", "buzz-agent", True, i) for i in range(1, 4)
]
DIRECTORY = [DirectoryEntry(f"benchmark-user-{i:02d}", "user") for i in range(1, 51)] + [
    DirectoryEntry(f"benchmark-bot-{i:02d}", "bot") for i in range(1, 11)
]


def _request(run_id: str) -> TenantRequest:
    return TenantRequest(run_id=run_id, trial_id=str(uuid.uuid4()), manifest_sha256=secrets.token_hex(32),
                         seats=SEATS, channel_label="bench", task_name="create-channel-invite-users",
                         directory=DIRECTORY)


def _report(name: str, samples_ms: list[float], target_ms: float, note: str = "") -> bool:
    p95 = percentile(samples_ms, 95)
    figure = record(Figure(name, "ms", samples_ms, LOWER, target_ms, note=f"p95 {p95:.1f} ms" + (f"; {note}" if note else "")))
    return bool(figure.passed)


def _cli(relay_url: str, secret_hex: str, auth_tag: str, *args: str) -> object:
    """One seed-style relay call: a fresh CLI process, JSON on stdout (docs/relay-protocol.md#cli)."""
    env = {"PATH": os.environ.get("PATH", ""), "BUZZ_RELAY_URL": relay_url, "BUZZ_PRIVATE_KEY": secret_hex,
           "BUZZ_AUTH_TAG": auth_tag, "PYTHONPATH": str(ROOT / "operator")}
    done = subprocess.run([sys.executable, "-m", "buzz_operator.dev.agent.cli", *args], env=env,
                          capture_output=True, text=True, timeout=30)
    if done.returncode != 0:
        raise RuntimeError(f"buzz {' '.join(args[:2])} exited {done.returncode}: {done.stderr.strip()[:300]}")
    return json.loads(done.stdout) if done.stdout.strip() else None


def seed_way(target: RelayTarget, relay_url: str, run_id: str) -> int:
    """The seed provisioner's relay work for one trial, one CLI process per call; the call count."""
    req = _request(run_id)
    handle, tenant_secrets = _plan(target, req)
    user = (relay_url, tenant_secrets.user_secret_hex, tenant_secrets.user_auth_tag)
    created = _cli(*user, "channels", "create", "--name", handle.channel_name, "--type", "stream",
                   "--visibility", "private", "--description", f"run={run_id} trial={req.trial_id}")
    assert isinstance(created, dict) and created.get("channel_id"), created
    calls = 1
    for seat in handle.seats:
        _cli(*user, "channels", "add-member", "--channel", created["channel_id"], "--pubkey", seat.pubkey,
             "--role", "member")
        calls += 1
    _cli(*user, "users", "set-profile", "--name", handle.user.name)
    calls += 1
    for seat in handle.seats:
        secret = tenant_secrets.seats[seat.seat_id]
        _cli(relay_url, secret.secret_hex, secret.auth_tag, "users", "set-profile", "--name", seat.seat_id)
        calls += 1
    pubkeys = [p for entry in DIRECTORY for p in ("--pubkey", stable_keypair(target.owner_secret_hex, entry.name).pubkey_hex)]
    profiles = _cli(*user, "users", "get", *pubkeys)
    assert isinstance(profiles, list) and len(profiles) == len(DIRECTORY), "directory not seeded"
    return calls + 1


@contextlib.asynccontextmanager
async def relay_process(config: RelayConfig, target: RelayTarget) -> AsyncIterator[None]:
    """The dev relay in its own process, ready (readiness 200 and Postgres up) when entered."""
    env = {**os.environ, "RELAY_URL": config.relay_url, "RELAY_OWNER_PUBKEY": config.owner_pubkey,
           "BUZZ_RELAY_PRIVATE_KEY": config.relay_secret_hex, "DATABASE_URL": config.database_url,
           "BUZZ_BIND": f"{config.bind_host}:{config.bind_port}", "PYTHONPATH": str(ROOT / "operator")}
    process = await asyncio.create_subprocess_exec(sys.executable, "-m", "buzz_operator.dev.relay", env=env,
                                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(100):
            try:
                await healthcheck(target)
                break
            except ProvisioningError:
                if process.returncode is not None:
                    raise RuntimeError(f"dev relay exited {process.returncode}") from None
                await asyncio.sleep(0.1)
        await healthcheck(target)
        yield
    finally:
        if process.returncode is None:
            process.terminate()
            await process.wait()


async def _timed(fn: Callable[[], Awaitable[object]], runs: int) -> list[float]:
    out = []
    for _ in range(runs):
        start = time.perf_counter()
        await fn()
        out.append((time.perf_counter() - start) * 1000)
    return out


async def main() -> int:
    admin_dsn = _dsn()
    database = f"bench_relay_{secrets.token_hex(4)}"
    admin = await asyncpg.connect(admin_dsn)
    await admin.execute(f'CREATE DATABASE "{database}"')
    dsn = _with_db(admin_dsn, database)
    owner, relay_key = Keypair.generate(), Keypair.generate()
    port = free_port()
    config = RelayConfig(f"ws://localhost:{port}", owner.pubkey_hex, relay_key.secret_hex, dsn, "127.0.0.1", port)
    target = RelayTarget(url=config.relay_url, owner_secret_hex=owner.secret_hex, pg_dsn=dsn,
                         connect_url=f"ws://127.0.0.1:{port}")
    ok = True
    try:
        async with relay_process(config, target):
            run_id = f"bench-{secrets.token_hex(3)}"
            # the first trial seeds the 60 directory profiles; it is reported on its own
            first = await _timed(lambda: provision(target, _request(run_id)), 1)
            record(Figure("P3 provision, first trial (seeds 60 profiles)", "ms", first, INFO))
            ours = await _timed(lambda: provision(target, _request(run_id)), PROVISION_RUNS)
            ok &= _report("P3 provision (4 seats + channel + 60 directory)", ours, 300)
            baseline, calls = [], 0
            for _ in range(BASELINE_RUNS):
                start = time.perf_counter()
                # the seed's CLI is synchronous; run it off the loop so the in-process relay serves it
                calls = await asyncio.to_thread(seed_way, target, config.relay_url, run_id)
                baseline.append((time.perf_counter() - start) * 1000)
            record(Figure("P3 seed way: one CLI process per relay call", "ms", baseline, INFO,
                          note=f"{calls} processes per trial; p95 {percentile(baseline, 95):.0f} ms"))
            ratio = record(Figure("P3 speed-up over the seed way", "x",
                                  sorted(b / statistics.median(ours) for b in baseline), HIGHER, 20))
            ok &= bool(ratio.passed)

            handle, tenant_secrets = await provision(target, _request(run_id))
            user_client = RelayClient(target.dial_url, Keypair.from_secret(tenant_secrets.user_secret_hex),
                                      tenant_secrets.user_auth_tag, host=target.authority)
            async with user_client as user:
                base = int(time.time()) - 5000
                events = [user.sign(9, f"message {i}", [["h", handle.channel_id]], created_at=base + i)
                          for i in range(1000)]
                for start in range(0, len(events), 100):
                    await asyncio.gather(*(user.publish(e) for e in events[start : start + 100]))
            ok &= _report("P4 evidence export (1,000 messages)", await _timed(
                lambda: export_evidence(target, handle, tenant_secrets, task_event_id=None,
                                        completion_message_id=None), RUNS), 200)

            lead = tenant_secrets.seats[handle.orchestrator.seat_id]
            latencies = []
            user_client = RelayClient(target.dial_url, Keypair.from_secret(tenant_secrets.user_secret_hex),
                                      tenant_secrets.user_auth_tag, host=target.authority)
            async with user_client as user, RelayClient(
                target.dial_url, Keypair.from_secret(lead.secret_hex), lead.auth_tag, host=target.authority
            ) as orch:
                first_second = int(time.time()) + 1
                for i in range(max(RUNS, 20)):
                    # each round gets its own second so an earlier round's DONE cannot match
                    since = first_second + i
                    waiter = asyncio.create_task(wait_for_done(user, handle.channel_id, orch.keypair.pubkey_hex,
                                                               since))
                    await asyncio.sleep(0.05)  # let the subscription reach EOSE before DONE lands
                    done = orch.sign(9, f"DONE: {i}", [["h", handle.channel_id]], created_at=since)
                    start = time.perf_counter()
                    await orch.publish(done)
                    got = await asyncio.wait_for(waiter, 10)
                    latencies.append((time.perf_counter() - start) * 1000)
                    assert got["id"] == done["id"], "wait_for_done returned a different event"
            ok &= _report("P4 DONE: detection (live subscription)", latencies, 100)
    finally:
        await admin.execute(f'DROP DATABASE IF EXISTS "{database}" WITH (FORCE)')
        await admin.close()
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
