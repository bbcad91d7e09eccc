"""S3Store against the real S3-speaking test server (versitygw, from hack/s3.sh)."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any

import obstore
import pytest
from buzz_operator.storage import (
    ObjectNotFound,
    ObjectStore,
    S3Store,
    StorageError,
    StorageUnavailable,
    open_store,
)
from buzz_operator.storage.s3_admin import bucket_exists, ensure_bucket
from buzz_operator.storage.s3_store import CHUNK_SIZE

MiB = 1024 * 1024


def write_tree(root: Path, files: dict[str, bytes]) -> Path:
    for rel, data in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(data)
    return root


def digest_tree(root: Path) -> dict[str, str]:
    return {
        p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def test_is_an_object_store(s3_store: S3Store) -> None:
    assert isinstance(s3_store, ObjectStore)


async def test_directory_round_trip_with_binary_and_large_files(s3_store: S3Store, tmp_path: Path) -> None:
    files = {
        "config.json": b'{"trial": "t1"}',
        "agent/buzz/lead.stdout.log": b"tokens\n" * 10_000,
        "agent/buzz/blob.bin": bytes(range(256)) * 4096,  # every byte value, 1 MiB
        "agent/buzz/large.bin": os.urandom(20 * MiB + 123),  # > CHUNK_SIZE: multipart
        "verifier/empty.txt": b"",
    }
    src = write_tree(tmp_path / "src", files)
    keys = await s3_store.put_dir("sw/t1", src)
    assert keys == sorted(f"sw/t1/{rel}" for rel in files)

    dst = tmp_path / "dst"
    paths = await s3_store.get_dir("sw/t1", dst)
    assert paths == sorted(dst / rel for rel in files)
    assert digest_tree(dst) == digest_tree(src)

    # S3 gives a multipart object an ETag "<md5 of part md5s>-<number of parts>"
    large = obstore.head(s3_store.raw, "sw/t1/agent/buzz/large.bin")
    parts = -(-(20 * MiB + 123) // CHUNK_SIZE)
    assert large["e_tag"] is not None and large["e_tag"].strip('"').endswith(f"-{parts}")
    assert large["size"] == 20 * MiB + 123
    small = obstore.head(s3_store.raw, "sw/t1/config.json")
    assert small["e_tag"] is not None and "-" not in small["e_tag"]


async def test_put_file_of_a_large_file_reads_back_identical(s3_store: S3Store, tmp_path: Path) -> None:
    payload = os.urandom(21 * MiB)
    (tmp_path / "f").write_bytes(payload)
    await s3_store.put_file("big/f", tmp_path / "f")
    assert await s3_store.get("big/f") == payload


async def test_list_with_prefix_is_a_directory_listing(s3_store: S3Store) -> None:
    for key in ["sw/t1/result.json", "sw/t1/agent/buzz/a.log", "sw/t10/result.json", "other/x"]:
        await s3_store.put(key, b"x")
    assert await s3_store.list("sw/t1") == ["sw/t1/agent/buzz/a.log", "sw/t1/result.json"]
    assert await s3_store.list("sw") == ["sw/t1/agent/buzz/a.log", "sw/t1/result.json", "sw/t10/result.json"]
    assert await s3_store.list("nothing") == []
    assert len(await s3_store.list()) == 4


async def test_keys_are_relative_to_the_store_prefix(s3_server: Any, s3_store: S3Store) -> None:
    await s3_store.put("a/b", b"inside")
    whole_bucket = S3Store(
        s3_store.bucket,
        endpoint=s3_server.endpoint,
        access_key=s3_server.access_key,
        secret_key=s3_server.secret_key,
        region=s3_server.region,
    )
    assert await whole_bucket.list() == ["bundles/a/b"]
    assert await whole_bucket.get("bundles/a/b") == b"inside"


async def test_exists_and_delete(s3_store: S3Store) -> None:
    assert not await s3_store.exists("k")
    await s3_store.put("k", b"v")
    assert await s3_store.exists("k")
    await s3_store.delete("k")
    assert not await s3_store.exists("k")
    await s3_store.delete("k")  # deleting again is not an error
    with pytest.raises(ObjectNotFound):
        await s3_store.get("k")


async def test_missing_bucket_is_a_permanent_error(s3_server: Any) -> None:
    store = open_store(
        "s3://no-such-bucket-here/p",
        endpoint=s3_server.endpoint,
        access_key=s3_server.access_key,
        secret_key=s3_server.secret_key,
        region=s3_server.region,
    )
    assert not bucket_exists(
        s3_server.endpoint,
        "no-such-bucket-here",
        access_key=s3_server.access_key,
        secret_key=s3_server.secret_key,
    )
    for operation in (store.put("k", b"x"), store.get("k"), store.exists("k"), store.list()):
        with pytest.raises(StorageError, match="bucket missing") as caught:
            await operation
        assert not isinstance(caught.value, StorageUnavailable)
        assert not caught.value.retryable


def test_ensure_bucket_creates_once(s3_server: Any) -> None:
    bucket = f"made-{os.urandom(6).hex()}"
    settings = {
        "access_key": s3_server.access_key,
        "secret_key": s3_server.secret_key,
        "region": s3_server.region,
    }
    assert not bucket_exists(s3_server.endpoint, bucket, **settings)
    assert ensure_bucket(s3_server.endpoint, bucket, **settings) is True
    assert bucket_exists(s3_server.endpoint, bucket, **settings)
    assert ensure_bucket(s3_server.endpoint, bucket, **settings) is False


async def test_error_messages_never_carry_the_secret(s3_server: Any) -> None:
    secret = "very-secret-value-123"
    store = S3Store(
        "no-such-bucket-here",
        endpoint=s3_server.endpoint,
        access_key=s3_server.access_key,
        secret_key=secret,
        region=s3_server.region,
    )
    with pytest.raises(StorageError) as caught:
        await store.put("k", b"x")
    assert secret not in str(caught.value)
    assert secret not in repr(store)
