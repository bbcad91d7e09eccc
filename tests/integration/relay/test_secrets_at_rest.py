"""No seat or user secret reaches Postgres (the improvement on docs/tenant.md#handle: the seed stored them all)."""

from __future__ import annotations

import json
import uuid
from dataclasses import replace

import asyncpg
from buzz_operator.relay.nostr import encode_nsec
from buzz_operator.relay.tenant import provision, teardown


async def _dump_every_table(dsn: str) -> str:
    """Every row of every table of every non-system schema, as text."""
    conn = await asyncpg.connect(dsn)
    try:
        tables = await conn.fetch(
            "SELECT table_schema, table_name FROM information_schema.tables "
            "WHERE table_type = 'BASE TABLE' AND table_schema NOT IN ('pg_catalog', 'information_schema')"
        )
        chunks = []
        for t in tables:
            rows = await conn.fetch(f'SELECT t::text AS row FROM "{t["table_schema"]}"."{t["table_name"]}" t')
            chunks += [r["row"] for r in rows]
        return "\n".join(chunks)
    finally:
        await conn.close()


async def test_no_secret_in_any_table(pg_dsn, target, make_request, make_seats, directory60, relay) -> None:
    # the harness's own database is separate from the relay's here, as it may be in a cluster
    harness_db = f"harness_{uuid.uuid4().hex[:8]}"
    admin = await asyncpg.connect(pg_dsn)
    await admin.execute(f'CREATE DATABASE "{harness_db}"')
    harness_dsn = relay.dsn.rsplit("/", 1)[0] + f"/{harness_db}"
    try:
        harness_target = replace(target, pg_dsn=harness_dsn)
        req = make_request(seats=make_seats(3), directory=directory60, task_name="user-mention",
                           user_display_name="John Vincent Doe")
        handle, secrets = await provision(harness_target, req)
        await provision(harness_target, req)
        await teardown(harness_target, handle, secrets)

        harness_text = await _dump_every_table(harness_dsn)
        assert handle.channel_id in harness_text  # the dump really covers the stored handle
        signatures = [json.loads(s.auth_tag)[3] for s in secrets.seats.values()]
        signatures.append(json.loads(secrets.user_auth_tag)[3])
        leaks = [s for s in [*secrets.secret_strings(), *signatures] if s in harness_text]
        assert leaks == []

        # The relay's tables hold published events. Keys never leave the provisioner, so no secret
        # key (hex or nsec) is there; auth tags are, by protocol — every event an identity signs
        # carries its owner attestation (docs/relay-protocol.md#auth) and every channel member reads it.
        relay_text = await _dump_every_table(relay.dsn)
        assert handle.user.pubkey in relay_text
        keys = [secrets.user_secret_hex, *(s.secret_hex for s in secrets.seats.values())]
        assert [k for k in keys + [encode_nsec(k) for k in keys] if k in relay_text] == []
    finally:
        await admin.execute(f'DROP DATABASE IF EXISTS "{harness_db}" WITH (FORCE)')
        await admin.close()
