"""The local stack is a real Kubernetes: a kopf operator under KopfRunner handles a CR and creates
a real pod that runs python3 to completion in a container; its logs come back through the API;
deleting the CR cascades to the pod through the garbage collector."""

from __future__ import annotations

import json
import os
import subprocess
import time
import uuid
from pathlib import Path

import pytest
from kopf.testing import KopfRunner

HERE = Path(__file__).parent
CRD = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": "probes.test.buzz.dev"},
    "spec": {
        "group": "test.buzz.dev",
        "names": {"kind": "Probe", "plural": "probes", "singular": "probe"},
        "scope": "Namespaced",
        "versions": [{
            "name": "v1", "served": True, "storage": True,
            "subresources": {"status": {}},
            "schema": {"openAPIV3Schema": {
                "type": "object",
                "properties": {
                    "spec": {"type": "object", "properties": {"code": {"type": "string"}}},
                    "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
                },
            }},
        }],
    },
}


def kubectl(*args: str, stdin: str | None = None, check: bool = True) -> str:
    return subprocess.run(["kubectl", *args], input=stdin, capture_output=True, text=True,
                          check=check).stdout


def wait_until(predicate, timeout: float, what: str):  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if (value := predicate()):
            return value
        time.sleep(0.5)
    raise AssertionError(f"timed out waiting for {what}")


@pytest.fixture
def namespace(kubeconfig: str) -> str:
    ns = f"probe-{uuid.uuid4().hex[:8]}"
    kubectl("create", "namespace", ns)
    yield ns
    kubectl("delete", "namespace", ns, "--wait=false", check=False)


def test_kopf_operator_runs_a_real_pod(namespace: str) -> None:
    kubectl("apply", "-f", "-", stdin=json.dumps(CRD))
    kubectl("wait", "--for=condition=Established", "crd/probes.test.buzz.dev", "--timeout=30s")
    args = ["run", "--standalone", "-n", namespace, "--verbose", str(HERE / "probe_operator.py")]
    with KopfRunner(args, timeout=60) as runner:
        probe = {"apiVersion": "test.buzz.dev/v1", "kind": "Probe", "metadata": {"name": "p1"},
                 "spec": {"code": "import sys; print('sum', sum(range(10)), sys.version_info[:2])"}}
        kubectl("-n", namespace, "apply", "-f", "-", stdin=json.dumps(probe))

        def phase() -> str | None:
            out = kubectl("-n", namespace, "get", "probe", "p1", "-o", "jsonpath={.status.phase}")
            return out or None

        assert wait_until(phase, 120, "the probe's pod to finish") == "Succeeded"
        logs = kubectl("-n", namespace, "logs", "p1-pod")
        assert logs.startswith("sum 45 (3, 11)"), logs
        owners = json.loads(kubectl("-n", namespace, "get", "pod", "p1-pod", "-o", "json"))["metadata"]["ownerReferences"]
        assert owners[0]["kind"] == "Probe" and owners[0]["name"] == "p1"

        kubectl("-n", namespace, "delete", "probe", "p1", "--wait=true", "--timeout=60s")

        def pod_gone() -> bool:
            return "NotFound" in subprocess.run(
                ["kubectl", "-n", namespace, "get", "pod", "p1-pod"], capture_output=True, text=True,
            ).stderr

        wait_until(pod_gone, 60, "the garbage collector to delete the owned pod")
    assert runner.exit_code == 0, runner.output
    assert runner.exception is None


def test_pods_reach_services_by_cluster_ip(namespace: str) -> None:
    """No cluster DNS here (Debian ships no CoreDNS): pods reach Services by ClusterIP through
    kube-proxy, which is how the operator wires the forwarder to the relay."""
    server = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web", "labels": {"app": "web"}},
              "spec": {"containers": [{"name": "web", "image": "docker.io/buzz/debian-py:bookworm",
                                       "imagePullPolicy": "Never",
                                       "command": ["python3", "-m", "http.server", "8080"]}]}}
    service = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web"},
               "spec": {"selector": {"app": "web"}, "ports": [{"port": 80, "targetPort": 8080}]}}
    kubectl("-n", namespace, "apply", "-f", "-", stdin=json.dumps({"apiVersion": "v1", "kind": "List",
                                                                   "items": [server, service]}))
    kubectl("-n", namespace, "wait", "--for=condition=Ready", "pod/web", "--timeout=60s")
    ip = kubectl("-n", namespace, "get", "svc", "web", "-o", "jsonpath={.spec.clusterIP}")
    code = (f"import urllib.request; print(urllib.request.urlopen('http://{ip}/', timeout=10).status)")
    client = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "client"},
              "spec": {"restartPolicy": "Never", "containers": [{
                  "name": "c", "image": "docker.io/buzz/debian-py:bookworm", "imagePullPolicy": "Never",
                  "command": ["python3", "-c", code]}]}}
    kubectl("-n", namespace, "apply", "-f", "-", stdin=json.dumps(client))
    wait_until(lambda: kubectl("-n", namespace, "get", "pod", "client", "-o",
                               "jsonpath={.status.phase}") in ("Succeeded", "Failed"), 90, "the client pod")
    assert kubectl("-n", namespace, "logs", "client").strip() == "200"
    assert os.environ.get("KUBECONFIG")
