"""Fixtures for the fault tests: the e2e tier's (cluster, a namespace and relay database per
test, the dev relay in the cluster, the sweep's Secrets), plus private Postgres and S3
instances a test may stop and start without touching the shared ones other sessions use."""

from __future__ import annotations

import os
import shutil
import subprocess
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support import cluster as cluster_fixtures
from tests.support.corpus import load_corpus
from tests.support.ports import free_port

ROOT = Path(__file__).resolve().parents[2]


_e2e = cluster_fixtures
corpus = load_corpus()

# the shared cluster fixtures, as the e2e tier uses them (pytest finds fixtures among a conftest's names)
kubeconfig = _e2e.kubeconfig
pg_dsn = _e2e.pg_dsn
crds = _e2e.crds
kube = _e2e.kube
namespace = _e2e.namespace
relay_db = _e2e.relay_db
cluster_relay = _e2e.cluster_relay
sweep_secrets = _e2e.sweep_secrets
local_registry = _e2e.local_registry
make_sweep = _e2e.make_sweep
sweep_body = _e2e.sweep_body
host_ip = _e2e.host_ip
with_database = _e2e.with_database
ClusterRelay = _e2e.ClusterRelay
RELAY_URL = _e2e.RELAY_URL


@dataclass
class PrivateService:
    """One of hack/'s services started under its own BUZZ_RUN and port: stop/start touch it only."""

    script: str
    run: Path
    port_env: str
    port: int

    def _env(self) -> dict[str, str]:
        return {**os.environ, "BUZZ_RUN": str(self.run), self.port_env: str(self.port)}

    def hack(self, *args: str) -> str:
        return subprocess.run(["bash", str(ROOT / "hack" / self.script), *args], check=True, capture_output=True,
                              text=True, env=self._env(), stdin=subprocess.DEVNULL).stdout.strip()


@pytest.fixture
def private_postgres() -> Iterator[PrivateService]:
    """A PostgreSQL cluster of our own (hack/postgres.sh under a private BUZZ_RUN and port)."""
    service = PrivateService("postgres.sh", Path(f"/var/tmp/buzz-faults-{uuid.uuid4().hex[:8]}"), "BUZZ_PG_PORT",
                             free_port())
    service.hack("up")
    try:
        yield service
    finally:
        subprocess.run(["bash", str(ROOT / "hack" / "postgres.sh"), "down"], env=service._env(), capture_output=True,
                       stdin=subprocess.DEVNULL)
        shutil.rmtree(service.run, ignore_errors=True)


@pytest.fixture
def private_s3() -> Iterator[PrivateService]:
    """An S3 server of our own (hack/s3.sh under a private BUZZ_RUN and port)."""
    service = PrivateService("s3.sh", Path(f"/var/tmp/buzz-faults-{uuid.uuid4().hex[:8]}"), "BUZZ_S3_PORT", free_port())
    service.hack("up")
    try:
        yield service
    finally:
        subprocess.run(["bash", str(ROOT / "hack" / "s3.sh"), "down"], env=service._env(), capture_output=True,
                       stdin=subprocess.DEVNULL)
        shutil.rmtree(service.run, ignore_errors=True)


TERMINAL = ("Succeeded", "Failed")


def operator_args(namespace: str) -> list[str]:
    """kopf's own CLI arguments for one in-process operator scoped to the test's namespace."""
    return ["run", "--standalone", "-n", namespace, "-m", "buzz_operator.handlers"]


async def list_trials(kube, namespace: str) -> list[dict]:  # type: ignore[no-untyped-def, type-arg]
    from buzz_operator.api.common import GROUP, VERSION

    listed = await kube.custom.list_namespaced_custom_object(GROUP, VERSION, namespace, "buzztrials")
    return list(listed["items"])


def settled(trial: dict) -> bool:  # type: ignore[type-arg]
    status = trial.get("status") or {}
    return status.get("phase") in TERMINAL and any(c["type"] == "Released" for c in status.get("conditions", []))


async def wait_for(predicate, timeout_s: float, what: str, poll: float = 1.0):  # type: ignore[no-untyped-def]
    """Await `predicate()` (a coroutine function) until it returns something truthy."""
    import asyncio
    import time

    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if value := await predicate():
            return value
        await asyncio.sleep(poll)
    raise AssertionError(f"timed out after {timeout_s:.0f}s waiting for {what}")
