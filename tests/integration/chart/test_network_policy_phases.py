"""Egress by phase (docs/egress.md) on the local stack's enforcing kube-router: the chart's trial
NetworkPolicies applied in a namespace with

- a relay (the dev relay's labels, 3600), the demo's scripted model endpoint (labelled as
  dev/deploy_model.py labels it, behind a Service on 8091, admitted by `trialNetworkPolicy.endpoints`
  by pod selector), a package mirror (8080, `trialNetworkPolicy.grading.mirrors`), and an
  "outside" pod standing for the internet (its address is `trialNetworkPolicy.grading.internet`:
  the local stack reaches no real outside);
- trial pods from the operator image carrying a trial pod's labels (pod/trial_pod.pod_labels).

While a pod's label says agents, it reaches the relay and the model Service and neither the
mirror nor the outside; once trial/drive/egress_phase.relabel (the operator's own code) has switched
it to grading — read back from the API — it reaches what its task's network allows and nothing
of the agents phase: public the mirror and the outside, allowlist the mirror, no-network
nothing. Nothing reaches a trial pod in either phase. The reachability is read by the canary's
own probe (preflight/probe.py) run in the pod."""

from __future__ import annotations

import json
import subprocess
from typing import Any

from buzz_operator.api import labels as L
from buzz_operator.dev import deploy_model
from buzz_operator.kube.client import Kube
from buzz_operator.pod.trial_pod import grading_labels, pod_labels
from buzz_operator.preflight import probe
from buzz_operator.trial.drive.egress_phase import relabel

from tests.integration.chart.conftest import apply, kubectl, kubectl_json
from tests.integration.chart.test_network_policy import (  # noqa: F401  (namespace is a fixture)
    IMAGE,
    PROBE,
    RELEASE,
    SERVE,
    namespace,
    pod,
    probe_results,
    ready_ip,
)
from tests.support.cluster import kube  # noqa: F401  (a fixture)
from tests.unit.chart.chartlib import render

KEEPALIVE = "import http.server; http.server.HTTPServer(('', 9090), http.server.SimpleHTTPRequestHandler).serve_forever()"


def in_pod(ns: str, name: str, targets: dict[str, tuple[str, int]]) -> dict[str, str]:
    """The settled reachability of `targets` from inside the pod, by the canary's probe script."""
    request = json.dumps(probe.request(targets, rounds=15))
    done = subprocess.run(["kubectl", "-n", ns, "exec", name, "--", "python3", "-c", probe.SCRIPT, request],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return {k: ("open" if v == "open" else "blocked") for k, v in probe.parse(done.stdout)["tcp"].items()}


def trial_pod(name: str, retry: int) -> dict[str, Any]:
    body = pod(name, pod_labels({L.SWEEP: "phases"}, name, retry), [KEEPALIVE])
    assert body["spec"]["containers"][0]["image"] == IMAGE
    return body


async def test_agents_reach_relay_and_endpoint_and_grading_reaches_what_the_task_allows(
    kube: Kube, namespace: str  # noqa: F811
) -> None:
    relay_labels = {"app.kubernetes.io/instance": RELEASE, "app.kubernetes.io/component": "dev-relay"}
    model_labels = deploy_model.model_pod("model", image=IMAGE)["metadata"]["labels"]
    apply(
        namespace,
        pod("relay", relay_labels, [SERVE, "3600"]),
        pod("model", model_labels, [SERVE, str(deploy_model.MODEL_PORT)]),
        pod("mirror", {"app": "pypi-mirror"}, [SERVE, "8080"]),
        pod("outside", {"app": "outside"}, [SERVE, "8080"]),
        {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "buzz-scripted-model"},
         "spec": {"selector": {"app.kubernetes.io/name": deploy_model.LABEL},
                  "ports": [{"port": deploy_model.MODEL_PORT, "targetPort": deploy_model.MODEL_PORT}]}},
    )
    relay_ip, mirror_ip, outside_ip = (ready_ip(namespace, n) for n in ("relay", "mirror", "outside"))
    ready_ip(namespace, "model")
    model_service = kubectl_json("-n", namespace, "get", "service", "buzz-scripted-model")["spec"]["clusterIP"]
    values = {
        "devRelay": {"enabled": True, "databaseURL": "postgres://u@h/d"},
        "trialNetworkPolicy": {
            # the demo's scripted model, by its pods' labels and the Service's targetPort
            "endpoints": [{"podSelector": {"app.kubernetes.io/name": deploy_model.LABEL}, "ports": [deploy_model.MODEL_PORT]}],
            "grading": {"mirrors": [{"podSelector": {"app": "pypi-mirror"}, "ports": [8080]}],
                        "internet": [{"cidr": f"{outside_ip}/32"}]},
        },
    }
    policies = [d for d in render(release=RELEASE, namespace=namespace, values=values) if d["kind"] == "NetworkPolicy"]
    assert len(policies) == 4, [p["metadata"]["name"] for p in policies]
    apply(namespace, *policies)
    targets = {"relay": (relay_ip, 3600), "model-service": (model_service, deploy_model.MODEL_PORT),
               "mirror": (mirror_ip, 8080), "outside": (outside_ip, 8080)}
    agents = {"relay": "open", "model-service": "open", "mirror": "blocked", "outside": "blocked"}
    grading = {
        "public": {"relay": "blocked", "model-service": "blocked", "mirror": "open", "outside": "open"},
        "allowlist": {"relay": "blocked", "model-service": "blocked", "mirror": "open", "outside": "blocked"},
        "no-network": {"relay": "blocked", "model-service": "blocked", "mirror": "blocked", "outside": "blocked"},
    }
    names = {network: f"trial-{network}" for network in grading}
    apply(namespace, *(trial_pod(name, 0) for name in names.values()))
    ips = {network: ready_ip(namespace, name) for network, name in names.items()}
    seen: dict[str, Any] = {}
    for network, name in names.items():
        before = in_pod(namespace, name, targets)
        labels = await relabel(kube, namespace, name, grading_labels(network))
        assert labels[L.PHASE] == L.PHASE_GRADING and labels[L.NETWORK] == network
        assert kubectl_json("-n", namespace, "get", "pod", name)["metadata"]["labels"][L.PHASE] == "grading"
        seen[network] = (before, in_pod(namespace, name, targets))
    print(f"\negress by phase: {json.dumps(seen, indent=1)}")
    for network, (before, after) in seen.items():
        assert before == agents, (network, before)  # never the mirror while the label says agents
        assert after == grading[network], (network, after)
    # relabelling again patches nothing and reads the same back
    again = await relabel(kube, namespace, names["public"], grading_labels("public"))
    assert again[L.NETWORK] == "public"
    # ingress: nothing reaches a trial pod, in the agents phase or the grading one
    apply(namespace, trial_pod("trial-agents", 1))
    agents_ip = ready_ip(namespace, "trial-agents")
    apply(namespace, pod("outsider", {"app": "outsider"}, [PROBE, f"agents:{agents_ip}:9090",
                                                           f"grading:{ips['public']}:9090",
                                                           f"mirror:{mirror_ip}:8080"]))
    ready_ip(namespace, "outsider")
    assert probe_results(namespace, "outsider") == {"agents": "blocked", "grading": "blocked", "mirror": "open"}
    kubectl("-n", namespace, "delete", "pod", "--all", "--wait=false", check=False)
