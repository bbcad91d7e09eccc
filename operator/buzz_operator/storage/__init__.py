"""Object storage for trial bundles: file:// (embedded default) and s3:// behind one async
ObjectStore interface, the Harbor-compatible layout, and result.json-last bundle uploads."""

from .bundle import is_committed, recorded_failed_tries, upload_bundle, upload_failed_try
from .errors import (
    AlreadyCommitted,
    CredentialsRejected,
    InvalidKey,
    ObjectNotFound,
    StorageError,
    StorageUnavailable,
)
from .file_store import FileStore
from .keys import validate_key, validate_prefix
from .s3_store import S3Store
from .store import ObjectStore
from .url import open_store

__all__ = [
    "AlreadyCommitted",
    "CredentialsRejected",
    "FileStore",
    "InvalidKey",
    "ObjectNotFound",
    "ObjectStore",
    "S3Store",
    "StorageError",
    "StorageUnavailable",
    "is_committed",
    "open_store",
    "recorded_failed_tries",
    "upload_bundle",
    "upload_failed_try",
    "validate_key",
    "validate_prefix",
]
