"""Whole sweeps through the operator (KopfRunner on the host) against relays dialled as written,
with no forwarder in the trial pods (docs/relay-urls.md):

- ws://<ClusterIP>:3600 with no serviceRef: the dev relay in the cluster bound to its Service's
  address;
- wss://<host IP>:<port> with spec.relay.caBundle from a ConfigMap: the dev relay on the host
  behind TLS, its certificate signed by a private CA made for the test — the operator's tenant
  client and readiness checks trust it, and so do the agents, through their CA file.

Each runs the oracle over user-mention to a scored, bundled end.
"""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path
from typing import Any

from buzz_operator.kube import objects
from buzz_operator.kube.client import Kube
from kopf.testing import KopfRunner

from tests.support.cluster import create_registry_login, kubectl_json, sweep_body
from tests.support.direct_relay import DirectRelay, deploy_clusterip_relay, host_tls_relay

SWEEP_S = 420




def condition(body: dict[str, Any], type_: str) -> dict[str, Any] | None:
    return next((c for c in (body.get("status") or {}).get("conditions", []) if c["type"] == type_), None)


async def _secrets(kube: Kube, namespace: str, relay: DirectRelay, registry_login: str) -> None:
    await create_registry_login(kube, namespace, registry_login)
    await objects.create_secret(kube, namespace, objects.secret_body(
        "relay-owner", {"owner-key": relay.owner.secret_hex, "postgres-dsn": relay.target.pg_dsn},
        labels={}, owner=None))
    await objects.create_secret(kube, namespace, objects.secret_body(
        "api-keys", {"STANDIN_API_KEY": "standin-direct-relay"}, labels={}, owner=None))


def _run_sweep(namespace: str, body: dict[str, Any]) -> tuple[dict[str, Any], set[str]]:
    """Apply `body` with the operator running; the finished sweep and the init containers seen in
    its trial pods while they ran."""
    name = body["metadata"]["name"]
    containers: set[str] = set()
    with KopfRunner(["run", "--standalone", "-n", namespace, "-m", "buzz_operator.handlers"], timeout=60) as runner:
        subprocess.run(["kubectl", "-n", namespace, "apply", "-f", "-"], input=json.dumps(body), check=True,
                       capture_output=True, text=True)
        deadline = time.monotonic() + SWEEP_S
        while True:
            pods = kubectl_json("-n", namespace, "get", "pods", "-l", "app.kubernetes.io/component=trial-pod")
            containers |= {c["name"] for p in pods["items"] for c in p["spec"].get("initContainers", [])}
            sweep = kubectl_json("-n", namespace, "get", "buzzsweep", name)
            done = condition(sweep, "Complete")
            if done and done["status"] == "True":
                break
            accepted = condition(sweep, "Accepted")
            assert not (accepted and accepted["status"] == "False"), accepted
            assert time.monotonic() < deadline, f"the sweep did not complete: {sweep.get('status')}"
            time.sleep(1)
    assert runner.exception is None, runner.output
    return sweep, containers


def _direct(body: dict[str, Any], url: str, **relay: Any) -> dict[str, Any]:
    spec = body["spec"]
    spec["relay"].pop("serviceRef")
    spec["relay"].update(url=url, **relay)
    return body


def _assert_scored(sweep: dict[str, Any], containers: set[str]) -> None:
    status = sweep["status"]
    assert (status["total"], status["succeeded"], status["meanReward"]) == (1, 1, 1.0), status
    assert "stack" in containers and "forwarder" not in containers, containers


async def test_a_sweep_dials_a_clusterip_relay_directly(  # type: ignore[no-untyped-def]
    kube: Kube, namespace, crds, relay_db, pg_dsn, local_registry, tmp_path: Path
) -> None:
    relay = await deploy_clusterip_relay(kube, namespace, pg_dsn, relay_db)
    await _secrets(kube, namespace, relay, local_registry)
    body = _direct(sweep_body("direct-ws", store_url=f"file://{tmp_path}", tasks=["user-mention"]), relay.url)
    sweep, containers = _run_sweep(namespace, body)
    _assert_scored(sweep, containers)
    checks = {c["name"]: c for c in sweep["status"]["preflight"]["checks"]}
    assert checks["relay"]["verdict"] == "passed", checks


async def test_a_sweep_dials_a_private_ca_wss_relay_directly(  # type: ignore[no-untyped-def]
    kube: Kube, namespace, crds, relay_db, pg_dsn, local_registry, tmp_path: Path
) -> None:
    with host_tls_relay(pg_dsn, relay_db, tmp_path / "relay") as relay:
        assert relay.ca is not None
        await _secrets(kube, namespace, relay, local_registry)
        await kube.core.create_namespaced_config_map(namespace, {
            "apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "relay-ca"},
            "data": {"ca.crt": relay.ca.ca_pem}})
        body = _direct(sweep_body("direct-wss", store_url=f"file://{tmp_path / 'store'}", tasks=["user-mention"]),
                       relay.url, caBundle={"configMapKeyRef": {"name": "relay-ca", "key": "ca.crt"}})
        sweep, containers = _run_sweep(namespace, body)
    _assert_scored(sweep, containers)
