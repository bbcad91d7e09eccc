"""Classification of obstore failures into StorageUnavailable (retry) and StorageError (permanent).

The integration tests produce the failures a real server can (connection refused, NoSuchBucket).
The exceptions built here are fakes for the ones the test server (versitygw) cannot be made to
produce — it never answers 5xx or 429 on demand — shaped like obstore's real messages; the
refused credentials are also produced by the real server (tests/integration/storage)."""

from __future__ import annotations

import pytest
from buzz_operator.storage.errors import CredentialsRejected, ObjectNotFound, StorageError, StorageUnavailable
from buzz_operator.storage.s3_errors import classify, http_status, s3_code, short_message
from obstore.exceptions import GenericError, InvalidPathError, PermissionDeniedError, UnauthenticatedError


def status_error(status: int, reason: str, code: str = "") -> GenericError:
    body = f"<Error><Code>{code}</Code></Error>" if code else ""
    return GenericError(
        f"Generic S3 error: Error performing PUT http://s3:9000/b/k in 3ms - Server returned non-2xx status code: "
        f"{status} {reason}: {body}\n\nDebug source:\nGeneric {{ ... }}"
    )


def kind(exc: BaseException) -> type[StorageError]:
    return type(classify(exc, op="put", key="k", where="s3://b (http://s3:9000)"))


@pytest.mark.parametrize(
    "exc",
    [
        status_error(500, "Internal Server Error", "InternalError"),
        status_error(503, "Service Unavailable", "SlowDown"),
        status_error(429, "Too Many Requests"),
        status_error(408, "Request Timeout"),
        GenericError(
            "Generic S3 error: Error performing GET http://s3:9000/b/k - HTTP error: error sending request"
        ),
        GenericError("Generic S3 error: Error performing GET http://s3:9000/b/k - operation timed out"),
        ConnectionResetError("reset by peer"),
        TimeoutError("timed out"),
    ],
)
def test_transient_failures_are_unavailable(exc: BaseException) -> None:
    assert kind(exc) is StorageUnavailable


@pytest.mark.parametrize(
    "exc",
    [
        status_error(400, "Bad Request", "AuthorizationHeaderMalformed"),
        status_error(400, "Bad Request"),
        InvalidPathError("bad path"),
    ],
)
def test_configuration_failures_are_permanent(exc: BaseException) -> None:
    assert kind(exc) is StorageError


@pytest.mark.parametrize(
    "exc",
    [
        status_error(403, "Forbidden", "InvalidAccessKeyId"),
        status_error(403, "Forbidden", "SignatureDoesNotMatch"),
        PermissionDeniedError("Permission denied"),
        UnauthenticatedError("Unauthenticated"),
        # a 5xx that carries a credentials error code is still the credentials' fault
        status_error(500, "Internal Server Error", "AccessDenied"),
    ],
)
def test_refused_credentials_are_named_apart(exc: BaseException) -> None:
    """Permanent, and their own kind, so preflight can name spec.storage.credentialsSecretRef."""
    assert kind(exc) is CredentialsRejected and not classify(exc, op="put", key="k", where="s3://b").retryable


def test_missing_bucket_is_permanent_and_says_so() -> None:
    error = classify(
        FileNotFoundError(
            "Object at location k not found: ... 404 Not Found: <Error><Code>NoSuchBucket</Code></Error>"
        ),
        op="put",
        key="k",
        where="s3://b",
    )
    assert type(error) is StorageError
    assert str(error).startswith("bucket missing")


def test_missing_key_is_object_not_found() -> None:
    error = classify(FileNotFoundError("Object at location k not found"), op="get", key="a/k", where="s3://b")
    assert isinstance(error, ObjectNotFound)
    assert error.key == "a/k"


def test_message_parts() -> None:
    exc = status_error(503, "Service Unavailable", "SlowDown")
    assert http_status(exc) == 503
    assert s3_code(exc) == "SlowDown"
    assert "Debug source" not in short_message(exc)
    assert "Debug source" not in str(classify(exc, op="put", key="k", where="s3://b"))


async def test_s3_store_scrubs_its_secret_from_error_messages() -> None:
    """Fake: a backend error that quotes the secret (obstore's do not; this guards the scrubbing)."""
    from buzz_operator.storage import S3Store

    store = S3Store("bucket", endpoint="http://127.0.0.1:9", access_key="ak", secret_key="s3cr3t-value")

    def leaky() -> None:
        raise GenericError("Generic S3 error: status code: 400 Bad Request: key s3cr3t-value rejected")

    with pytest.raises(StorageError) as caught:
        await store._call("put", "k", leaky)
    assert "s3cr3t-value" not in str(caught.value)
    assert "***" in str(caught.value)


def test_an_unknown_access_key_is_not_a_missing_object() -> None:
    """versitygw answers a request signed with an unknown access key 404 XAdminUserNotFound,
    which obstore raises as FileNotFoundError (seen against the real server)."""
    missing_user = FileNotFoundError(
        "Object at location k not found: Error performing GET http://s3:9000/b/k - Server returned non-2xx "
        "status code: 404 Not Found: <Error><Code>XAdminUserNotFound</Code></Error>")
    assert kind(missing_user) is CredentialsRejected
    assert kind(FileNotFoundError("Object at location k not found: 404 Not Found")) is ObjectNotFound
