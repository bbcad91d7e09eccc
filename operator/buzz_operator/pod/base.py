"""The hardened skeleton every pod the operator makes stands on (pure: plain v1 dicts).

Three pods run in trial namespaces — the trial pod and the grading pod (pod/trial_pod.py) and the
preflight canary (preflight/canary.py) — and they hold untrusted code, so what hardens them is
written once, here, and each of them adds only what is its own (containers, volumes, labels, its
owner, its grace period):
- no ServiceAccount token and no Service environment variables: agents and verifiers are
  untrusted code and have no business with the API or with the namespace's other Services;
- `restartPolicy: Never`: a try that dies is the operator's to classify and retry, not the
  kubelet's to restart behind its back;
- the RuntimeDefault seccomp profile for the whole pod. `runAsNonRoot` is set per container,
  not here: task images are built for Docker and often need root (docs/install.md#pod-security);
- containers that are the operator's own (stack install, forwarder, probes) fully `restricted`,
  and task-image containers at the Baseline level with a trimmed capability set.

Lives in `trial/` rather than `kube/` because it is pure and pod/trial_pod.py is one of the
rooms the purity guard holds (tests/unit/sweep/test_purity.py); preflight already builds on trial.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any

NONROOT_UID = 65532

# Keeps the container alive for exec and exits at once on SIGTERM (sleep in the background
# so the trap runs immediately instead of after the current sleep ends).
KEEPALIVE = 'trap "exit 0" TERM; while :; do sleep 3600 & wait $!; done'

# Task images are built for Docker, which runs them as root with a default capability set;
# many need root to apt-get install, chown or bind low ports. They keep the subset of Docker's
# defaults that package managers and test harnesses use; NET_RAW (raw sockets, ARP/ICMP
# spoofing), MKNOD, SETFCAP, SETPCAP, SYS_CHROOT and AUDIT_WRITE are dropped because untrusted
# agent code has no business with them. Everything kept is allowed by the Baseline Pod
# Security Standard, the realistic level for trial namespaces (docs/design.md#pod-security).
TASK_CAPABILITIES = (
    "CHOWN",
    "DAC_OVERRIDE",
    "FOWNER",
    "FSETID",
    "KILL",
    "NET_BIND_SERVICE",
    "SETGID",
    "SETUID",
)

# The Pod Security "restricted" profile, for every container that runs the operator's own code.
RESTRICTED_SECURITY_CONTEXT: dict[str, Any] = {
    "runAsNonRoot": True,
    "runAsUser": NONROOT_UID,
    "runAsGroup": NONROOT_UID,
    "allowPrivilegeEscalation": False,
    "readOnlyRootFilesystem": True,
    "capabilities": {"drop": ["ALL"]},
    "seccompProfile": {"type": "RuntimeDefault"},
}

# Task images at the Baseline level: root allowed (see TASK_CAPABILITIES), nothing privileged.
TASK_SECURITY_CONTEXT: dict[str, Any] = {
    "privileged": False,
    "allowPrivilegeEscalation": False,
    "capabilities": {"drop": ["ALL"], "add": list(TASK_CAPABILITIES)},
}

POD_SECURITY_CONTEXT: dict[str, Any] = {"seccompProfile": {"type": "RuntimeDefault"}}


def guaranteed(amounts: Mapping[str, str]) -> dict[str, dict[str, str]]:
    """Requests equal to limits: Guaranteed QoS needs that on every container, the small ones too."""
    return {"requests": dict(amounts), "limits": dict(amounts)}


def container(
    name: str,
    image: str,
    pull_policy: str,
    command: Sequence[str],
    *,
    resources: Mapping[str, Any],
    security_context: Mapping[str, Any],
) -> dict[str, Any]:
    """One container; the security context is copied deep, so no two pods share a nested dict
    that a later step could change in one of them."""
    return {
        "name": name,
        "image": image,
        "imagePullPolicy": pull_policy,
        "command": list(command),
        "resources": dict(resources),
        "securityContext": copy.deepcopy(dict(security_context)),
    }


def restricted_container(
    name: str, image: str, pull_policy: str, command: Sequence[str], *, resources: Mapping[str, Any]
) -> dict[str, Any]:
    """A container of the operator's own code, fully restricted."""
    return container(name, image, pull_policy, command, resources=resources,
                     security_context=RESTRICTED_SECURITY_CONTEXT)


def task_image_container(
    name: str, image: str, pull_policy: str, *, resources: Mapping[str, Any], mounts: Sequence[Mapping[str, str]]
) -> dict[str, Any]:
    """A task image kept alive for exec, as the seed harness kept its Docker container, so every
    step (setup, agents, verifier) runs by exec in it."""
    return {
        **container(name, image, pull_policy, ["sh", "-c", KEEPALIVE], resources=resources,
                    security_context=TASK_SECURITY_CONTEXT),
        "volumeMounts": [dict(mount) for mount in mounts],
    }


def empty_dirs(*names: str) -> list[dict[str, Any]]:
    return [{"name": name, "emptyDir": {}} for name in names]


def hardened_pod(
    *,
    name: str,
    namespace: str,
    labels: Mapping[str, str],
    owner: Mapping[str, Any],
    containers: Sequence[dict[str, Any]],
    init_containers: Sequence[dict[str, Any]] = (),
    volumes: Sequence[dict[str, Any]] = (),
    grace_seconds: int,
    runtime_class_name: str | None = None,
    image_pull_secrets: Sequence[str] = (),
    host_aliases: Sequence[dict[str, Any]] = (),
) -> dict[str, Any]:
    """The v1 Pod: the hardened skeleton around the caller's containers.

    `owner` is the ownerReference (api/ownership.py) the garbage collector takes the pod with;
    `image_pull_secrets` names Secrets in the pod's namespace (none: the field is left out, so a
    pod without them is the same dict it always was); `initContainers` is left out when empty.
    """
    spec: dict[str, Any] = {
        "restartPolicy": "Never",
        "automountServiceAccountToken": False,
        "enableServiceLinks": False,
        "terminationGracePeriodSeconds": grace_seconds,
        "securityContext": copy.deepcopy(POD_SECURITY_CONTEXT),
    }
    if init_containers:
        spec["initContainers"] = list(init_containers)
    spec["containers"] = list(containers)
    spec["volumes"] = list(volumes)
    if runtime_class_name:
        spec["runtimeClassName"] = runtime_class_name
    if image_pull_secrets:
        spec["imagePullSecrets"] = [{"name": secret} for secret in image_pull_secrets]
    if host_aliases:  # a compose task's service names (pod/services.py)
        spec["hostAliases"] = [copy.deepcopy(alias) for alias in host_aliases]
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "labels": dict(labels),
            "ownerReferences": [dict(owner)],
        },
        "spec": spec,
    }
