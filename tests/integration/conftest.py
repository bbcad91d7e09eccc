"""Fixtures for the services of the local stack. Each starts its service through the project's own
hack/ script when it is not running yet (idempotent), so a single test can be run by hand too."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
RUN = Path(os.environ.get("BUZZ_RUN", "/var/tmp/buzz-operator"))
# set before anything imports kubernetes_asyncio, which reads KUBECONFIG once at import time
os.environ.setdefault("KUBECONFIG", str(RUN / "pki" / "kubeconfig"))

from tests.support.cluster import hack, kubeconfig, pg_dsn  # noqa: E402, F401  (the cluster and Postgres, shared)


class S3Server:
    """Connection settings of the S3 test server, and fresh buckets on it."""

    def __init__(self, endpoint: str, access_key: str, secret_key: str, region: str) -> None:
        self.endpoint, self.access_key, self.secret_key, self.region = endpoint, access_key, secret_key, region

    def __repr__(self) -> str:  # no secret in pytest's failure output
        return f"S3Server({self.endpoint}, region={self.region})"

    def fresh_bucket(self) -> str:
        """Create a new uniquely named bucket through the S3 API and return its name."""
        import uuid

        from buzz_operator.storage.s3_admin import ensure_bucket

        bucket = f"test-{uuid.uuid4().hex[:16]}"
        ensure_bucket(self.endpoint, bucket, access_key=self.access_key, secret_key=self.secret_key, region=self.region)
        return bucket


@pytest.fixture(scope="session")
def s3_server() -> S3Server:
    """The S3 server (hack/s3.sh: versitygw, which checks every request's signature; started
    when not running). Tests take a bucket each with `s3_server.fresh_bucket()`, so they never
    see each other's objects; the data is under $BUZZ_RUN/s3/data, gone with the run dir."""
    hack("s3.sh", "up")
    settings = dict(line.split("=", 1) for line in hack("s3.sh", "env").splitlines() if "=" in line)
    return S3Server(
        endpoint=settings["BUZZ_S3_ENDPOINT"],
        access_key=settings["BUZZ_S3_ACCESS_KEY"],
        secret_key=settings["BUZZ_S3_SECRET_KEY"],
        region=settings["BUZZ_S3_REGION"],
    )
