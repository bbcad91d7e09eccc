"""What the cluster benchmarks (trial.py, scale.py) share: a namespace of their own with the dev
relay behind a Service on a fresh Postgres database, and the Secrets a BuzzSweep refers to —
the same setup as tests/integration/operator/conftest.py, without pytest."""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import shutil
import subprocess
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import asyncpg
import yaml
from buzz_operator.api.common import GROUP, VERSION
from buzz_operator.api.labels import SETTLED
from buzz_operator.dev import deploy_relay
from buzz_operator.dev.localstack import host_ip, with_database
from buzz_operator.kube import objects
from buzz_operator.kube.client import Kube
from buzz_operator.relay.nostr import Keypair
from buzz_operator.relay.tenant import await_healthy
from buzz_operator.relay.tenant_models import RelayTarget

ROOT = Path(__file__).resolve().parents[1]
RELAY_URL = "ws://localhost:3600"


def kubectl(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    # cluster-up links $RUN/bin to the running cluster's binaries; its kubectl matches the server
    run = Path(os.environ.get("BUZZ_RUN", "/var/tmp/buzz-operator"))
    binary = shutil.which("kubectl", path=str(run / "bin")) or "kubectl"
    return subprocess.run([binary, *args], check=check, capture_output=True, text=True)


def pg_dsn() -> str:
    if dsn := os.environ.get("BUZZ_PG_DSN"):
        return dsn
    return subprocess.run(["bash", str(ROOT / "hack" / "postgres.sh"), "dsn"], check=True,
                          capture_output=True, text=True).stdout.strip()


@dataclass(frozen=True)
class Stage:
    namespace: str
    target: RelayTarget  # ClusterIP + canonical Host, as the operator on the host dials it
    api_key: str


def release_finalizers(namespace: str, kinds: tuple[str, ...]) -> None:
    """kopf's finalizers would hold the namespace in Terminating once the operator is gone. A
    settled trial has none left (its settling took kopf's off), so only unsettled ones are read."""
    for kind in kinds:
        only = ["-l", f"!{SETTLED}"] if kind == "buzztrials" else []
        for obj in kubectl("-n", namespace, "get", kind, *only, "-o", "name", check=False).stdout.split():
            kubectl("-n", namespace, "patch", obj, "--type=merge", "-p", '{"metadata":{"finalizers":null}}',
                    check=False)


@contextlib.asynccontextmanager
async def stage(kube: Kube, prefix: str, *, finalized: tuple[str, ...] = ("buzztrials", "buzzsweeps")
                ) -> AsyncIterator[Stage]:
    """A fresh namespace with the dev relay, its database and the sweep's Secrets; all removed on
    exit (the namespace in the background: the apiserver deletes its objects by collection).

    `finalized`: the kinds whose kopf finalizers are released first, one object at a time."""
    namespace = f"{prefix}-{uuid.uuid4().hex[:6]}"
    database = f"bench_{secrets.token_hex(5)}"
    admin_dsn = pg_dsn()
    kubectl("apply", "-f", str(ROOT / "crds"))
    # served only once Established: on a cluster just brought up, a list right after the apply
    # is a 404, and a benchmark's watch started then died with it (bench/scale.py sat at 0 trials)
    kubectl("wait", "--for=condition=Established", "--timeout=60s", "-f", str(ROOT / "crds"))
    kubectl("create", "namespace", namespace)
    admin = await asyncpg.connect(admin_dsn)
    await admin.execute(f'CREATE DATABASE "{database}"')
    try:
        owner, relay_key = Keypair.generate(), Keypair.generate()
        relay = await deploy_relay.deploy(
            kube, namespace, name="relay", relay_url=RELAY_URL, owner_pubkey=owner.pubkey_hex,
            relay_secret_hex=relay_key.secret_hex,
            database_url=with_database(admin_dsn, database, host=host_ip()))
        target = RelayTarget(url=RELAY_URL, owner_secret_hex=owner.secret_hex,
                             pg_dsn=with_database(admin_dsn, database), connect_url=f"ws://{relay.target}")
        await await_healthy(target, timeout_s=60)
        api_key = f"standin-{secrets.token_hex(16)}"
        await objects.create_secret(kube, namespace, objects.secret_body(
            "relay-owner", {"owner-key": owner.secret_hex, "postgres-dsn": target.pg_dsn}, labels={}, owner=None))
        await objects.create_secret(kube, namespace, objects.secret_body(
            "api-keys", {"STANDIN_API_KEY": api_key}, labels={}, owner=None))
        yield Stage(namespace, target, api_key)
    finally:
        release_finalizers(namespace, finalized)
        kubectl("delete", "namespace", namespace, "--wait=false", check=False)
        await admin.execute(f'DROP DATABASE IF EXISTS "{database}" WITH (FORCE)')
        await admin.close()


def sweep_body(name: str, *, store_url: str, tasks: list[str] | None = None, attempts: int = 1,
               condition: str = "standin-oracle.yaml", **spec: object) -> dict[str, Any]:
    """A BuzzSweep over builtin tasks with an inline stand-in condition and the stage's relay."""
    manifest = yaml.safe_load((ROOT / "manifests" / condition).read_text())
    endpoints = json.loads((ROOT / "manifests" / "endpoints" / "standin.json").read_text())
    body: dict[str, Any] = {
        "apiVersion": f"{GROUP}/{VERSION}", "kind": "BuzzSweep", "metadata": {"name": name},
        "spec": {
            "condition": {"inline": manifest},
            "endpoints": {"config": endpoints, "secretRef": {"name": "api-keys"}},
            "dataset": {"builtin": {}}, "attempts": attempts,
            "relay": {"url": RELAY_URL, "serviceRef": {"name": "relay", "port": 3600},
                      "ownerKeySecretRef": {"name": "relay-owner", "key": "owner-key"},
                      "postgresDsnSecretRef": {"name": "relay-owner", "key": "postgres-dsn"}},
            "storage": {"url": store_url}, "imagePullPolicy": "Never", **spec,
        },
    }
    if tasks:
        body["spec"]["include"] = tasks
    return body
