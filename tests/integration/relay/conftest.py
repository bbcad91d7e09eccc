"""Fixtures for relay integration tests: a fresh Postgres database per test module (so tests do
not see each other's rows), a real development relay on an ephemeral port, and an owner key."""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from urllib.parse import urlsplit, urlunsplit

import asyncpg
import pytest
from buzz_operator.condition.seats import Seat
from buzz_operator.dev.relay import RelayConfig, serve
from buzz_operator.relay.nostr import Keypair
from buzz_operator.relay.tenant_models import DirectoryEntry, RelayTarget, TenantRequest

from tests.support.ports import free_port


def dsn_for_database(dsn: str, database: str) -> str:
    parts = urlsplit(dsn)
    return urlunsplit((parts.scheme, parts.netloc, f"/{database}", parts.query, parts.fragment))


@pytest.fixture(scope="module")
def module_db(pg_dsn: str) -> str:
    """Name of a database created for this module (dropped after it)."""
    return f"relay_{secrets.token_hex(6)}"


@pytest.fixture
async def db_dsn(pg_dsn: str, module_db: str) -> AsyncIterator[str]:
    # created lazily by the first test of the module; the cleanup below drops it at the end
    admin = await asyncpg.connect(pg_dsn)
    try:
        if not await admin.fetchval("SELECT 1 FROM pg_database WHERE datname = $1", module_db):
            await admin.execute(f'CREATE DATABASE "{module_db}"')
    finally:
        await admin.close()
    yield dsn_for_database(pg_dsn, module_db)


@pytest.fixture(scope="module", autouse=True)
def _drop_module_db(pg_dsn: str, module_db: str) -> Iterator[None]:
    yield

    async def drop() -> None:
        admin = await asyncpg.connect(pg_dsn)
        try:
            await admin.execute(f'DROP DATABASE IF EXISTS "{module_db}" WITH (FORCE)')
        finally:
            await admin.close()

    asyncio.run(drop())


@dataclass(frozen=True)
class RunningRelay:
    port: int
    dial_url: str        # ws://127.0.0.1:<port>
    relay_url: str       # canonical RELAY_URL, ws://localhost:<port>
    host: str            # canonical authority to present
    owner: Keypair
    relay_key: Keypair
    dsn: str


@pytest.fixture
async def relay(db_dsn: str) -> AsyncIterator[RunningRelay]:
    owner, relay_key = Keypair.generate(), Keypair.generate()
    # the canonical URL carries the real port, so the port is chosen first and
    # the tenant authority is fixed up after: RELAY_URL is `ws://localhost:<port>` as in docs/relay-protocol.md#relay-settings
    port = free_port()
    config = RelayConfig(
        relay_url=f"ws://localhost:{port}",
        owner_pubkey=owner.pubkey_hex,
        relay_secret_hex=relay_key.secret_hex,
        database_url=db_dsn,
        bind_host="127.0.0.1",
        bind_port=port,
        ttl_sweep_seconds=0.2,
    )
    async with serve(config) as bound:
        yield RunningRelay(
            port=bound,
            dial_url=f"ws://127.0.0.1:{bound}",
            relay_url=f"ws://localhost:{bound}",
            host=f"localhost:{bound}",
            owner=owner,
            relay_key=relay_key,
            dsn=db_dsn,
        )


# -- builders shared by the tenant/evidence tests (fixtures, since importlib mode has no test package)


def seats(workers: int = 1) -> list[Seat]:
    out = [Seat("lead-1", "lead", "orchestrator", "lead", "ep-a", "rev-a", "buzz-agent", True, 1)]
    out += [
        Seat(f"worker-{i}", "worker", "worker", "implementer", "ep-b", "rev-b", "buzz-agent", True, i)
        for i in range(1, workers + 1)
    ]
    return out


def directory_entries() -> list[DirectoryEntry]:
    """The create-channel fixture's 60 identities (docs/tenant.md#directory)."""
    users = [DirectoryEntry(f"benchmark-user-{i:02d}", "user") for i in range(1, 51)]
    bots = [DirectoryEntry(f"benchmark-bot-{i:02d}", "bot") for i in range(1, 11)]
    return users + bots


def request(**overrides: object) -> TenantRequest:
    fields: dict[str, object] = {
        "run_id": f"run-{secrets.token_hex(4)}",
        "trial_id": f"trial-{secrets.token_hex(8)}",
        "manifest_sha256": secrets.token_hex(32),
        "seats": seats(),
        "channel_label": "reply-to-thread",
        "task_name": "reply-to-thread",
        "user_display_name": None,
        "directory": (),
    }
    fields.update(overrides)
    return TenantRequest(**fields)  # type: ignore[arg-type]




@pytest.fixture
def target(relay: RunningRelay) -> RelayTarget:
    """Dial 127.0.0.1 while presenting the canonical `localhost:<port>` Host, as a pod does."""
    return RelayTarget(
        url=relay.relay_url, owner_secret_hex=relay.owner.secret_hex, pg_dsn=relay.dsn, connect_url=relay.dial_url
    )


@pytest.fixture
def make_request() -> object:
    return request


@pytest.fixture
def make_seats() -> object:
    return seats


@pytest.fixture
def directory60() -> list[DirectoryEntry]:
    return directory_entries()
