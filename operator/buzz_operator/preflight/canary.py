"""The preflight canary pod, as a plain v1 Pod dict (pure).

It is a trial pod in miniature: the `stack` init container installs the agent stack at /opt/buzz
exactly as trial pods do (so the trust store the trials seed from is there, and the digests of
the stack the sweep will run, which lock.json records, can be read), one init container
per further task image and one for the operator image prove every image the sweep needs starts
on this cluster, and the `task` container (the first task image, with the trial's /logs) stays
alive for the trials' own setup, trust-store and verifier-deps commands.

It carries the trial pod's policy labels (podspec.policy_labels: component trial-pod, managed-by,
phase=agents), so the very NetworkPolicies that select trial pods select it, and it is
relabelled into the grading phase as trials are (docs/egress.md); it has no trial label, so the
janitor never takes it for an orphaned trial pod, and `bench.buzz.dev/preflight` tells it apart.
Its `probe` container (the operator image: python3 whatever the task image holds) shares the pod's
network and looks at what each phase reaches (probe.py). It is owned by the sweep, so a crash
mid-preflight leaves nothing the garbage collector does not take.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from buzz_operator.api import labels
from buzz_operator.api.naming import label_value
from buzz_operator.api.ownership import owner_reference
from buzz_operator.api.stack import StackSource
from buzz_operator.condition.paths import REMOTE_ROOT
from buzz_operator.trial.podspec import (
    KEEPALIVE,
    LOGS_MOUNT,
    LOGS_VOLUME,
    RESTRICTED_SECURITY_CONTEXT,
    STACK_RESOURCES,
    STACK_VOLUME,
    TASK_CAPABILITIES,
    policy_labels,
    stack_container,
)

MARKER = "canary"  # the value of labels.PREFLIGHT
TASK_CONTAINER = "task"
PROBE_CONTAINER = "probe"
# A Pod's containers share one spec; past this many distinct task images the rest are not
# started by the canary (the check says how many it covered).
MAX_IMAGES = 40
SMALL = {"cpu": "100m", "memory": "256Mi"}
# The forwarder the trial pod runs must be on the operator image's PATH.
OPERATOR_PROBE = "command -v relay-forwarder >/dev/null"
NAME_MAX = 63


def canary_name(sweep: str) -> str:
    suffix = "-preflight"
    return sweep[: NAME_MAX - len(suffix)].rstrip("-.") + suffix


def canary_pod(
    *,
    sweep: str,
    sweep_uid: str,
    namespace: str,
    stack: StackSource,
    operator_image: str,
    task_images: Sequence[str],
    pull_policy: str,
    runtime_class_name: str | None = None,
) -> dict[str, Any]:
    if not task_images:
        raise ValueError("the canary needs at least one task image")
    images = started_images(task_images)
    stack_mount = {"name": STACK_VOLUME, "mountPath": REMOTE_ROOT}
    small = {"requests": dict(STACK_RESOURCES), "limits": dict(STACK_RESOURCES)}
    init = [
        stack_container(stack, pull_policy),
        {"name": "operator", "image": operator_image, "imagePullPolicy": pull_policy,
         "command": ["sh", "-c", OPERATOR_PROBE], "resources": small,
         "securityContext": dict(RESTRICTED_SECURITY_CONTEXT)},
    ]
    init += [
        {"name": f"image-{index}", "image": image, "imagePullPolicy": pull_policy, "command": ["sh", "-c", "true"],
         "resources": small, "securityContext": {"allowPrivilegeEscalation": False}}
        for index, image in enumerate(images[1:], start=1)
    ]
    spec: dict[str, Any] = {
        "restartPolicy": "Never",
        "automountServiceAccountToken": False,
        "enableServiceLinks": False,
        "terminationGracePeriodSeconds": 0,
        "securityContext": {"seccompProfile": {"type": "RuntimeDefault"}},
        "initContainers": init,
        "containers": [{
            "name": TASK_CONTAINER, "image": images[0], "imagePullPolicy": pull_policy,
            "command": ["sh", "-c", KEEPALIVE], "resources": {"requests": dict(SMALL), "limits": dict(SMALL)},
            "securityContext": {"privileged": False, "allowPrivilegeEscalation": False,
                                "capabilities": {"drop": ["ALL"], "add": list(TASK_CAPABILITIES)}},
            "volumeMounts": [stack_mount, {"name": LOGS_VOLUME, "mountPath": LOGS_MOUNT}],
        }, {
            "name": PROBE_CONTAINER, "image": operator_image, "imagePullPolicy": pull_policy,
            "command": ["sh", "-c", KEEPALIVE], "resources": small,
            "securityContext": dict(RESTRICTED_SECURITY_CONTEXT),
        }],
        "volumes": [{"name": STACK_VOLUME, "emptyDir": {}}, {"name": LOGS_VOLUME, "emptyDir": {}}],
    }
    if runtime_class_name:
        spec["runtimeClassName"] = runtime_class_name
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": canary_name(sweep),
            "namespace": namespace,
            "labels": {labels.SWEEP: label_value(sweep), labels.PREFLIGHT: MARKER, **policy_labels()},
            "ownerReferences": [owner_reference("BuzzSweep", sweep, sweep_uid)],
        },
        "spec": spec,
    }


def started_images(task_images: Sequence[str]) -> list[str]:
    """The task images the canary starts, in container order: `task` runs the first, `image-N` the Nth."""
    return list(dict.fromkeys(task_images))[:MAX_IMAGES]


def covered(task_images: Sequence[str]) -> tuple[int, int]:
    """(images the canary starts, distinct task images)."""
    distinct = len(dict.fromkeys(task_images))
    return min(distinct, MAX_IMAGES), distinct
