"""Does the trial NetworkPolicy hold on a cluster that enforces it? Pods from the operator image:
a "relay" (labelled as the chart's dev relay, listening on 3600), a "model" endpoint declared in
`trialNetworkPolicy.endpoints` (8443), an unrelated "target" (8080), and a "trial" pod carrying
the trial-pod labels that tries each, with the chart's rendered policy applied in its namespace;
then an "outsider" pod tries to reach the trial pod.

The local stack enforces NetworkPolicy with kube-router (docs/local-cluster.md), as kind >= 0.24,
Calico or Cilium do: the trial pod must reach the relay and the declared endpoint port and
nothing else, and nothing may reach it."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from tests.integration.chart.conftest import apply, kubectl, kubectl_json
from tests.support.cluster import create_namespace
from tests.unit.chart.chartlib import render

IMAGE = "docker.io/buzz/operator:dev"
RELEASE = "np"
SERVE = "import http.server,sys; http.server.HTTPServer(('', int(sys.argv[1])), http.server.SimpleHTTPRequestHandler).serve_forever()"
# Rounds of probes until two in a row agree (at most 15): an enforcer applies a new pod's
# policy asynchronously (kube-router syncs its chains after the pod appears), so one early round
# can see a state the policy has not reached yet. The last line is the settled answer.
PROBE = """
import json, socket, sys, time
def probe(host, port):
    try:
        socket.create_connection((host, int(port)), timeout=2).close(); return 'open'
    except OSError:
        return 'blocked'
targets = [a.split(':') for a in sys.argv[1:]]
last = None
for _ in range(15):
    now = {name: probe(host, port) for name, host, port in targets}
    print(json.dumps(now), flush=True)
    if now == last:
        break
    last = now
    time.sleep(1)
print('settled', flush=True)
time.sleep(3600)
"""
# PROBE after starting a server on argv[1] in a thread
PROBE_AND_SERVE = (
    "import http.server, sys, threading; port = int(sys.argv.pop(1)); "
    "threading.Thread(target=http.server.HTTPServer(('', port), http.server.SimpleHTTPRequestHandler).serve_forever,"
    " daemon=True).start()\n" + PROBE
)


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
    create_namespace(name)
    yield name
    kubectl("delete", "namespace", name, "--wait=false", check=False)


def probe_results(namespace: str, name: str) -> dict[str, str]:
    """The settled round a PROBE pod printed: {target: open|blocked}."""
    log = ""
    for _ in range(120):
        log = kubectl("-n", namespace, "logs", name, check=False)
        if "settled" in log:
            break
        time.sleep(1)
    rounds = [line for line in log.splitlines() if line.startswith("{")]
    assert rounds, f"{name} printed no probe round: {log!r}"
    return dict(json.loads(rounds[-1]))


def test_trial_pods_reach_the_relay_and_declared_endpoints_and_nothing_else(namespace: str) -> None:
    """Enforced by the local stack's kube-router (docs/local-cluster.md): never skipped there."""
    relay_labels = {"app.kubernetes.io/instance": RELEASE, "app.kubernetes.io/component": "dev-relay"}
    apply(
        namespace,
        pod("relay", relay_labels, [SERVE, "3600"]),
        pod("model", {"app": "model"}, [SERVE, "8443"]),
        pod("target", {"app": "target"}, [SERVE, "8080"]),
    )
    relay_ip, model_ip, target_ip = (ready_ip(namespace, n) for n in ("relay", "model", "target"))
    policies = [
        d
        for d in render(
            release=RELEASE,
            namespace=namespace,
            values={
                "devRelay": {"enabled": True, "databaseURL": "postgres://u@h/d"},
                # a declared model endpoint, by address range and port as the README says
                "trialNetworkPolicy": {"endpoints": [{"cidr": f"{model_ip}/32", "ports": [8443]}]},
            },
        )
        if d["kind"] == "NetworkPolicy"
    ]
    assert policies, "the chart rendered no trial NetworkPolicy"
    apply(namespace, *policies)
    trial_labels = {
        "app.kubernetes.io/component": "trial-pod",
        "app.kubernetes.io/managed-by": "buzz-operator",
    }
    # the trial pod also serves on 9090, so an unrelated pod can try to reach it
    apply(namespace, pod("trial", trial_labels, [PROBE_AND_SERVE, "9090", f"relay:{relay_ip}:3600",
                                                 f"model:{model_ip}:8443", f"model-other-port:{model_ip}:8080",
                                                 f"target:{target_ip}:8080"]))
    trial_ip = ready_ip(namespace, "trial")
    results = probe_results(namespace, "trial")
    assert results == {"relay": "open", "model": "open", "model-other-port": "blocked", "target": "blocked"}, results
    # ingress: nothing reaches a trial pod, while the same outsider reaches an unguarded pod
    apply(namespace, pod("outsider", {"app": "outsider"}, [PROBE, f"trial:{trial_ip}:9090", f"target:{target_ip}:8080"]))
    ready_ip(namespace, "outsider")
    assert probe_results(namespace, "outsider") == {"trial": "blocked", "target": "open"}
