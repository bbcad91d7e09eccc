"""upload_bundle / upload_failed_try on a real FileStore: result.json is the commit marker, written
after everything else and never written over."""

from __future__ import annotations

from pathlib import Path

import pytest
from buzz_operator.storage import (
    AlreadyCommitted,
    FileStore,
    StorageError,
    StorageUnavailable,
    is_committed,
    recorded_failed_tries,
    upload_bundle,
    upload_failed_try,
)

BUNDLE = {
    "config.json": b'{"trial": "t1"}',
    "agent/buzz/manifest.json": b"{}",
    "agent/buzz/lead.stdout.log": b"line\n" * 1000,
    "agent/buzz/receipts.jsonl": b'{"tokens": 5}\n',
    "verifier/reward.json": b'{"reward": 1}',
    "verifier/test-stdout.txt": b"ok\n",
    "result.json": b'{"verifier_result": {"rewards": {"reward": 1}}}',
}


def write_tree(root: Path, files: dict[str, bytes]) -> Path:
    for rel, data in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(data)
    return root


class RecordingStore(FileStore):
    """A real FileStore that records, for each completed put_file, which keys were already stored:
    the order instrument for "result.json last"."""

    def __init__(self, root: Path, fail_on: str | None = None) -> None:
        super().__init__(root)
        self.completed: list[tuple[str, list[str]]] = []
        self.fail_on = fail_on

    async def put_file(self, key: str, path: Path | str) -> None:
        if key == self.fail_on:
            # a fake failure: the error path of a store that goes away mid-bundle
            raise StorageUnavailable(f"injected failure for {key}")
        stored_before = await self.list()
        await super().put_file(key, path)
        self.completed.append((key, stored_before))


async def test_result_json_is_written_last_after_every_other_file(tmp_path: Path) -> None:
    store = RecordingStore(tmp_path / "store")
    keys = await upload_bundle(store, "sw", "t1", write_tree(tmp_path / "b", BUNDLE))
    assert keys[-1] == "sw/t1/result.json"
    assert sorted(keys) == sorted(f"sw/t1/{rel}" for rel in BUNDLE)
    last_key, stored_before = store.completed[-1]
    assert last_key == "sw/t1/result.json"
    assert sorted(stored_before) == sorted(k for k in keys if k != "sw/t1/result.json")
    assert await is_committed(store, "sw", "t1")


async def test_no_result_json_locally_means_no_commit(tmp_path: Path) -> None:
    store = FileStore(tmp_path / "store")
    partial = {k: v for k, v in BUNDLE.items() if k != "result.json"}
    keys = await upload_bundle(store, "sw", "t1", write_tree(tmp_path / "b", partial))
    assert "sw/t1/result.json" not in keys
    assert not await is_committed(store, "sw", "t1")


async def test_a_failed_file_leaves_the_trial_uncommitted(tmp_path: Path) -> None:
    store = RecordingStore(tmp_path / "store", fail_on="sw/t1/agent/buzz/receipts.jsonl")
    with pytest.raises(StorageUnavailable, match="injected"):
        await upload_bundle(store, "sw", "t1", write_tree(tmp_path / "b", BUNDLE))
    assert not await is_committed(store, "sw", "t1")
    assert "sw/t1/result.json" not in [key for key, _ in store.completed]


async def test_an_interrupted_upload_can_be_redone(tmp_path: Path) -> None:
    store = RecordingStore(tmp_path / "store", fail_on="sw/t1/verifier/reward.json")
    local = write_tree(tmp_path / "b", BUNDLE)
    with pytest.raises(StorageUnavailable):
        await upload_bundle(store, "sw", "t1", local)
    store.fail_on = None
    await upload_bundle(store, "sw", "t1", local)
    assert await is_committed(store, "sw", "t1")
    assert await store.get("sw/t1/verifier/reward.json") == BUNDLE["verifier/reward.json"]


async def test_a_committed_bundle_is_never_written_again(tmp_path: Path) -> None:
    store = FileStore(tmp_path / "store")
    await upload_bundle(store, "sw", "t1", write_tree(tmp_path / "b", BUNDLE))
    changed = write_tree(tmp_path / "c", {**BUNDLE, "verifier/reward.json": b'{"reward": 0}'})
    with pytest.raises(AlreadyCommitted, match=r"trial sw/t1 is already committed"):
        await upload_bundle(store, "sw", "t1", changed)
    assert await store.get("sw/t1/verifier/reward.json") == BUNDLE["verifier/reward.json"]


async def test_bundle_may_not_carry_its_own_retries_dir(tmp_path: Path) -> None:
    store = FileStore(tmp_path / "store")
    local = write_tree(tmp_path / "b", {**BUNDLE, "retries/1/result.json": b"{}"})
    with pytest.raises(StorageError, match=r"retries/1/result\.json"):
        await upload_bundle(store, "sw", "t1", local)
    assert await store.list() == []


async def test_failed_attempts_are_kept_apart_and_never_overwritten(tmp_path: Path) -> None:
    store = FileStore(tmp_path / "store")
    first = write_tree(
        tmp_path / "a1", {"agent/buzz/lead.stderr.log": b"pod lost", "result.json": b'{"n": 1}'}
    )
    second = write_tree(
        tmp_path / "a2", {"agent/buzz/lead.stderr.log": b"image pull", "result.json": b'{"n": 2}'}
    )
    keys = await upload_failed_try(store, "sw", "t1", 1, first)
    assert keys == ["sw/t1/retries/1/agent/buzz/lead.stderr.log", "sw/t1/retries/1/result.json"]
    await upload_failed_try(store, "sw", "t1", 2, second)
    with pytest.raises(AlreadyCommitted, match="failed try 1 of trial sw/t1"):
        await upload_failed_try(store, "sw", "t1", 1, second)
    assert await store.get("sw/t1/retries/1/agent/buzz/lead.stderr.log") == b"pod lost"
    assert await recorded_failed_tries(store, "sw", "t1") == [1, 2]
    # the final bundle lives beside the attempts and is not committed by them
    assert not await is_committed(store, "sw", "t1")
    await upload_bundle(store, "sw", "t1", write_tree(tmp_path / "b", BUNDLE))
    assert await recorded_failed_tries(store, "sw", "t1") == [1, 2]


async def test_bad_names_are_refused_before_any_upload(tmp_path: Path) -> None:
    store = FileStore(tmp_path / "store")
    local = write_tree(tmp_path / "b", BUNDLE)
    with pytest.raises(StorageError, match=r"^trial "):
        await upload_bundle(store, "sw", "../t1", local)
    with pytest.raises(StorageError, match=r"^sweep "):
        await is_committed(store, "a/b", "t1")
    assert await store.list() == []
