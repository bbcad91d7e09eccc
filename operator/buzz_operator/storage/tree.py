"""Local directory trees ↔ keys, shared by every backend: walking a tree into (key, file) pairs,
mapping downloaded keys back to paths that cannot leave the target directory, and atomic writes."""

from __future__ import annotations

import asyncio
import os
import secrets
import stat
from collections.abc import Awaitable, Callable, Iterable, Iterator
from pathlib import Path

from .errors import InvalidKey, StorageError
from .keys import join_key, relative_key, validate_key, validate_prefix

# Uploads of one bundle at a time: enough to hide per-request latency, few enough not to flood a
# small S3 server (or the operator's thread pool, which runs the blocking S3 client calls).
DEFAULT_CONCURRENCY = 8
# Temp files of atomic writes carry this mark; FileStore.list hides them.
PARTIAL_MARK = ".buzz-partial-"


def local_files(local_dir: Path | str) -> list[tuple[str, Path]]:
    """(relative key, path) for every regular file under local_dir, sorted by key.

    Symlinks are refused, not followed: bundles come out of trial pods, and a link to a host file
    (say /etc/shadow on the operator's node) must never be uploaded as evidence."""
    root = Path(local_dir)
    if not root.is_dir():
        raise StorageError(f"local_dir {str(root)!r} is not a directory")
    found: list[tuple[str, Path]] = []
    for dirpath, dirnames, filenames in os.walk(root):
        for name in [*dirnames, *filenames]:
            path = Path(dirpath) / name
            mode = path.lstat().st_mode
            if stat.S_ISLNK(mode):
                raise StorageError(
                    f"refusing to upload symlink {str(path)!r}: bundles hold regular files only"
                )
            if name in filenames and not stat.S_ISREG(mode):
                raise StorageError(f"refusing to upload {str(path)!r}: not a regular file")
        for name in filenames:
            path = Path(dirpath) / name
            rel = path.relative_to(root).as_posix()
            found.append((validate_key(rel, field=f"file name under {str(root)!r}"), path))
    return sorted(found)


def local_target(local_dir: Path, rel: str) -> Path:
    """The path for relative key `rel` under local_dir; never outside it, whatever the server sent."""
    validate_key(rel, field="downloaded key")
    target = local_dir / rel
    if not target.resolve().is_relative_to(local_dir.resolve()):
        raise InvalidKey(f"downloaded key {rel!r} would be written outside {str(local_dir)!r}")
    return target


def _temp_beside(path: Path) -> Path:
    return path.with_name(f"{path.name}{PARTIAL_MARK}{secrets.token_hex(6)}")


def atomic_write(path: Path, chunks: Iterable[bytes]) -> None:
    """Write chunks to a temp file beside `path`, fsync, then rename over `path`: a reader sees
    the old file or the whole new one, never a prefix of it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = _temp_beside(path)
    try:
        with open(tmp, "wb") as out:
            for chunk in chunks:
                out.write(chunk)
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def read_chunks(path: Path, size: int = 1 << 20) -> Iterator[bytes]:
    with open(path, "rb") as src:
        while chunk := src.read(size):
            yield chunk


async def bounded(
    jobs: Iterable[Callable[[], Awaitable[None]]], concurrency: int = DEFAULT_CONCURRENCY
) -> None:
    """Run the jobs at most `concurrency` at a time. After the first failure no further job starts;
    the ones already running finish (none is left writing behind the caller's back), then the
    first failure is raised."""
    gate = asyncio.Semaphore(concurrency)
    failures: list[Exception] = []

    async def run(job: Callable[[], Awaitable[None]]) -> None:
        async with gate:
            if failures:
                return
            try:
                await job()
            except Exception as exc:
                failures.append(exc)

    await asyncio.gather(*(run(j) for j in jobs))
    if failures:
        raise failures[0]


async def upload_files(
    put_file: Callable[[str, Path], Awaitable[None]], prefix: str, files: list[tuple[str, Path]]
) -> list[str]:
    """put_file each (relative key, path) under prefix; the keys written, sorted."""
    keys = [join_key(prefix, rel) for rel, _ in files]
    await bounded([lambda k=k, p=p: put_file(k, p) for k, (_, p) in zip(keys, files, strict=True)])
    return sorted(keys)


async def download_tree(
    keys: list[str], prefix: str, local_dir: Path | str, download: Callable[[str, Path], Awaitable[None]]
) -> list[Path]:
    """Fetch every key under prefix into local_dir via `download(key, path)`; the paths, sorted."""
    validate_prefix(prefix)
    root = Path(local_dir)
    targets = [(key, local_target(root, relative_key(prefix, key))) for key in keys]
    await bounded([lambda k=k, t=t: download(k, t) for k, t in targets])
    return sorted(t for _, t in targets)
