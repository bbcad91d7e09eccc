"""The trial NetworkPolicy and relay URLs dialled directly (docs/relay-urls.md), on the local
stack's enforcing kube-router: a trial pod with no forwarder reaches

- an in-cluster relay by its Service's ClusterIP (ws://<ClusterIP>:3600): policies see the relay
  pod's address after the Service DNAT, so `trialNetworkPolicy.relay.podSelector` (here the bundled
  dev relay's labels) admits it;
- a relay outside the trial namespace's selectors by the CIDR and port given in
  `trialNetworkPolicy.relay.cidrs` / `ports` (wss://relay.example:8443 in the docs' example);

and still nothing else: not the outside relay's other port, not an unrelated pod."""

from __future__ import annotations

from tests.integration.chart.conftest import apply, kubectl_json
from tests.integration.chart.test_network_policy import (  # noqa: F401  (namespace is a fixture)
    PROBE,
    RELEASE,
    SERVE,
    namespace,
    pod,
    probe_results,
    ready_ip,
)
from tests.unit.chart.chartlib import render

# an "outside" relay serving its relay port and one more, so the policy's port list is seen to hold
SERVE_TWO = (
    "import http.server, sys, threading\n"
    "H = http.server.SimpleHTTPRequestHandler\n"
    "threading.Thread(target=http.server.HTTPServer(('', int(sys.argv[2])), H).serve_forever, daemon=True).start()\n"
    "http.server.HTTPServer(('', int(sys.argv[1])), H).serve_forever()\n"
)
TRIAL_LABELS = {"app.kubernetes.io/component": "trial-pod", "app.kubernetes.io/managed-by": "buzz-operator"}


def test_direct_relay_urls_pass_the_trial_policy_and_nothing_else(namespace: str) -> None:  # noqa: F811
    relay_labels = {"app.kubernetes.io/instance": RELEASE, "app.kubernetes.io/component": "dev-relay"}
    apply(
        namespace,
        pod("relay", relay_labels, [SERVE, "3600"]),
        pod("outside", {"app": "outside-relay"}, [SERVE_TWO, "8443", "9443"]),
        pod("target", {"app": "target"}, [SERVE, "8080"]),
        {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "relay"},
         "spec": {"selector": relay_labels, "ports": [{"port": 3600, "targetPort": 3600}]}},
    )
    outside_ip, target_ip = ready_ip(namespace, "outside"), ready_ip(namespace, "target")
    ready_ip(namespace, "relay")
    cluster_ip = kubectl_json("-n", namespace, "get", "service", "relay")["spec"]["clusterIP"]
    values = {
        "devRelay": {"enabled": True, "databaseURL": "postgres://u@h/d"},
        # the README's recipe for a relay pods dial directly outside the cluster's selectors
        "trialNetworkPolicy": {"relay": {"cidrs": [f"{outside_ip}/32"], "ports": [3600, 8443]}},
    }
    policies = [d for d in render(release=RELEASE, namespace=namespace, values=values) if d["kind"] == "NetworkPolicy"]
    assert policies, "the chart rendered no trial NetworkPolicy"
    apply(namespace, *policies)
    apply(namespace, pod("trial", TRIAL_LABELS, [PROBE, f"relay-clusterip:{cluster_ip}:3600",
                                                 f"outside-relay:{outside_ip}:8443",
                                                 f"outside-other-port:{outside_ip}:9443",
                                                 f"target:{target_ip}:8080"]))
    ready_ip(namespace, "trial")
    assert probe_results(namespace, "trial") == {
        "relay-clusterip": "open", "outside-relay": "open", "outside-other-port": "blocked", "target": "blocked",
    }
