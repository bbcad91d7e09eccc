"""Every manifest the chart renders, for each documented value set, validated by the local
1.20 apiserver: `kubectl apply --dry-run=server` with kubectl 1.31, which checks each object
against the server's OpenAPI schema (unknown and mistyped fields fail) before the server runs
its own validation and admission. The ServiceMonitor is left out: its CRD (Prometheus
Operator) is not installed here."""

from __future__ import annotations

import json
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.integration.chart.conftest import kubectl
from tests.support.cluster import create_namespace
from tests.unit.chart.chartlib import CLUSTER_WIDE, SELF_CONTAINED, render

VALUE_SETS = {"default": (), "self-contained": (SELF_CONTAINED,), "cluster-wide": (CLUSTER_WIDE,)}


@pytest.fixture(scope="module")
def namespaces(kubeconfig: str) -> Iterator[list[str]]:
    names = [f"chartval-{uuid.uuid4().hex[:8]}" for _ in range(2)]
    for name in names:
        create_namespace(name)
    yield names
    for name in names:
        kubectl("delete", "namespace", name, "--wait=false", check=False)


def dry_run(
    kubectl_current: Path, docs: list[dict[str, Any]], mode: str = "server"
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(kubectl_current), "apply", f"--dry-run={mode}", "--validate=true", "-f", "-"],
        input=json.dumps({"apiVersion": "v1", "kind": "List", "items": docs}),
        capture_output=True,
        text=True,
    )


@pytest.mark.parametrize("files", VALUE_SETS.values(), ids=VALUE_SETS.keys())
def test_rendered_manifests_pass_server_validation(
    files: tuple[Path, ...], namespaces: list[str], kubectl_current: Path
) -> None:
    release_ns, other = namespaces
    overrides: dict[str, Any] = {}
    if files == (CLUSTER_WIDE,):
        overrides = {
            "trialNetworkPolicy": {
                "namespaces": [release_ns, other],
                "relay": {"cidrs": ["198.51.100.7/32"], "ports": [443]},
            }
        }
    docs = [
        d
        for d in render(*files, namespace=release_ns, values=overrides)
        if d["kind"] not in ("ServiceMonitor", "CustomResourceDefinition")
    ]
    kinds = {d["kind"] for d in docs}
    assert {"Deployment", "ServiceAccount", "ClusterRole", "NetworkPolicy", "Service"} <= kinds
    done = dry_run(kubectl_current, docs)
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("(server dry run)") == len(docs), done.stdout


def test_chart_crds_pass_server_validation(kubectl_current: Path) -> None:
    crds = [d for d in render(SELF_CONTAINED) if d["kind"] == "CustomResourceDefinition"]
    assert len(crds) == 2
    done = dry_run(kubectl_current, crds)
    assert done.returncode == 0, done.stderr


def test_the_validation_can_fail(namespaces: list[str], kubectl_current: Path) -> None:
    [deployment] = [d for d in render(namespace=namespaces[0]) if d["kind"] == "Deployment"]
    deployment["spec"]["template"]["spec"]["containers"][0]["securityContxt"] = {}
    done = dry_run(kubectl_current, [deployment])
    assert done.returncode != 0 and "securityContxt" in done.stderr, done.stderr
