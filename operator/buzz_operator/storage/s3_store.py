"""S3Store: objects in an S3 bucket (s3://bucket/prefix) through obstore, the Rust object_store client.

obstore's blocking calls run in worker threads (asyncio.to_thread) rather than its *_async calls:
with obstore 0.12 a process that used the async calls aborts (SIGABRT) at interpreter exit about
one run in five — its tokio workers still hold Python objects while Python finalizes — which
would turn a green test run into a crash. The blocking calls showed no such abort in 100 runs.
The price: a cancelled call still finishes in its thread, bounded by the request timeout and the
retry budget below."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any, TypeVar

import obstore
from obstore.store import S3Store as _ObstoreS3

from .errors import ObjectNotFound, StorageError
from .keys import validate_key, validate_prefix
from .s3_errors import classify
from .tree import atomic_write, download_tree, local_files, upload_files

T = TypeVar("T")

# Parts of 8 MiB: above S3's 5 MiB minimum part size, so any file over one part goes multipart.
CHUNK_SIZE = 8 * 1024 * 1024
PART_CONCURRENCY = 8
# obstore's default retries for 3 minutes; the operator has its own backoff per trial step, so a
# dead server should surface here quickly as StorageUnavailable.
MAX_RETRIES = 3
RETRY_TIMEOUT = timedelta(seconds=30)
_BUCKET = re.compile(r"^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$")


def validate_bucket(bucket: object) -> str:
    if not isinstance(bucket, str) or not _BUCKET.match(bucket) or ".." in bucket:
        raise StorageError(
            f"bucket {bucket!r} is not a valid S3 bucket name (3-63 characters: lowercase letters, digits, '.', '-')"
        )
    return bucket


class S3Store:
    """Objects under `prefix` in `bucket`. `endpoint` selects an S3-compatible server (path-style
    requests, plain http allowed); without it the AWS default endpoint for `region` is used.
    Credentials left None are taken from the environment (AWS_ACCESS_KEY_ID, ...)."""

    def __init__(
        self,
        bucket: str,
        prefix: str = "",
        *,
        endpoint: str | None = None,
        access_key: str | None = None,
        secret_key: str | None = None,
        region: str | None = None,
        max_retries: int = MAX_RETRIES,
        retry_timeout: timedelta = RETRY_TIMEOUT,
    ) -> None:
        self.bucket = validate_bucket(bucket)
        self.prefix = validate_prefix(prefix.strip("/"), field="s3 prefix")
        self.endpoint = endpoint
        # kept only to scrub it from error messages; never logged, never in repr
        self._secret = secret_key
        config: dict[str, Any] = {}
        if endpoint:
            if not endpoint.startswith(("http://", "https://")):
                raise StorageError(f"endpoint {endpoint!r} must start with http:// or https://")
            # S3-compatible servers (versitygw, MinIO) are addressed by host:port, not bucket.host
            config.update(endpoint=endpoint.rstrip("/"), virtual_hosted_style_request=False)
        for name, value in (
            ("access_key_id", access_key),
            ("secret_access_key", secret_key),
            ("region", region),
        ):
            if value:
                config[name] = value
        self.raw = _ObstoreS3(
            self.bucket,
            prefix=self.prefix or None,
            config=config,
            client_options={
                "allow_http": bool(endpoint and endpoint.startswith("http://")),
                "connect_timeout": "5s",
                "timeout": "300s",
            },
            retry_config={"max_retries": max_retries, "retry_timeout": retry_timeout},
        )

    @property
    def url(self) -> str:
        return f"s3://{self.bucket}/{self.prefix}" if self.prefix else f"s3://{self.bucket}"

    def __repr__(self) -> str:
        return f"S3Store({self.url}, endpoint={self.endpoint or 'aws'})"

    def _where(self) -> str:
        return f"{self.url} ({self.endpoint or 'aws'})"

    async def _call(self, op: str, key: str, fn: Callable[[], T]) -> T:
        try:
            return await asyncio.to_thread(fn)
        except StorageError:
            raise
        except Exception as exc:
            error = classify(exc, op=op, key=key, where=self._where())
            if self._secret and self._secret in str(error):
                error.args = (str(error).replace(self._secret, "***"),)
            raise error from exc

    async def put(self, key: str, data: bytes) -> None:
        key = validate_key(key)
        await self._call("put", key, lambda: obstore.put(self.raw, key, bytes(data), chunk_size=CHUNK_SIZE))

    async def put_file(self, key: str, path: Path | str) -> None:
        key, source = validate_key(key), Path(path)

        def upload() -> None:
            if not source.is_file():
                raise StorageError(f"put_file: path {str(source)!r} is not a regular file")
            obstore.put(self.raw, key, source, chunk_size=CHUNK_SIZE, max_concurrency=PART_CONCURRENCY)

        await self._call("put", key, upload)

    async def get(self, key: str) -> bytes:
        key = validate_key(key)
        return await self._call("get", key, lambda: bytes(obstore.get(self.raw, key).bytes()))

    async def exists(self, key: str) -> bool:
        key = validate_key(key)
        try:
            await self._call("head", key, lambda: obstore.head(self.raw, key))
            return True
        except ObjectNotFound:
            pass
        # HEAD answers a bare 404 both for a missing key and a missing bucket; a listing tells
        # them apart (NoSuchBucket), so a deleted bucket is an error, not "trial not committed".
        await self._call("list", key, lambda: obstore.list_with_delimiter(self.raw, key))
        return False

    async def list(self, prefix: str = "") -> list[str]:
        prefix = validate_prefix(prefix)
        metas = await self._call("list", prefix, lambda: obstore.list(self.raw, prefix or None).collect())
        return sorted(meta["path"] for meta in metas)

    async def delete(self, key: str) -> None:
        key = validate_key(key)
        await self._call("delete", key, lambda: obstore.delete(self.raw, key))

    async def put_dir(self, prefix: str, local_dir: Path | str) -> list[str]:
        validate_prefix(prefix)
        files = await asyncio.to_thread(local_files, local_dir)
        return await upload_files(self.put_file, prefix, files)

    async def get_dir(self, prefix: str, local_dir: Path | str) -> list[Path]:
        keys = await self.list(prefix)
        return await download_tree(keys, prefix, local_dir, self._download)

    async def _download(self, key: str, target: Path) -> None:
        # streamed into a temp file beside the target: a large object never sits whole in memory
        await self._call("get", key, lambda: atomic_write(target, obstore.get(self.raw, key)))
