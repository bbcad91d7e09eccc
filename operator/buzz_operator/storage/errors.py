"""Storage failures, split the way the operator classifies trial failures: `StorageUnavailable` is an
infra condition worth retrying with backoff (server down, 5xx, timeout, disk I/O); every other
`StorageError` is permanent until someone changes configuration (bad credentials, missing bucket,
invalid key). Catch `StorageUnavailable` before `StorageError`: it is a subclass, so code that only
wants "did storage fail" can catch the base class."""

from __future__ import annotations


class StorageError(Exception):
    """A permanent storage failure: retrying the same request will fail the same way."""

    retryable = False


class StorageUnavailable(StorageError):
    """The store could not be reached or failed transiently; the same request may succeed later."""

    retryable = True


class CredentialsRejected(StorageError):
    """The server refused the request's signature or its access key (403 SignatureDoesNotMatch,
    InvalidAccessKeyId, AccessDenied): the credentials are what to fix, not the URL."""


class InvalidKey(StorageError, ValueError):
    """An object key (or prefix, or trial/sweep name used in one) that is unsafe or malformed."""


class ObjectNotFound(StorageError, KeyError):
    """`get` of a key that holds no object."""

    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key

    def __str__(self) -> str:
        return f"no object at key {self.key!r}"


class AlreadyCommitted(StorageError):
    """A write into a trial bundle whose result.json (the commit marker) is already present."""
