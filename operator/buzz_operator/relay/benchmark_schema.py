"""Apply the `benchmark` schema (docs/tenant.md#benchmark-schema) idempotently; safe when many provisioners start at once."""

from __future__ import annotations

from importlib import resources

import asyncpg

_SCHEMA_LOCK_KEY = 0x62656E6368736368  # "benchsch": serialises concurrent CREATE ... IF NOT EXISTS


async def apply_benchmark_schema(conn: asyncpg.Connection) -> None:
    # fast path: every provisioning calls this, and the schema is usually there already
    if await conn.fetchval("SELECT to_regclass('benchmark.spans') IS NOT NULL"):
        return
    sql = resources.files("buzz_operator.relay").joinpath("benchmark_schema.sql").read_text()
    async with conn.transaction():
        await conn.execute("SELECT pg_advisory_xact_lock($1)", _SCHEMA_LOCK_KEY)
        await conn.execute(sql)
