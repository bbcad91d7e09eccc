"""Map obstore's exceptions onto StorageUnavailable (retry) vs StorageError (permanent).

obstore folds most HTTP outcomes into GenericError, so the status code and S3 error code are read
from its message ("Server returned non-2xx status code: 503 ...", "<Code>NoSuchBucket</Code>").
A GenericError with no HTTP status (refused, reset, timed out, body cut off) counts as unavailable:
a permanent fault retried a few times costs a few backoffs, while a transient one taken for
permanent fails a trial that would have passed."""

from __future__ import annotations

import re

from obstore.exceptions import (
    GenericError,
    JoinError,
    NotSupportedError,
    PermissionDeniedError,
    UnauthenticatedError,
    UnknownConfigurationKeyError,
)

from .errors import CredentialsRejected, ObjectNotFound, StorageError, StorageUnavailable

_STATUS = re.compile(r"status code: (\d{3})")
_S3_CODE = re.compile(r"<Code>([A-Za-z]+)</Code>")
# S3 codes that mean "fix the credentials", whatever status they came with
_CREDENTIAL_CODES = {"InvalidAccessKeyId", "SignatureDoesNotMatch", "AccessDenied", "XAdminUserNotFound"}
# S3 codes that mean "fix the configuration", whatever status they came with
_PERMANENT_CODES = {
    "NoSuchBucket",
    "InvalidBucketName",
    "AuthorizationHeaderMalformed",
    "PermanentRedirect",
    "InvalidRequest",
}
# 408 Request Timeout and 429 Too Many Requests are the 4xx answers that invite a retry
_RETRYABLE_4XX = {408, 429}


def short_message(exc: BaseException) -> str:
    """obstore's message without its multi-line 'Debug source' dump."""
    return str(exc).split("\n\nDebug source:", 1)[0].strip()


def http_status(exc: BaseException) -> int | None:
    match = _STATUS.search(str(exc))
    return int(match.group(1)) if match else None


def s3_code(exc: BaseException) -> str | None:
    match = _S3_CODE.search(str(exc))
    return match.group(1) if match else None


def classify(exc: BaseException, *, op: str, key: str, where: str) -> StorageError:
    """The StorageError to raise for obstore's `exc` during `op` on `key` at store `where`."""
    code, status = s3_code(exc), http_status(exc)
    detail = f"s3 {op} {key!r} at {where}: {short_message(exc)}"
    if code == "NoSuchBucket":
        return StorageError(f"bucket missing — {detail}")
    # before the 404 test: versitygw answers an unknown access key 404 XAdminUserNotFound, which
    # obstore raises as FileNotFoundError, and a wrong key must not read as a missing object
    if isinstance(exc, PermissionDeniedError | UnauthenticatedError) or code in _CREDENTIAL_CODES:
        said = f" ({code})" if code else ""  # the server's word first: the detail may be cut
        return CredentialsRejected(f"credentials or permissions rejected{said} — {detail}")
    if isinstance(exc, FileNotFoundError):
        return ObjectNotFound(key)
    if code in _PERMANENT_CODES:
        return StorageError(f"configuration rejected — {detail}")
    if isinstance(exc, NotSupportedError | UnknownConfigurationKeyError):
        return StorageError(detail)
    if status is not None:
        if status >= 500 or status in _RETRYABLE_4XX:
            return StorageUnavailable(detail)
        return StorageError(detail)
    if isinstance(exc, GenericError | JoinError | ConnectionError | TimeoutError):
        return StorageUnavailable(detail)
    return StorageError(detail)
