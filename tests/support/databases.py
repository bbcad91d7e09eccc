"""A throwaway Postgres database for one test or module: created on the shared test Postgres,
dropped (connections and all) afterwards, so tests never see each other's rows."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from contextlib import contextmanager

import asyncpg


async def _admin(pg_dsn: str, sql: str) -> None:
    conn = await asyncpg.connect(pg_dsn)
    try:
        await conn.execute(sql)
    finally:
        await conn.close()


@contextmanager
def scratch_database(pg_dsn: str, name: str) -> Iterator[str]:
    """Create database `name` through the admin DSN `pg_dsn`, yield its name, then drop it.
    Synchronous (asyncio.run), so fixtures of any scope and loop can use it."""
    asyncio.run(_admin(pg_dsn, f'CREATE DATABASE "{name}"'))
    try:
        yield name
    finally:
        asyncio.run(_admin(pg_dsn, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
