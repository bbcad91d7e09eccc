"""A bundle with suspected secrets stored under the sweep's quarantine prefix: the same layout and
commit rule there, a pointer at the trial's own place, readers and spec.rerun following it."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from buzz_operator.storage import InvalidKey, StorageError
from buzz_operator.storage.bundle import (
    bundle_store,
    is_committed,
    quarantine_of,
    set_aside,
    upload_bundle,
    write_quarantine_pointer,
)
from buzz_operator.storage.errors import AlreadyCommitted
from buzz_operator.storage.file_store import FileStore
from buzz_operator.storage.prefixed import PrefixedStore


def _bundle(root: Path, text: str) -> Path:
    (root / "agent" / "buzz").mkdir(parents=True)
    (root / "agent" / "buzz" / "receipts.jsonl").write_text(text)
    (root / "config.json").write_text("{}")
    (root / "result.json").write_text(json.dumps({"r": text}))
    return root


def test_a_prefixed_store_is_the_same_store_under_its_prefix(tmp_path: Path) -> None:
    inner = FileStore(tmp_path / "store")
    view = PrefixedStore(inner, "quarantine/a")

    async def run() -> None:
        await view.put("s/t/x.txt", b"x")
        assert await inner.get("quarantine/a/s/t/x.txt") == b"x"
        assert await view.exists("s/t/x.txt") and await view.get("s/t/x.txt") == b"x"
        assert await view.list("s") == ["s/t/x.txt"] and await view.list() == ["s/t/x.txt"]
        await view.delete("s/t/x.txt")
        assert not await inner.exists("quarantine/a/s/t/x.txt")

    asyncio.run(run())
    assert view.url == f"{inner.url}/quarantine/a"
    with pytest.raises(InvalidKey):
        PrefixedStore(inner, "../out")
    with pytest.raises(InvalidKey):
        asyncio.run(view.put("../../escape", b"x"))


def test_a_quarantined_bundle_commits_there_and_its_pointer_leads_to_it(tmp_path: Path) -> None:
    store = FileStore(tmp_path / "store")
    quarantine = PrefixedStore(store, "quarantine")

    async def run() -> None:
        assert await bundle_store(store, "s", "t") is store  # no pointer: the sweep's own place
        await upload_bundle(quarantine, "s", "t", _bundle(tmp_path / "run1", "leaky"))
        await write_quarantine_pointer(store, "s", "t", "quarantine", {"count": 1, "kinds": {"openai-key": 1}})
        assert not await is_committed(store, "s", "t")  # Harbor's reader sees no result.json here
        home = await bundle_store(store, "s", "t")
        assert isinstance(home, PrefixedStore) and home.prefix == "quarantine"
        assert await is_committed(home, "s", "t")
        with pytest.raises(AlreadyCommitted):  # the commit rule holds in the quarantine too
            await upload_bundle(home, "s", "t", _bundle(tmp_path / "run1b", "again"))

    asyncio.run(run())
    assert sorted(p.name for p in (tmp_path / "store" / "s" / "t").iterdir()) == ["quarantined.json"]
    pointer = json.loads((tmp_path / "store" / "s" / "t" / "quarantined.json").read_text())
    assert pointer == {"quarantine_prefix": "quarantine", "secret_findings": {"count": 1, "kinds": {"openai-key": 1}}}


def test_rerun_sets_a_quarantined_run_aside_inside_the_quarantine(tmp_path: Path) -> None:
    store = FileStore(tmp_path / "store")
    quarantine = PrefixedStore(store, "quarantine")

    async def run() -> int:
        await upload_bundle(quarantine, "s", "t", _bundle(tmp_path / "run1", "leaky"))
        await write_quarantine_pointer(store, "s", "t", "quarantine", {"count": 1, "kinds": {}})
        return await set_aside(store, "s", "t", 2)

    assert asyncio.run(run()) == 4  # three files in the quarantine, and the pointer
    kept = tmp_path / "store" / "quarantine" / "s" / "t" / "reruns" / "2"
    assert json.loads((kept / "result.json").read_text()) == {"r": "leaky"}  # never left the quarantine
    assert (tmp_path / "store" / "s" / "t" / "reruns" / "2" / "quarantined.json").exists()
    assert asyncio.run(quarantine_of(store, "s", "t")) is None
    # the new run's bundle finds its place free, wherever it goes
    asyncio.run(upload_bundle(quarantine, "s", "t", _bundle(tmp_path / "run2", "second")))
    assert asyncio.run(is_committed(quarantine, "s", "t"))


def test_a_pointer_that_is_not_one_is_a_storage_error(tmp_path: Path) -> None:
    store = FileStore(tmp_path / "store")
    asyncio.run(store.put("s/t/quarantined.json", b'{"quarantine_prefix": "../elsewhere"}'))
    with pytest.raises(StorageError, match="not a quarantine pointer"):
        asyncio.run(bundle_store(store, "s", "t"))
