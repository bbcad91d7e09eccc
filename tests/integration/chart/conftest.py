"""Fixtures for the chart on the local stack: helm from hack/helm.sh, a fresh namespace and
relay database per module, and the stand-in condition objects a sample sweep names."""

from __future__ import annotations

import json
import secrets
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from buzz_operator.dev.localstack import host_ip, with_database

from tests.support.cluster import create_namespace, kubectl_json
from tests.support.databases import scratch_database
from tests.unit.chart.chartlib import CHART, ROOT, helm_bin, kubectl_bin


def kubectl(*args: str, stdin: str | None = None, check: bool = True) -> str:
    done = subprocess.run(["kubectl", *args], input=stdin, capture_output=True, text=True)
    if check and done.returncode:
        raise AssertionError(f"kubectl {' '.join(args)}: {done.stderr.strip()}")
    return done.stdout




def apply(namespace: str, *objects: dict[str, Any]) -> None:
    kubectl(
        "-n",
        namespace,
        "apply",
        "-f",
        "-",
        stdin=json.dumps({"apiVersion": "v1", "kind": "List", "items": list(objects)}),
    )


@pytest.fixture(scope="module")
def crds(kubeconfig: str) -> None:
    """The CRDs as the chart ships them (helm install skips CRDs that already exist)."""
    kubectl("apply", "-f", str(CHART / "crds"))
    for name in ("buzzsweeps.bench.buzz.dev", "buzztrials.bench.buzz.dev"):
        kubectl("wait", "--for=condition=Established", f"crd/{name}", "--timeout=60s")


@pytest.fixture(scope="module")
def helm(kubeconfig: str) -> Path:
    return helm_bin()


@pytest.fixture(scope="module")
def kubectl_current(helm: Path) -> Path:
    """kubectl 1.31 from the same layer: validates manifests against the server's OpenAPI."""
    return kubectl_bin()


@pytest.fixture(scope="module")
def chart_namespace(kubeconfig: str) -> Iterator[str]:
    name = f"chart-{uuid.uuid4().hex[:8]}"
    create_namespace(name)
    yield name
    # a failed run can leave trials whose finalizer no operator will remove (kopf #833)
    for kind in ("buzztrials", "buzzsweeps"):
        for obj in kubectl("-n", name, "get", kind, "-o", "name", check=False).split():
            kubectl(
                "-n",
                name,
                "patch",
                obj,
                "--type=merge",
                "-p",
                '{"metadata":{"finalizers":null}}',
                check=False,
            )
    kubectl("delete", "namespace", name, "--wait=false", check=False)


@pytest.fixture(scope="module")
def relay_dsn(pg_dsn: str) -> Iterator[str]:
    """A fresh database on the host's Postgres, as pods reach it (the host's bridge address)."""
    with scratch_database(pg_dsn, f"chart_{secrets.token_hex(6)}") as database:
        yield with_database(pg_dsn, database, host=host_ip())


def condition_objects(api_key: str) -> list[dict[str, Any]]:
    """The stand-in oracle condition and its endpoints as the demo makes them (ConfigMaps and a
    Secret), so the operator reads them through the API with the chart's RBAC."""
    from buzz_operator.dev.demo import condition_config_map

    return [
        condition_config_map("standin-oracle", "standin-oracle.yaml"),
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "standin-endpoints"},
            "data": {"standin.json": (ROOT / "manifests/endpoints/standin.json").read_text()},
        },
        {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {"name": "standin-api-keys"},
            "stringData": {"STANDIN_API_KEY": api_key},
        },
    ]


def sample_sweep(name: str, release_fullname: str, *, tasks: list[str], ttl_s: int) -> dict[str, Any]:
    """manifests/sweeps/demo.yaml's oracle sweep, pointed at the release's dev relay, small."""
    import yaml

    sweep = next(
        d
        for d in yaml.safe_load_all((ROOT / "manifests/sweeps/demo.yaml").read_text())
        if d["metadata"]["name"] == "demo-oracle"
    )
    relay = f"{release_fullname}-dev-relay"
    sweep["metadata"] = {"name": name}
    spec = sweep["spec"]
    spec.update(
        attempts=1, parallelism=1, include=tasks, imagePullPolicy="Never", ttlSecondsAfterFinished=ttl_s
    )
    spec["relay"]["serviceRef"]["name"] = relay
    spec["relay"]["ownerKeySecretRef"]["name"] = relay
    spec["relay"]["postgresDsnSecretRef"]["name"] = relay
    return sweep


__all__ = ["CHART", "apply", "condition_objects", "host_ip", "kubectl", "kubectl_json", "sample_sweep"]
