"""The pod that pulls one image onto one node ahead of the trials that need it (pure: a plain v1
dict; docs/registry.md#images-pulled-ahead).

Kubernetes has no API to pull an image; a pod is the portable way, as every pre-puller does. It
runs `sh -c true` in the image: the task container's keep-alive, the stack install and the
forwarder's image run `sh` already, and a compose service's image that has none fails only after
the pull (sweep/prepull.py counts a container the kubelet made as pulled), which still leaves the
image on the node, all this pod is for. It is pinned to its node by the node's
hostname label, so the scheduler still checks that it fits; it carries the sweep's pull Secrets,
so the pull authenticates as the trials' will, and asks for little."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from typing import Any

from buzz_operator.api import labels
from buzz_operator.api.naming import label_value
from buzz_operator.api.ownership import owner_reference
from buzz_operator.pod.base import TASK_SECURITY_CONTEXT, container, guaranteed, hardened_pod

HOSTNAME_LABEL = "kubernetes.io/hostname"
PULL_RESOURCES = {"cpu": "50m", "memory": "32Mi"}
NAME_PREFIX_MAX = 40


def pull_pod_name(sweep: str, image: str, node: str) -> str:
    """Deterministic per (sweep, image, node): a second create of the same pull is a 409."""
    digest = hashlib.sha256(f"{image}\n{node}".encode()).hexdigest()[:10]
    return f"{sweep[:NAME_PREFIX_MAX].rstrip('-.')}-pull-{digest}"


def build_pull_pod(
    *, sweep: str, sweep_uid: str, namespace: str, image: str, node: str, hostname: str, pull_policy: str,
    pull_secrets: Sequence[str], extra_labels: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    pod = hardened_pod(
        name=pull_pod_name(sweep, image, node),
        namespace=namespace,
        labels={labels.MANAGED_BY: labels.MANAGER, labels.COMPONENT: labels.IMAGE_PULL,
                labels.SWEEP: label_value(sweep), **(extra_labels or {})},
        owner=owner_reference("BuzzSweep", sweep, sweep_uid),
        containers=[container("pull", image, pull_policy, ["sh", "-c", "true"], resources=guaranteed(PULL_RESOURCES),
                              security_context=TASK_SECURITY_CONTEXT)],
        grace_seconds=0,
        image_pull_secrets=pull_secrets,
    )
    pod["metadata"]["annotations"] = {labels.PULL_IMAGE: image, labels.PULL_NODE: node}
    pod["spec"]["nodeSelector"] = {HOSTNAME_LABEL: hostname}
    return pod
