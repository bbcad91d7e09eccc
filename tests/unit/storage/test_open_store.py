"""open_store: URL parsing and the clear errors for bad storage URLs. Building an S3Store makes no
request, so these need no server."""

from __future__ import annotations

import pytest
from buzz_operator.storage import FileStore, S3Store, StorageError, open_store


def test_s3_url_with_prefix() -> None:
    store = open_store(
        "s3://bench-bucket/runs/2026", endpoint="http://127.0.0.1:59000", access_key="a", secret_key="s3cr3t"
    )
    assert isinstance(store, S3Store)
    assert (store.bucket, store.prefix) == ("bench-bucket", "runs/2026")
    assert store.url == "s3://bench-bucket/runs/2026"
    assert "s3cr3t" not in repr(store)


def test_s3_url_without_prefix() -> None:
    store = open_store("s3://bench-bucket/", endpoint="http://127.0.0.1:59000")
    assert isinstance(store, S3Store)
    assert store.prefix == ""
    assert store.url == "s3://bench-bucket"


def test_file_url() -> None:
    store = open_store("file:///var/lib/buzz/bundles")
    assert isinstance(store, FileStore)
    assert str(store.root) == "/var/lib/buzz/bundles"


@pytest.mark.parametrize(
    ("url", "kwargs", "message"),
    [
        ("", {}, "must be a non-empty string"),
        ("/abs/path", {}, "unsupported scheme ''"),
        ("gs://bucket/x", {}, "unsupported scheme 'gs'"),
        ("file://host/path", {}, "not a host"),
        ("file:relative", {}, "absolute path"),
        ("file:///tmp/x", {"endpoint": "http://127.0.0.1:1"}, "endpoint only apply to s3://"),
        ("file:///a/../b", {}, "must not contain '..'"),
        ("s3://", {}, "names no bucket"),
        ("s3://Bad_Bucket/x", {}, "not a valid S3 bucket name"),
        ("s3://bucket/a/../b", {}, "'..' segment"),
        ("s3://bucket/a//b", {}, "empty segment"),
        ("s3://bucket/x?versionId=1", {}, "query or fragment"),
        ("s3://bucket/x", {"endpoint": "127.0.0.1:59000"}, "must start with http:// or https://"),
    ],
)
def test_bad_urls_are_refused_clearly(url: str, kwargs: dict[str, str], message: str) -> None:
    with pytest.raises(StorageError) as caught:
        open_store(url, **kwargs)  # type: ignore[arg-type]
    assert message in str(caught.value)
