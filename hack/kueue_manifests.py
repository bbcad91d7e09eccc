"""Kueue's own install manifests (`kubectl kustomize config/default` of the Go module), narrowed
for a cluster others share (docs/queueing.md#the-local-kueue):

- only the plain-Pod integration, and Kueue manages Pods only in namespaces labelled
  NAMESPACE_LABEL=enabled (its `managedJobsNamespaceSelector`);
- every webhook on built-in kinds (pods, jobs, deployments, statefulsets) answers only for those
  namespaces: Kueue's webhooks fail closed, so while its manager is down a create there is
  refused, and anywhere else nothing changes;
- no visibility APIService: an aggregated API whose server is down breaks discovery, and the
  namespace controller then cannot delete any namespace;
- the manager runs the image hack/kueue.sh built, as UID 65532, with small requests on a
  2-core node, without leader election (one replica).

usage: kueue_manifests.py RENDERED.yaml IMAGE > OUT.yaml
"""

from __future__ import annotations

import sys
from typing import Any

import yaml

NAMESPACE_LABEL = "buzz-operator.dev/kueue"
BUILTIN_GROUPS = {"", "apps", "batch"}

CONFIG: dict[str, Any] = {
    "apiVersion": "config.kueue.x-k8s.io/v1beta2",
    "kind": "Configuration",
    "health": {"healthProbeBindAddress": ":8081"},
    "metrics": {"bindAddress": ":8443"},
    "webhook": {"port": 9443},
    "leaderElection": {"leaderElect": False},
    "controller": {"groupKindConcurrency": {"Pod": 5, "Workload.kueue.x-k8s.io": 5}},
    "clientConnection": {"qps": 50, "burst": 100},
    "manageJobsWithoutQueueName": False,
    "managedJobsNamespaceSelector": {"matchLabels": {NAMESPACE_LABEL: "enabled"}},
    "integrations": {"frameworks": ["pod"]},
}


def narrow(docs: list[dict[str, Any]], image: str) -> list[dict[str, Any]]:
    out = []
    for doc in docs:
        kind = doc["kind"]
        if kind == "APIService":
            continue
        if kind == "ConfigMap" and doc["metadata"]["name"].endswith("manager-config"):
            doc["data"] = {"controller_manager_config.yaml": yaml.safe_dump(CONFIG, sort_keys=False)}
        if kind in ("MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"):
            for hook in doc["webhooks"]:
                groups = {g for rule in hook.get("rules", []) for g in rule.get("apiGroups", [])}
                if groups & BUILTIN_GROUPS:
                    hook["namespaceSelector"] = {"matchLabels": {NAMESPACE_LABEL: "enabled"}}
        if kind == "Deployment":
            pod = doc["spec"]["template"]["spec"]
            pod["securityContext"]["runAsUser"] = 65532
            pod["securityContext"]["runAsGroup"] = 65532
            for container in pod["containers"]:
                if container["name"] == "manager":
                    container["image"] = image
                    container["imagePullPolicy"] = "Never"
                    container["resources"] = {"requests": {"cpu": "50m", "memory": "128Mi"},
                                              "limits": {"cpu": "1", "memory": "512Mi"}}
        out.append(doc)
    return out


def main() -> None:
    rendered, image = sys.argv[1], sys.argv[2]
    with open(rendered) as f:
        docs = [d for d in yaml.safe_load_all(f) if d]
    yaml.safe_dump_all(narrow(docs, image), sys.stdout, sort_keys=False)


if __name__ == "__main__":
    main()
