"""A view of a store under one of its prefixes: the same backend, every key under `<prefix>/`.

The quarantine of bundles with suspected secrets (spec.storage.quarantinePrefix) is the sweep's
own store seen under its quarantine prefix, so the whole layout (storage/layout.py) and the
result.json-last upload rule (storage/bundle.py) apply there unchanged."""

from __future__ import annotations

from pathlib import Path

from .keys import join_key, relative_key, validate_key, validate_prefix
from .store import ObjectStore


class PrefixedStore:
    """`inner` with every key under `prefix` (a validated relative key, not empty)."""

    def __init__(self, inner: ObjectStore, prefix: str) -> None:
        self.inner = inner
        self.prefix = validate_key(prefix, field="prefix")

    @property
    def url(self) -> str:
        return f"{self.inner.url.rstrip('/')}/{self.prefix}"

    def _key(self, key: str) -> str:
        return join_key(self.prefix, validate_key(key))

    async def put(self, key: str, data: bytes) -> None:
        await self.inner.put(self._key(key), data)

    async def put_file(self, key: str, path: Path | str) -> None:
        await self.inner.put_file(self._key(key), path)

    async def get(self, key: str) -> bytes:
        return await self.inner.get(self._key(key))

    async def exists(self, key: str) -> bool:
        return await self.inner.exists(self._key(key))

    async def list(self, prefix: str = "") -> list[str]:
        base = join_key(self.prefix, validate_prefix(prefix))
        return [relative_key(self.prefix, key) for key in await self.inner.list(base)]

    async def delete(self, key: str) -> None:
        await self.inner.delete(self._key(key))

    async def put_dir(self, prefix: str, local_dir: Path | str) -> list[str]:
        base = join_key(self.prefix, validate_prefix(prefix))
        return [relative_key(self.prefix, key) for key in await self.inner.put_dir(base, local_dir)]

    async def get_dir(self, prefix: str, local_dir: Path | str) -> list[Path]:
        return await self.inner.get_dir(join_key(self.prefix, validate_prefix(prefix)), local_dir)
