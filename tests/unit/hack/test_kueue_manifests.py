"""hack/kueue_manifests.py narrows Kueue's own install so a shared cluster is safe: every webhook on
a built-in kind answers only for labelled namespaces (they fail closed), the visibility APIService is
left out, the manager runs the locally built image as a non-root UID, and Kueue manages pods only in
labelled namespaces. Shapes as `kubectl kustomize config/default` of Kueue v0.17.0 renders them."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import yaml

SCRIPT = Path(__file__).resolve().parents[3] / "hack" / "kueue_manifests.py"
spec = importlib.util.spec_from_file_location("kueue_manifests", SCRIPT)
assert spec is not None and spec.loader is not None
kueue_manifests = importlib.util.module_from_spec(spec)
spec.loader.exec_module(kueue_manifests)

EVERY_NAMESPACE_BUT_KUEUES = {"matchExpressions": [{"key": "kubernetes.io/metadata.name", "operator": "NotIn",
                                                     "values": ["kube-system", "kueue-system"]}]}
LABELLED = {"matchLabels": {"buzz-operator.dev/kueue": "enabled"}}


def hook(name: str, group: str, resource: str, selector: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"name": name, "failurePolicy": "Fail", "rules": [{"apiGroups": [group], "resources": [resource]}],
            **({"namespaceSelector": selector} if selector else {})}


RENDERED = [
    {"kind": "MutatingWebhookConfiguration", "metadata": {"name": "kueue-mutating-webhook-configuration"},
     "webhooks": [hook("mpod.kb.io", "", "pods", EVERY_NAMESPACE_BUT_KUEUES),
                  hook("mjob.kb.io", "batch", "jobs"),
                  hook("mdeployment.kb.io", "apps", "deployments", EVERY_NAMESPACE_BUT_KUEUES),
                  hook("mworkload.kb.io", "kueue.x-k8s.io", "workloads")]},
    {"kind": "ValidatingWebhookConfiguration", "metadata": {"name": "kueue-validating-webhook-configuration"},
     "webhooks": [hook("vpod.kb.io", "", "pods", EVERY_NAMESPACE_BUT_KUEUES),
                  hook("vstatefulset.kb.io", "apps", "statefulsets", EVERY_NAMESPACE_BUT_KUEUES)]},
    {"kind": "APIService", "metadata": {"name": "v1beta2.visibility.kueue.x-k8s.io"}},
    {"kind": "ConfigMap", "metadata": {"name": "kueue-manager-config"},
     "data": {"controller_manager_config.yaml": "integrations: {frameworks: [batch/job, pod, deployment]}"}},
    {"kind": "Deployment", "metadata": {"name": "kueue-controller-manager"},
     "spec": {"template": {"spec": {"securityContext": {"runAsNonRoot": True},
                                    "containers": [{"name": "manager", "image": "registry/kueue:main",
                                                    "imagePullPolicy": "Always",
                                                    "resources": {"requests": {"cpu": "500m"}}}]}}}},
]


def narrowed() -> dict[str, Any]:
    docs = kueue_manifests.narrow(yaml.safe_load(yaml.safe_dump(RENDERED)), "docker.io/buzz-test/kueue:v0.17.0")
    return {doc["kind"]: doc for doc in docs}


def test_webhooks_on_built_in_kinds_answer_only_for_labelled_namespaces() -> None:
    docs = narrowed()
    hooks = [*docs["MutatingWebhookConfiguration"]["webhooks"], *docs["ValidatingWebhookConfiguration"]["webhooks"]]
    built_in = [h for h in hooks if h["rules"][0]["apiGroups"][0] in ("", "apps", "batch")]
    assert len(built_in) == 5 and all(h["namespaceSelector"] == LABELLED for h in built_in), built_in
    kueues_own = next(h for h in hooks if h["name"] == "mworkload.kb.io")
    assert "namespaceSelector" not in kueues_own


def test_no_visibility_apiservice_and_the_local_image_unprivileged() -> None:
    docs = narrowed()
    assert "APIService" not in docs
    pod = docs["Deployment"]["spec"]["template"]["spec"]
    assert pod["securityContext"]["runAsUser"] == 65532
    manager = pod["containers"][0]
    assert (manager["image"], manager["imagePullPolicy"]) == ("docker.io/buzz-test/kueue:v0.17.0", "Never")


def test_only_pods_and_only_in_labelled_namespaces() -> None:
    config = yaml.safe_load(narrowed()["ConfigMap"]["data"]["controller_manager_config.yaml"])
    assert config["integrations"] == {"frameworks": ["pod"]}
    assert config["managedJobsNamespaceSelector"] == LABELLED
    assert config["manageJobsWithoutQueueName"] is False
