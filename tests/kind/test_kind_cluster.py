"""What `make kind-up` made (hack/kind-up.sh), read back from the kind cluster: its node runs the
project's own Kubernetes and containerd from the project's node image, the pod network and
CoreDNS are up, the chart's self-contained services run from the images the project built, and
the sample sweep ran to the end with every trial scored 1.0 (the stand-in oracle solves each
task) and its summary written to the in-cluster object store."""

from __future__ import annotations

import json
import subprocess
from typing import Any

from tests.kind.conftest import CLUSTER, NAMESPACE, RELEASE, lib_value, run_engine

FULL = f"{RELEASE}-buzz-operator"


def kubectl_json(*args: str) -> Any:
    done = subprocess.run(["kubectl", *args, "-o", "json"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_the_node_runs_the_projects_kubernetes_and_containerd() -> None:
    [node] = kubectl_json("get", "nodes")["items"]
    info = node["status"]["nodeInfo"]
    assert info["kubeletVersion"] == f"v{lib_value('K8S_VERSION')}"
    # the build reports "2.2.9+unknown": a module build carries no git state
    assert info["containerRuntimeVersion"].startswith(f"containerd://{lib_value('CONTAINERD_VERSION')}"), info
    ready = {c["type"]: c["status"] for c in node["status"]["conditions"]}
    assert ready["Ready"] == "True", node["status"]["conditions"]
    # the node container runs the image hack/kind-node.sh built (unless BUZZ_KIND_NODE_IMAGE named another)
    image = run_engine("inspect", "--format", "{{.ImageName}}", f"{CLUSTER}-control-plane").strip()
    assert image.split("/")[-1].startswith("kind-node:") or "kindest/node" in image, image


def test_the_control_plane_network_and_dns_are_up() -> None:
    pods = kubectl_json("-n", "kube-system", "get", "pods")["items"]
    by_app = {}
    for p in pods:
        labels = p["metadata"].get("labels", {})
        app = labels.get("k8s-app") or labels.get("component") or p["metadata"]["name"]
        by_app.setdefault(app, []).append(p["status"]["phase"])
    for app in ("kube-apiserver", "etcd", "kube-controller-manager", "kube-scheduler", "kube-proxy", "kube-dns"):
        assert by_app.get(app) and set(by_app[app]) == {"Running"}, (app, by_app)
    # the pod network: kube-router in the project's node image, kindnet in kindest/node
    assert "kube-router" in by_app or "kindnet" in by_app, by_app


def test_the_self_contained_services_run_from_the_projects_images() -> None:
    deployments = {d["metadata"]["name"]: d for d in kubectl_json("-n", NAMESPACE, "get", "deployments")["items"]}
    for name in (FULL, f"{FULL}-dev-relay", f"{FULL}-postgres", f"{FULL}-objectstore"):
        status = deployments[name]["status"]
        assert status.get("readyReplicas", 0) >= 1, (name, status)
    images = {name: d["spec"]["template"]["spec"]["containers"][0]["image"] for name, d in deployments.items()}
    assert images[f"{FULL}-postgres"] == "docker.io/buzz/postgres:15"
    assert images[f"{FULL}-objectstore"].startswith("docker.io/buzz/versitygw:")


def test_the_sample_sweep_ran_to_the_end_with_every_trial_scored() -> None:
    sweep = kubectl_json("-n", NAMESPACE, "get", "buzzsweep", "demo-oracle")
    status = sweep["status"]
    conditions = {c["type"]: c["status"] for c in status["conditions"]}
    assert conditions.get("Complete") == "True", status["conditions"]
    assert status["total"] == 20 and status["succeeded"] == 20, status
    assert status["failed"] == 0 and status["broken"] == 0, status
    assert status["meanReward"] == 1.0, status
    assert status["summaryURL"].startswith("s3://buzz-bundles/"), status
