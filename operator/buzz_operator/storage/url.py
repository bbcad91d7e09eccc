"""open_store: a store URL (file:///abs/path or s3://bucket/prefix) to an ObjectStore."""

from __future__ import annotations

import urllib.parse
from pathlib import Path

from .errors import StorageError
from .file_store import FileStore
from .s3_store import S3Store
from .store import ObjectStore


def open_store(
    url: str,
    *,
    endpoint: str | None = None,
    access_key: str | None = None,
    secret_key: str | None = None,
    region: str | None = None,
) -> ObjectStore:
    """The store `url` names. S3 settings left None fall back to the AWS_* environment; they are
    rejected for file:// URLs, where they would be silently meaningless."""
    if not isinstance(url, str) or not url:
        raise StorageError("storage url must be a non-empty string (file:///abs/path or s3://bucket/prefix)")
    parts = urllib.parse.urlsplit(url)
    if parts.query or parts.fragment:
        raise StorageError(f"storage url {url!r} must not have a query or fragment")
    if parts.scheme == "file":
        if parts.netloc not in ("", "localhost"):
            raise StorageError(
                f"storage url {url!r}: file URLs name a local path (file:///abs/path), not a host"
            )
        given = [
            n
            for n, v in (
                ("endpoint", endpoint),
                ("access_key", access_key),
                ("secret_key", secret_key),
                ("region", region),
            )
            if v is not None
        ]
        if given:
            raise StorageError(
                f"storage url {url!r} is a file URL; {', '.join(given)} only apply to s3:// URLs"
            )
        path = urllib.parse.unquote(parts.path)
        if not path.startswith("/"):
            raise StorageError(f"storage url {url!r} must hold an absolute path (file:///abs/path)")
        return FileStore(Path(path))
    if parts.scheme == "s3":
        if not parts.netloc:
            raise StorageError(f"storage url {url!r} names no bucket (s3://bucket/prefix)")
        return S3Store(
            parts.netloc,
            urllib.parse.unquote(parts.path).strip("/"),
            endpoint=endpoint,
            access_key=access_key,
            secret_key=secret_key,
            region=region,
        )
    raise StorageError(f"storage url {url!r} has unsupported scheme {parts.scheme!r}; use file:// or s3://")
