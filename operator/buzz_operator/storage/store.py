"""The object store interface every backend implements (file:// and s3://)."""

from __future__ import annotations

from pathlib import Path
from typing import Protocol, runtime_checkable


@runtime_checkable
class ObjectStore(Protocol):
    """Async object store. Keys are validated relative paths (see keys.py); a prefix names a
    'directory' of keys ('' for the whole store). Every operation raises StorageUnavailable for
    transient backend trouble and StorageError for permanent trouble."""

    @property
    def url(self) -> str:
        """Where the store points (never includes credentials): safe to log and to show."""
        ...

    async def put(self, key: str, data: bytes) -> None:
        """Write `data` at `key`, replacing any object there; readers see old or new, never half."""
        ...

    async def put_file(self, key: str, path: Path | str) -> None:
        """Upload the local file `path` to `key` (multipart where the backend has it)."""
        ...

    async def get(self, key: str) -> bytes:
        """The bytes at `key`; ObjectNotFound when there is none."""
        ...

    async def exists(self, key: str) -> bool:
        """Whether an object is stored at `key`."""
        ...

    async def list(self, prefix: str = "") -> list[str]:
        """Every key under the directory `prefix`, recursively, sorted."""
        ...

    async def delete(self, key: str) -> None:
        """Remove the object at `key`; deleting a missing key is not an error."""
        ...

    async def put_dir(self, prefix: str, local_dir: Path | str) -> list[str]:
        """Upload every regular file under `local_dir` to `prefix/<relative path>`; the keys, sorted."""
        ...

    async def get_dir(self, prefix: str, local_dir: Path | str) -> list[Path]:
        """Download every object under `prefix` into `local_dir`; the local paths written, sorted."""
        ...
