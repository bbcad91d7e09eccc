"""A fresh bucket on the S3 test server for every test, opened as an S3Store under a prefix (so
the tests also cover keys being relative to the store's prefix)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from buzz_operator.storage import S3Store


@pytest.fixture
async def s3_store(s3_server: Any) -> AsyncIterator[S3Store]:
    store = S3Store(
        s3_server.fresh_bucket(),
        "bundles",
        endpoint=s3_server.endpoint,
        access_key=s3_server.access_key,
        secret_key=s3_server.secret_key,
        region=s3_server.region,
    )
    yield store
    # the server keeps objects for its whole life; drop this test's so large files do not pile up
    for key in await store.list():
        await store.delete(key)
