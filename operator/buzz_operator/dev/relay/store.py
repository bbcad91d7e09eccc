"""asyncpg persistence of the development relay: schema, events, channels and members."""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

import asyncpg

from buzz_operator.dev.relay.filters import Filter, filter_sql

# any constant works; it only has to be the same for every relay process sharing a database
_SCHEMA_LOCK_KEY = 0x62757A7A72656C61  # "buzzrela"
_EVENT_COLUMNS = "e.id, e.pubkey, e.created_at, e.kind, e.tags, e.content, e.sig, e.received_at"


def row_to_event(row: asyncpg.Record) -> dict[str, Any]:
    return {
        "id": row["id"],
        "pubkey": row["pubkey"],
        "created_at": row["created_at"],
        "kind": row["kind"],
        "tags": json.loads(row["tags"]),
        "content": row["content"],
        "sig": row["sig"],
    }


async def apply_schema(pool: asyncpg.Pool) -> None:
    sql = resources.files("buzz_operator.dev.relay").joinpath("schema.sql").read_text()
    async with pool.acquire() as conn, conn.transaction():
        await conn.execute("SELECT pg_advisory_xact_lock($1)", _SCHEMA_LOCK_KEY)
        await conn.execute(sql)


async def insert_event(
    conn: asyncpg.Connection, event: dict[str, Any], channel_id: str | None, d_tag: str | None = None
) -> bool:
    """False when the id is already stored (a duplicate publish is not an error in NIP-01)."""
    status = await conn.execute(
        "INSERT INTO relay.events (id, pubkey, created_at, kind, tags, content, sig, channel_id, d_tag) "
        "VALUES ($1,$2,$3,$4,$5::jsonb,$6,$7,$8,$9) ON CONFLICT (id) DO NOTHING",
        event["id"], event["pubkey"], event["created_at"], event["kind"],
        json.dumps(event["tags"]), event["content"], event["sig"], channel_id, d_tag,
    )
    return status.endswith(" 1")


async def query_events(pool: asyncpg.Pool, filters: list[Filter], reader: str) -> list[dict[str, Any]]:
    """Union of the filters. Per filter: newest first, cut at `limit`, then the union is returned
    oldest first so a client reads a channel in the order it was written. Events of the same
    second are ordered by id, as Block's relay orders them (`ORDER BY created_at DESC, id ASC`,
    buzz-db event.rs), not by arrival: a reply posted in the second of the task it answers may
    read before it, and the evidence's causal order (docs/evidence.md#order) is what puts it
    after — so the development relay tests that order the way Block's relay would."""
    seen: dict[str, tuple[Any, dict[str, Any]]] = {}
    async with pool.acquire() as conn:
        for flt in filters:
            if flt.limit == 0:
                continue
            where, args = filter_sql(flt, "$1", 2)
            rows = await conn.fetch(
                f"SELECT {_EVENT_COLUMNS} FROM relay.events e WHERE {where} "
                f"ORDER BY e.created_at DESC, e.id ASC LIMIT {int(flt.limit)}",
                reader, *args,
            )
            for row in rows:
                seen.setdefault(row["id"], ((row["created_at"], row["id"]), row_to_event(row)))
    return [event for _, event in sorted(seen.values(), key=lambda pair: pair[0])]


async def channel_row(conn: asyncpg.Connection, channel_id: str, *, lock: bool = False) -> dict[str, Any] | None:
    row = await conn.fetchrow(
        "SELECT * FROM relay.channels WHERE id = $1 AND deleted_at IS NULL" + (" FOR UPDATE" if lock else ""),
        channel_id,
    )
    return dict(row) if row is not None else None


async def channel_members(conn: asyncpg.Connection, channel_id: str) -> list[tuple[str, str]]:
    rows = await conn.fetch(
        "SELECT pubkey, role FROM relay.members WHERE channel_id = $1 ORDER BY added_at, pubkey", channel_id
    )
    return [(r["pubkey"], r["role"]) for r in rows]
