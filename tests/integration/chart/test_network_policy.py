"""Does the trial NetworkPolicy hold on this cluster? Three pods from the operator image: a
"relay" (labelled as the chart's dev relay, listening on 3600), an unrelated "target"
(listening on 8080), and a "trial" pod carrying the trial-pod labels that tries both, with the
chart's rendered policy applied in its namespace.

Where the CNI enforces NetworkPolicy (kind >= 0.24, Calico, Cilium) the trial pod must reach
the relay and not the target. The local stack's bridge CNI enforces none: the probe then finds
the target reachable and the test is skipped with that finding, so the policy is covered by its
rendered form (tests/unit/chart) and server acceptance (test_chart_validate.py) only."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from tests.integration.chart.conftest import apply, kubectl, kubectl_json
from tests.unit.chart.chartlib import render

IMAGE = "docker.io/buzz/operator:dev"
RELEASE = "np"
SERVE = "import http.server,sys; http.server.HTTPServer(('', int(sys.argv[1])), http.server.SimpleHTTPRequestHandler).serve_forever()"
PROBE = """
import socket, sys, time
for name, host, port in [a.split(':') for a in sys.argv[1:]]:
    try:
        socket.create_connection((host, int(port)), timeout=3).close(); print(name, 'open', flush=True)
    except OSError as e:
        print(name, 'blocked', type(e).__name__, flush=True)
time.sleep(3600)
"""


def pod(name: str, labels: dict[str, str], args: list[str]) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "labels": labels},
        "spec": {
            "automountServiceAccountToken": False,
            "restartPolicy": "Never",
            "securityContext": {
                "runAsNonRoot": True,
                "runAsUser": 65532,
                "seccompProfile": {"type": "RuntimeDefault"},
            },
            "containers": [
                {
                    "name": "main",
                    "image": IMAGE,
                    "imagePullPolicy": "Never",
                    "command": ["python3", "-c"],
                    "args": args,
                    "workingDir": "/tmp",
                    "securityContext": {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}},
                }
            ],
        },
    }


def ready_ip(namespace: str, name: str) -> str:
    for _ in range(120):
        p = kubectl_json("-n", namespace, "get", "pod", name)
        if p["status"].get("podIP") and p["status"].get("phase") == "Running":
            return str(p["status"]["podIP"])
        time.sleep(0.5)
    raise AssertionError(f"pod {name} did not start")


@pytest.fixture
def namespace(kubeconfig: str) -> Iterator[str]:
    name = f"chartnp-{uuid.uuid4().hex[:8]}"
    kubectl("create", "namespace", name)
    yield name
    kubectl("delete", "namespace", name, "--wait=false", check=False)


def test_trial_pods_reach_the_relay_and_nothing_else(namespace: str) -> None:
    relay_labels = {"app.kubernetes.io/instance": RELEASE, "app.kubernetes.io/component": "dev-relay"}
    apply(
        namespace,
        pod("relay", relay_labels, [SERVE, "3600"]),
        pod("target", {"app": "target"}, [SERVE, "8080"]),
    )
    relay_ip, target_ip = ready_ip(namespace, "relay"), ready_ip(namespace, "target")
    policies = [
        d
        for d in render(
            release=RELEASE,
            namespace=namespace,
            values={"devRelay": {"enabled": True, "databaseURL": "postgres://u@h/d"}},
        )
        if d["kind"] == "NetworkPolicy"
    ]
    apply(namespace, *policies)
    trial_labels = {
        "app.kubernetes.io/component": "trial-pod",
        "app.kubernetes.io/managed-by": "buzz-operator",
    }
    apply(
        namespace, pod("trial", trial_labels, [PROBE, f"relay:{relay_ip}:3600", f"target:{target_ip}:8080"])
    )
    ready_ip(namespace, "trial")
    for _ in range(60):
        log = kubectl("-n", namespace, "logs", "trial", check=False)
        if log.count("\n") >= 2:
            break
        time.sleep(1)
    results = dict(line.split()[:2] for line in log.splitlines() if line.strip())
    assert results.get("relay") == "open", log  # allowed by the policy, and reachable at all
    if results.get("target") == "open":
        pytest.skip(
            "this cluster's CNI does not enforce NetworkPolicy (local stack: bridge CNI); "
            f"the trial pod reached an address the policy denies: {json.dumps(results)}"
        )
    assert results.get("target") == "blocked", log
