"""Fetching bundle files: a local store in one thread, with the store's own error types."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from buzz_operator.cli.stores import fetch
from buzz_operator.storage import FileStore, InvalidKey, ObjectNotFound


def test_local_fetch_and_its_errors(tmp_path: Path) -> None:
    store = FileStore(tmp_path)
    asyncio.run(store.put("s/t/result.json", b"{}"))
    assert asyncio.run(fetch(store, ["s/t/result.json"])) == {"s/t/result.json": b"{}"}
    with pytest.raises(ObjectNotFound):
        asyncio.run(fetch(store, ["s/t/gone.json"]))
    with pytest.raises(InvalidKey):
        asyncio.run(fetch(store, ["s/../../etc/passwd"]))
