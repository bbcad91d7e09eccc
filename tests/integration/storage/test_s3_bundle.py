"""Bundles on the real S3 test server: result.json is stored only after every other file is
listable from the server, and carries the newest timestamp."""

from __future__ import annotations

import os
from pathlib import Path

import obstore
from buzz_operator.storage import S3Store, is_committed, upload_bundle, upload_failed_try

MiB = 1024 * 1024

BUNDLE = {
    "config.json": b'{"trial": "t1"}',
    "agent/buzz/manifest.json": b"{}",
    "agent/buzz/lead.stdout.log": b"log line\n" * 50_000,
    "agent/buzz/receipts.jsonl": b'{"input_tokens": 10}\n',
    "agent/buzz/transcript.json": os.urandom(6 * MiB),
    "verifier/reward.json": b'{"reward": 1.0}',
    "result.json": b'{"verifier_result": {"rewards": {"reward": 1.0}}}',
}


def write_tree(root: Path, files: dict[str, bytes]) -> Path:
    for rel, data in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(data)
    return root


class ListingAtCommit:
    """Wraps the real S3Store: just before result.json is uploaded, asks the server what it holds."""

    def __init__(self, store: S3Store) -> None:
        self.store = store
        self.listed_at_commit: list[str] | None = None
        self.uploads: list[str] = []

    def __getattr__(self, name: str) -> object:
        return getattr(self.store, name)

    async def put_file(self, key: str, path: Path | str) -> None:
        if key.endswith("/result.json"):
            self.listed_at_commit = await self.store.list()
        await self.store.put_file(key, path)
        self.uploads.append(key)

    async def exists(self, key: str) -> bool:
        return await self.store.exists(key)


async def test_result_json_is_committed_last(s3_store: S3Store, tmp_path: Path) -> None:
    recorder = ListingAtCommit(s3_store)
    keys = await upload_bundle(recorder, "sw", "t1", write_tree(tmp_path / "b", BUNDLE))  # type: ignore[arg-type]

    body = sorted(f"sw/t1/{rel}" for rel in BUNDLE if rel != "result.json")
    assert keys[-1] == "sw/t1/result.json"
    assert recorder.uploads[-1] == "sw/t1/result.json"
    # the server already listed the whole body when the marker went up, and not the marker
    assert recorder.listed_at_commit == body
    assert await is_committed(s3_store, "sw", "t1")

    # and the server's own clock agrees: nothing of the body is newer than the marker
    metas = {m["path"]: m for m in obstore.list(s3_store.raw, "sw/t1").collect()}
    marker_time = metas["sw/t1/result.json"]["last_modified"]
    assert all(m["last_modified"] <= marker_time for m in metas.values())


async def test_uncommitted_without_result_json(s3_store: S3Store, tmp_path: Path) -> None:
    partial = {k: v for k, v in BUNDLE.items() if k != "result.json"}
    await upload_bundle(s3_store, "sw", "t2", write_tree(tmp_path / "b", partial))
    assert not await is_committed(s3_store, "sw", "t2")
    assert len(await s3_store.list("sw/t2")) == len(partial)


async def test_attempt_evidence_lives_under_retries(s3_store: S3Store, tmp_path: Path) -> None:
    local = write_tree(tmp_path / "a1", {"agent/buzz/lead.stderr.log": b"pod evicted", "result.json": b"{}"})
    await upload_failed_try(s3_store, "sw", "t3", 1, local)
    assert await s3_store.list("sw/t3") == [
        "sw/t3/retries/1/agent/buzz/lead.stderr.log",
        "sw/t3/retries/1/result.json",
    ]
    assert not await is_committed(s3_store, "sw", "t3")
