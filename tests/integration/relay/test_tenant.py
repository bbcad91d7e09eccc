"""Tenant provisioning against the real dev relay and real Postgres (docs/tenant.md)."""

from __future__ import annotations

import asyncio
import json
from dataclasses import replace

import asyncpg
import pytest
from buzz_operator.relay.client import RelayClient
from buzz_operator.relay.nostr import Keypair, verify_auth_tag
from buzz_operator.relay.tenant import (
    _plan,
    _provision_on_relay,
    await_healthy,
    healthcheck,
    provision,
    teardown,
)
from buzz_operator.relay.tenant_models import ProvisioningError, TenantHandle

from tests.support.ports import free_port


async def _channels(dsn: str) -> list[asyncpg.Record]:
    conn = await asyncpg.connect(dsn)
    try:
        return await conn.fetch("SELECT id, name, visibility, channel_type, about FROM relay.channels")
    finally:
        await conn.close()


async def test_provision_is_idempotent_with_same_handle_and_secrets(target, make_request) -> None:
    req = make_request()
    handle, secrets = await provision(target, req)
    again, secrets_again = await provision(target, req)
    assert again == handle
    assert secrets_again.secret_strings() == secrets.secret_strings()
    assert TenantHandle.from_json(handle.to_json()) == handle
    assert [s.seat_id for s in handle.seats] == ["lead-1", "worker-1"]
    assert handle.channel_name == f"reply-to-thread-{req.trial_id[:8]}"
    # each seat's key and auth tag match its public pubkey and the relay owner
    owner_pk = Keypair.from_secret(target.owner_secret_hex).pubkey_hex
    for seat in handle.seats:
        secret = secrets.seats[seat.seat_id]
        assert Keypair.from_secret(secret.secret_hex).pubkey_hex == seat.pubkey
        assert verify_auth_tag(secret.auth_tag, seat.pubkey, owner_pk)
    assert handle.user.name == "user"


async def test_concurrent_provisioning_of_one_trial_creates_one_channel(target, make_request, relay) -> None:
    req = make_request(channel_label=None)
    before = len(await _channels(relay.dsn))
    results = await asyncio.gather(*(provision(target, req) for _ in range(5)))
    assert len({h.to_json() for h, _ in results}) == 1
    rows = await _channels(relay.dsn)
    assert len(rows) == before + 1
    handle = results[0][0]
    row = next(r for r in rows if r["id"] == handle.channel_id)
    assert row["name"] == f"trial-{req.trial_id[:8]}-{req.manifest_sha256[:8]}"
    assert (row["visibility"], row["channel_type"]) == ("private", "stream")
    assert row["about"] == f"run={req.run_id} trial={req.trial_id} manifest={req.manifest_sha256}"


async def test_different_manifest_hash_is_refused(target, make_request) -> None:
    req = make_request()
    await provision(target, req)
    other = make_request(run_id=req.run_id, trial_id=req.trial_id, manifest_sha256="f" * 64)
    with pytest.raises(ProvisioningError, match=r"already provisioned with manifest " + req.manifest_sha256):
        await provision(target, other)


async def test_members_profiles_and_owner_role(target, make_request, make_seats, relay) -> None:
    handle, secrets = await provision(target, make_request(seats=make_seats(2)))
    lead = secrets.seats["lead-1"]
    async with RelayClient(relay.dial_url, Keypair.from_secret(lead.secret_hex), lead.auth_tag, host=relay.host) as c:
        members = await c.query([{"kinds": [39002], "#d": [handle.channel_id]}])
        profiles = await c.query([{"kinds": [0], "authors": [handle.user.pubkey, *(s.pubkey for s in handle.seats)]}])
    roles = {t[1]: t[3] for t in members[-1]["tags"] if t[0] == "p"}
    assert roles == {handle.user.pubkey: "owner", **{s.pubkey: "member" for s in handle.seats}}
    names = {e["pubkey"]: json.loads(e["content"])["name"] for e in profiles}
    assert names == {handle.user.pubkey: "user", **{s.pubkey: s.seat_id for s in handle.seats}}


async def test_directory_is_stable_and_profiles_not_republished(target, make_request, directory60, relay) -> None:
    first, _ = await provision(target, make_request(directory=directory60))
    second, _ = await provision(target, make_request(directory=directory60))
    assert len(first.directory) == 60
    assert first.directory == second.directory
    conn = await asyncpg.connect(relay.dsn)
    try:
        count = await conn.fetchval(
            "SELECT count(*) FROM relay.events WHERE kind = 0 AND pubkey = ANY($1::text[])",
            [d.pubkey for d in first.directory],
        )
    finally:
        await conn.close()
    assert count == 60  # one profile each: the second trial published none


async def test_task_user_has_stable_display_name_identity(target, make_request) -> None:
    a, _ = await provision(target, make_request(task_name="user-mention", user_display_name="John Vincent Doe"))
    b, _ = await provision(target, make_request(task_name="user-mention", user_display_name="John Vincent Doe"))
    assert a.user.name == "John Vincent Doe"
    assert a.user.pubkey == b.user.pubkey
    assert a.seats[0].pubkey != b.seats[0].pubkey  # seats are fresh per trial


async def test_teardown_archives_and_keeps_events(target, make_request, relay) -> None:
    handle, secrets = await provision(target, make_request())
    user = Keypair.from_secret(secrets.user_secret_hex)
    async with RelayClient(relay.dial_url, user, secrets.user_auth_tag, host=relay.host) as c:
        ok, _ = await c.publish(c.sign(9, "hello", [["h", handle.channel_id]]))
        assert ok
    await teardown(target, handle, secrets)
    await teardown(target, handle, secrets)  # a second archive is tolerated ("already archived")
    async with RelayClient(relay.dial_url, user, secrets.user_auth_tag, host=relay.host) as c:
        messages = await c.query([{"kinds": [9], "#h": [handle.channel_id]}])
        meta = await c.query([{"kinds": [39000], "#d": [handle.channel_id]}])
        ok, message = await c.publish(c.sign(9, "late", [["h", handle.channel_id]]))
    assert [m["content"] for m in messages] == ["hello"]
    assert ["archived", "true"] in meta[-1]["tags"]
    assert not ok and message.startswith("restricted:")
    conn = await asyncpg.connect(relay.dsn)
    try:
        archived_at = await conn.fetchval(
            "SELECT archived_at FROM benchmark.trial_manifest WHERE run_id = $1 AND trial_id = $2",
            handle.run_id, handle.trial_id,
        )
    finally:
        await conn.close()
    assert archived_at is not None


async def test_provisioning_after_a_crash_reuses_the_channel_it_made(target, make_request, relay) -> None:
    """A crash between the relay writes and the INSERT leaves a channel but no row; the retry
    must adopt that channel (deterministic channel id) rather than make a second one."""
    req = make_request()
    planned, secrets = _plan(target, req)
    await _provision_on_relay(target, req, planned, secrets)  # ...and then the process died
    before = len(await _channels(relay.dsn))
    handle, again = await provision(target, req)
    assert handle.channel_id == planned.channel_id
    assert len(await _channels(relay.dsn)) == before
    assert again.secret_strings() == secrets.secret_strings()


async def test_healthcheck_reports_relay_and_postgres_failures(target, relay) -> None:
    await healthcheck(target)
    closed_port = free_port()  # nothing listens there
    with pytest.raises(ProvisioningError, match="relay readiness unreachable"):
        await healthcheck(replace(target, connect_url=f"ws://127.0.0.1:{closed_port}"))
    missing_db = relay.dsn.rsplit("/", 1)[0] + "/no_such_database_here"
    with pytest.raises(ProvisioningError, match="postgres healthcheck failed"):
        await healthcheck(replace(target, pg_dsn=missing_db))
    # waiting for readiness: returns at once when ready, gives up with the last reason when not
    await await_healthy(target, timeout_s=5)
    with pytest.raises(ProvisioningError, match="relay readiness unreachable"):
        await await_healthy(replace(target, connect_url=f"ws://127.0.0.1:{closed_port}"), timeout_s=0.5, poll_s=0.1)
