"""Fixtures for the trial pod tests: a fresh namespace per test, the BuzzTrial CRDs, a fresh
Postgres database per test, and the dev relay running in the cluster as a Pod behind a
Service (reached from the host by its ClusterIP while presenting the canonical Host)."""

from __future__ import annotations

import asyncio
import secrets
import socket
import subprocess
import uuid
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import asyncpg
import pytest
from buzz_operator.api.trial import BuzzTrialSpec, TrialResources
from buzz_operator.condition import ExperimentManifest
from buzz_operator.dataset import load_task
from buzz_operator.kube import devrelay
from buzz_operator.kube.client import Kube, connect
from buzz_operator.relay.nostr import Keypair
from buzz_operator.relay.tenant import healthcheck
from buzz_operator.relay.tenant_models import ProvisioningError, RelayTarget
from buzz_operator.trial.deadlines import step_deadlines

ROOT = Path(__file__).resolve().parents[3]
RELAY_URL = "ws://localhost:3600"


def host_ip() -> str:
    """The address pods reach the host on (hack/lib.sh host_ip): the source of the default route."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        sock.connect(("1.1.1.1", 80))  # UDP connect sends nothing; it only picks the route
        return str(sock.getsockname()[0])


def with_database(dsn: str, database: str, *, host: str | None = None) -> str:
    parts = urlsplit(dsn)
    netloc = parts.netloc
    if host is not None:
        userinfo, _, hostport = netloc.rpartition("@")
        port = hostport.rsplit(":", 1)[1] if ":" in hostport else "5432"
        netloc = f"{userinfo}@{host}:{port}"
    return urlunsplit((parts.scheme, netloc, f"/{database}", parts.query, parts.fragment))


def kubectl(*args: str) -> str:
    return subprocess.run(["kubectl", *args], check=True, capture_output=True, text=True).stdout


@pytest.fixture(scope="session")
def crds(kubeconfig: str) -> None:
    kubectl("apply", "-f", str(ROOT / "crds"))
    for name in ("buzzsweeps.bench.buzz.dev", "buzztrials.bench.buzz.dev"):
        kubectl("wait", "--for=condition=Established", f"crd/{name}", "--timeout=60s")


@pytest.fixture
async def kube(kubeconfig: str) -> AsyncIterator[Kube]:
    client = await connect()
    yield client
    await client.close()


@pytest.fixture
def namespace(kubeconfig: str) -> Iterator[str]:
    name = f"pod-{uuid.uuid4().hex[:8]}"
    kubectl("create", "namespace", name)
    yield name
    subprocess.run(["kubectl", "delete", "namespace", name, "--wait=false"], capture_output=True)


@pytest.fixture
def relay_db(pg_dsn: str) -> Iterator[str]:
    name = f"podrelay_{secrets.token_hex(6)}"

    async def admin(sql: str) -> None:
        conn = await asyncpg.connect(pg_dsn)
        try:
            await conn.execute(sql)
        finally:
            await conn.close()

    asyncio.run(admin(f'CREATE DATABASE "{name}"'))
    yield name
    asyncio.run(admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))


@dataclass(frozen=True)
class ClusterRelay:
    relay: devrelay.DevRelay
    target: RelayTarget  # what the test process (on the host) uses: ClusterIP + canonical Host
    owner: Keypair


@pytest.fixture
async def cluster_relay(kube: Kube, namespace: str, relay_db: str, pg_dsn: str) -> ClusterRelay:
    owner, relay_key = Keypair.generate(), Keypair.generate()
    relay = await devrelay.deploy(
        kube, namespace, name="relay", relay_url=RELAY_URL, owner_pubkey=owner.pubkey_hex,
        relay_secret_hex=relay_key.secret_hex, database_url=with_database(pg_dsn, relay_db, host=host_ip()),
    )
    target = RelayTarget(url=RELAY_URL, owner_secret_hex=owner.secret_hex,
                         pg_dsn=with_database(pg_dsn, relay_db), connect_url=f"ws://{relay.target}")
    # kube-proxy programs the ClusterIP a moment after the Endpoints appear
    for _ in range(120):
        try:
            await healthcheck(target)
            break
        except ProvisioningError:
            await asyncio.sleep(0.5)
    await healthcheck(target)
    return ClusterRelay(relay, target, owner)


def trial_spec(task_name: str, manifest: ExperimentManifest) -> BuzzTrialSpec:
    task = load_task(ROOT / "tasks" / task_name)
    return BuzzTrialSpec(
        sweep_name="by-hand", task=task.name, task_digest=task.digest, attempt=1,
        condition_hash=manifest.sha256, image=task.image_ref("docker.io/buzz-tasks", "builtin"),
        stack_image="docker.io/buzz/stack:dev", operator_image="docker.io/buzz/operator:dev",
        image_pull_policy="Never", endpoints=["standin/oracle"],
        resources=TrialResources(cpus=0.5, memory_mb=256),
        deadlines=step_deadlines(agent_timeout_sec=60, verifier_timeout_sec=30, build_timeout_sec=120,
                                 manifest_timeout_seconds=manifest.trial_budget.timeout_seconds, multiplier=1.0),
    )


@pytest.fixture
def make_trial_spec() -> object:
    """`make_trial_spec(task_name, manifest)` → a BuzzTrialSpec for a builtin task image."""
    return trial_spec


def standin_condition(
    policy: str = "oracle", *, team: bool = False, timeout_seconds: int | None = None
) -> tuple[dict[str, Any], dict[str, Any]]:
    """(manifest, endpoint config) of the solo (or lead + worker) stand-in condition with every
    seat on `standin/<policy>`."""
    import yaml

    manifest = yaml.safe_load((ROOT / "manifests" / ("standin-team.yaml" if team else "standin-oracle.yaml")).read_text())
    endpoint = f"standin/{policy}"
    manifest["condition"] = f"standin-{policy}{'-team' if team else ''}"
    for entry in manifest["roster"]:
        entry["endpoint"] = endpoint
    manifest["prices"] = {endpoint: next(iter(manifest["prices"].values()))}
    if timeout_seconds is not None:
        manifest["trial_budget"]["timeout_seconds"] = timeout_seconds
    return manifest, {endpoint: {"provider": "standin", "api_key_env": "STANDIN_API_KEY", "env": {}}}


def sweep_body(
    name: str, store_url: str, task: str, policy: str = "oracle", **condition: Any
) -> dict[str, object]:
    """A BuzzSweep (not reconciled here: the test drives the trial) naming the test's relay."""
    from buzz_operator.api.common import GROUP, VERSION

    manifest, endpoints = standin_condition(policy, **condition)
    return {
        "apiVersion": f"{GROUP}/{VERSION}", "kind": "BuzzSweep", "metadata": {"name": name},
        "spec": {
            "condition": {"inline": manifest},
            "endpoints": {"config": endpoints, "secretRef": {"name": "api-keys"}},
            "dataset": {"builtin": {}}, "include": [task], "attempts": 1,
            "relay": {"url": RELAY_URL, "serviceRef": {"name": "relay", "port": 3600},
                      "ownerKeySecretRef": {"name": "relay-owner", "key": "owner-key"},
                      "postgresDsnSecretRef": {"name": "relay-owner", "key": "postgres-dsn"}},
            "storage": {"url": store_url}, "imagePullPolicy": "Never",
        },
    }


@pytest.fixture
def make_sweep() -> object:
    return sweep_body


@pytest.fixture
def make_condition() -> object:
    return standin_condition


@pytest.fixture
async def sweep_secrets(kube: Kube, namespace: str, cluster_relay: ClusterRelay) -> str:
    """Creates `relay-owner` (owner-key, postgres-dsn) and `api-keys` (STANDIN_API_KEY); returns the key."""
    from buzz_operator.kube import objects

    api_key = f"standin-{secrets.token_hex(16)}"
    await objects.create_secret(kube, namespace, objects.secret_body(
        "relay-owner", {"owner-key": cluster_relay.owner.secret_hex, "postgres-dsn": cluster_relay.target.pg_dsn},
        labels={}, owner=None))
    await objects.create_secret(kube, namespace, objects.secret_body(
        "api-keys", {"STANDIN_API_KEY": api_key}, labels={}, owner=None))
    return api_key
