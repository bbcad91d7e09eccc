"""FileStore against a real directory: the ObjectStore contract, atomic writes, and directory trees."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest
from buzz_operator.storage import FileStore, ObjectNotFound, ObjectStore, StorageError, open_store
from buzz_operator.storage.errors import InvalidKey
from buzz_operator.storage.tree import PARTIAL_MARK, atomic_write


@pytest.fixture
def store(tmp_path: Path) -> FileStore:
    return FileStore(tmp_path / "store")


def test_is_an_object_store(store: FileStore) -> None:
    assert isinstance(store, ObjectStore)


async def test_put_get_exists_delete(store: FileStore) -> None:
    assert not await store.exists("a/b.json")
    await store.put("a/b.json", b'{"x": 1}')
    assert await store.exists("a/b.json")
    assert await store.get("a/b.json") == b'{"x": 1}'
    await store.put("a/b.json", b"replaced")
    assert await store.get("a/b.json") == b"replaced"
    await store.delete("a/b.json")
    assert not await store.exists("a/b.json")
    await store.delete("a/b.json")  # deleting a missing key is not an error


async def test_get_missing_key_raises_object_not_found(store: FileStore) -> None:
    with pytest.raises(ObjectNotFound, match="no object at key 'nope'"):
        await store.get("nope")
    await store.put("dir/file", b"x")
    with pytest.raises(ObjectNotFound):
        await store.get("dir")  # a 'directory' is not an object


async def test_list_is_recursive_sorted_and_prefix_is_a_directory(store: FileStore) -> None:
    for key in ["b/2", "a/1", "a/sub/3", "ab/4"]:
        await store.put(key, b"")
    assert await store.list() == ["a/1", "a/sub/3", "ab/4", "b/2"]
    assert await store.list("a") == ["a/1", "a/sub/3"]  # not "ab/4"
    assert await store.list("missing") == []


async def test_keys_are_validated_before_touching_the_disk(store: FileStore, tmp_path: Path) -> None:
    with pytest.raises(InvalidKey):
        await store.put("../outside", b"x")
    with pytest.raises(InvalidKey):
        await store.list("../")
    assert not (tmp_path / "outside").exists()


async def test_put_file_copies_bytes(store: FileStore, tmp_path: Path) -> None:
    src = tmp_path / "src.bin"
    payload = os.urandom(3 * 1024 * 1024 + 17)
    src.write_bytes(payload)
    await store.put_file("blob.bin", src)
    assert await store.get("blob.bin") == payload


async def test_put_file_of_missing_path_is_a_permanent_error(store: FileStore, tmp_path: Path) -> None:
    with pytest.raises(StorageError) as caught:
        await store.put_file("k", tmp_path / "absent")
    assert not caught.value.retryable


def test_interrupted_write_keeps_the_old_file_and_leaves_no_temp(tmp_path: Path) -> None:
    target = tmp_path / "f"
    target.write_bytes(b"old")

    def chunks():  # type: ignore[no-untyped-def]
        yield b"new half"
        raise OSError("disk went away")

    with pytest.raises(OSError, match="disk went away"):
        atomic_write(target, chunks())
    assert target.read_bytes() == b"old"
    assert os.listdir(tmp_path) == ["f"]


def test_concurrent_reader_sees_old_or_new_never_a_mix(tmp_path: Path) -> None:
    """A reader polling the file while it is rewritten many times only ever reads one whole version."""
    target = tmp_path / "f"
    size = 256 * 1024
    versions = [bytes([i]) * size for i in range(40)]
    atomic_write(target, [versions[0]])
    seen: set[bytes] = set()
    done = threading.Event()

    def reader() -> None:
        while not done.is_set():
            seen.add(target.read_bytes())

    thread = threading.Thread(target=reader)
    thread.start()
    try:
        for version in versions[1:]:
            # written in small chunks so a non-atomic write would expose partial content
            atomic_write(target, (version[i : i + 4096] for i in range(0, size, 4096)))
    finally:
        done.set()
        thread.join()
    assert seen <= set(versions)
    assert len(seen) >= 1


async def test_list_hides_in_flight_temp_files(store: FileStore) -> None:
    await store.put("a/done", b"x")
    (store.root / "a" / f"next{PARTIAL_MARK}abc").write_bytes(b"partial")
    assert await store.list() == ["a/done"]


def _tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


async def test_put_dir_get_dir_round_trip(store: FileStore, tmp_path: Path) -> None:
    src = tmp_path / "bundle"
    files = {
        "config.json": b"{}",
        "agent/buzz/receipts.jsonl": b'{"a":1}\n{"a":2}\n',
        "agent/buzz/lead.stdout.log": os.urandom(100_000),
        "verifier/reward.txt": b"1\n",
        "empty": b"",
    }
    for rel, data in files.items():
        (src / rel).parent.mkdir(parents=True, exist_ok=True)
        (src / rel).write_bytes(data)
    keys = await store.put_dir("sw/t1", src)
    assert keys == sorted(f"sw/t1/{rel}" for rel in files)
    dst = tmp_path / "back"
    paths = await store.get_dir("sw/t1", dst)
    assert paths == sorted(dst / rel for rel in files)
    assert _tree(dst) == files


async def test_put_dir_refuses_symlinks(store: FileStore, tmp_path: Path) -> None:
    src = tmp_path / "bundle"
    src.mkdir()
    (src / "ok.txt").write_text("fine")
    secret = tmp_path / "host-secret"
    secret.write_text("do not upload")
    (src / "link").symlink_to(secret)
    with pytest.raises(StorageError, match="refusing to upload symlink"):
        await store.put_dir("p", src)
    assert await store.list() == []


async def test_put_dir_of_missing_dir_names_it(store: FileStore, tmp_path: Path) -> None:
    with pytest.raises(StorageError, match=r"local_dir .* is not a directory"):
        await store.put_dir("p", tmp_path / "absent")


async def test_get_dir_never_writes_outside_the_target(store: FileStore, tmp_path: Path) -> None:
    """A target directory whose subdirectory is a symlink out of it must not be written through."""
    await store.put("p/sub/f", b"x")
    dst = tmp_path / "dst"
    dst.mkdir()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (dst / "sub").symlink_to(elsewhere)
    with pytest.raises(InvalidKey, match="outside"):
        await store.get_dir("p", dst)
    assert list(elsewhere.iterdir()) == []


async def test_put_under_an_existing_file_is_a_permanent_error(store: FileStore) -> None:
    await store.put("a", b"file")
    with pytest.raises(StorageError) as caught:
        await store.put("a/b", b"x")
    assert not caught.value.retryable


def test_root_must_be_absolute() -> None:
    with pytest.raises(StorageError, match="absolute"):
        FileStore("relative/dir")


def test_open_store_file_url(tmp_path: Path) -> None:
    store = open_store(tmp_path.as_uri())
    assert isinstance(store, FileStore)
    assert store.root == tmp_path
    assert store.url == tmp_path.as_uri()
