"""FileStore: the embedded default backend, a directory on the operator's filesystem (file:///abs/path).

Blocking file I/O runs in worker threads so the operator's event loop keeps serving other trials."""

from __future__ import annotations

import asyncio
import errno
import os
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from .errors import ObjectNotFound, StorageError, StorageUnavailable
from .keys import validate_key, validate_prefix
from .tree import PARTIAL_MARK, atomic_write, download_tree, local_files, read_chunks, upload_files

T = TypeVar("T")

# OS errors that describe the machine's state rather than the request: they can heal on their own
# (space freed, NFS back), so the operator should retry them as infra failures.
_TRANSIENT_ERRNOS = {
    errno.ENOSPC,
    errno.EIO,
    errno.EAGAIN,
    errno.EDQUOT,
    errno.ESTALE,
    errno.ETIMEDOUT,
    errno.EBUSY,
}


class FileStore:
    """Objects as files under `root`; key 'a/b/c' is the file root/a/b/c."""

    def __init__(self, root: Path | str) -> None:
        root = Path(root)
        if not root.is_absolute():
            raise StorageError(f"file store root must be an absolute path, got {str(root)!r}")
        if ".." in root.parts:
            raise StorageError(f"file store root {str(root)!r} must not contain '..'")
        self.root = root

    @property
    def url(self) -> str:
        return self.root.as_uri()

    def __repr__(self) -> str:
        return f"FileStore({self.url})"

    def _path(self, key: str) -> Path:
        return self.root / validate_key(key)

    async def _io(self, what: str, key: str, fn: Callable[[], T]) -> T:
        try:
            return await asyncio.to_thread(fn)
        except (FileNotFoundError, IsADirectoryError, NotADirectoryError) as exc:
            if what == "get":
                raise ObjectNotFound(key) from exc
            raise StorageError(f"file store {what} {key!r} under {self.root}: {exc}") from exc
        except StorageError:
            raise
        except OSError as exc:
            kind = StorageUnavailable if exc.errno in _TRANSIENT_ERRNOS else StorageError
            raise kind(f"file store {what} {key!r} under {self.root}: {exc}") from exc

    async def put(self, key: str, data: bytes) -> None:
        path = self._path(key)
        await self._io("put", key, lambda: atomic_write(path, [bytes(data)]))

    async def put_file(self, key: str, path: Path | str) -> None:
        target, source = self._path(key), Path(path)
        await self._io("put_file", key, lambda: atomic_write(target, read_chunks(source)))

    async def get(self, key: str) -> bytes:
        path = self._path(key)
        return await self._io("get", key, path.read_bytes)

    async def exists(self, key: str) -> bool:
        path = self._path(key)
        return await self._io("exists", key, path.is_file)

    async def list(self, prefix: str = "") -> list[str]:
        base = self.root / validate_prefix(prefix) if prefix else self.root
        return await self._io("list", prefix, lambda: self._walk(base))

    def _walk(self, base: Path) -> list[str]:
        keys: list[str] = []
        for dirpath, _, filenames in os.walk(base):
            for name in filenames:
                # an in-flight atomic write is not an object yet
                if PARTIAL_MARK not in name:
                    keys.append((Path(dirpath) / name).relative_to(self.root).as_posix())
        return sorted(keys)

    async def delete(self, key: str) -> None:
        path = self._path(key)
        await self._io("delete", key, lambda: path.unlink(missing_ok=True))

    async def put_dir(self, prefix: str, local_dir: Path | str) -> list[str]:
        validate_prefix(prefix)
        files = await self._io("put_dir", prefix, lambda: local_files(local_dir))
        return await upload_files(self.put_file, prefix, files)

    async def get_dir(self, prefix: str, local_dir: Path | str) -> list[Path]:
        keys = await self.list(prefix)
        return await download_tree(keys, prefix, local_dir, self._download)

    async def _download(self, key: str, target: Path) -> None:
        source = self._path(key)
        await self._io("get", key, lambda: atomic_write(target, read_chunks(source)))
