"""Relay benchmark: tenant provisioning, evidence export and DONE detection against the in-process
development relay on real Postgres. Prints p50/p95 per figure with its target and PASS/MISS.

    .venv/bin/python bench/relay.py        # DSN from BUZZ_PG_DSN or `bash hack/postgres.sh dsn`
"""

from __future__ import annotations

import asyncio
import os
import secrets
import socket
import statistics
import subprocess
import sys
import time
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import asyncpg
from buzz_operator.condition.seats import Seat
from buzz_operator.dev.relay import RelayConfig, serve
from buzz_operator.relay.client import RelayClient
from buzz_operator.relay.evidence import export_evidence
from buzz_operator.relay.messages import wait_for_done
from buzz_operator.relay.nostr import Keypair
from buzz_operator.relay.tenant import provision
from buzz_operator.relay.tenant_models import DirectoryEntry, RelayTarget, TenantRequest

ROOT = Path(__file__).resolve().parents[1]
RUNS = 7


def _dsn() -> str:
    if dsn := os.environ.get("BUZZ_PG_DSN"):
        return dsn
    return subprocess.run(["bash", str(ROOT / "hack" / "postgres.sh"), "dsn"], check=True,
                          capture_output=True, text=True).stdout.strip()


def _with_db(dsn: str, database: str) -> str:
    p = urlsplit(dsn)
    return urlunsplit((p.scheme, p.netloc, f"/{database}", p.query, p.fragment))


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


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


def _report(name: str, samples_ms: list[float], target_ms: float) -> bool:
    p50 = statistics.median(samples_ms)
    p95 = statistics.quantiles(samples_ms, n=20, method="inclusive")[-1] if len(samples_ms) > 1 else p50
    verdict = "PASS" if p50 <= target_ms else "MISS"
    print(f"{name:<34} p50={p50:8.1f} ms  p95={p95:8.1f} ms  n={len(samples_ms):<3} "
          f"target p50 <= {target_ms:.0f} ms  {verdict}")
    return p50 <= target_ms


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
    port = _free_port()
    config = RelayConfig(f"ws://localhost:{port}", owner.pubkey_hex, relay_key.secret_hex, dsn, "127.0.0.1", port)
    target = RelayTarget(url=config.relay_url, owner_secret_hex=owner.secret_hex, pg_dsn=dsn,
                         connect_url=f"ws://127.0.0.1:{port}")
    ok = True
    try:
        async with serve(config):
            run_id = f"bench-{secrets.token_hex(3)}"
            # the first trial seeds the 60 directory profiles; it is reported on its own
            first = await _timed(lambda: provision(target, _request(run_id)), 1)
            print(f"{'provision (first, seeds directory)':<34} {first[0]:8.1f} ms")
            ok &= _report("provision (4 seats + channel + 60)", await _timed(
                lambda: provision(target, _request(run_id)), RUNS), 300)

            handle, tenant_secrets = await provision(target, _request(run_id))
            user_client = RelayClient(target.dial_url, Keypair.from_secret(tenant_secrets.user_secret_hex),
                                      tenant_secrets.user_auth_tag, host=target.authority)
            async with user_client as user:
                base = int(time.time()) - 5000
                events = [user.sign(9, f"message {i}", [["h", handle.channel_id]], created_at=base + i)
                          for i in range(1000)]
                for start in range(0, len(events), 100):
                    await asyncio.gather(*(user.publish(e) for e in events[start : start + 100]))
            ok &= _report("evidence export (1000 messages)", await _timed(
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
            ok &= _report("DONE: detection (live subscription)", latencies, 100)
    finally:
        await admin.execute(f'DROP DATABASE IF EXISTS "{database}" WITH (FORCE)')
        await admin.close()
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
