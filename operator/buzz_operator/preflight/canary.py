"""The preflight canary pod, as a plain v1 Pod dict (pure).

It is a trial pod in miniature: it gets the agent stack at /opt/buzz exactly as trial pods do —
the `stack` init container, or with mount image the image volume and the install that the
runner's first exec runs — so the trust store the trials seed from is there, and the digests of
the stack the sweep will run, which lock.json records, can be read; one init container
per further task image and one for the operator image prove every image the sweep needs starts
on this cluster, and the `task` container (the first task image, with the trial's /logs) stays
alive for the trials' own setup, trust-store and verifier-deps commands.

It carries the trial pod's policy labels (trial_pod.policy_labels: component trial-pod, managed-by,
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
from buzz_operator.pod.base import (
    KEEPALIVE,
    container,
    empty_dirs,
    guaranteed,
    hardened_pod,
    restricted_container,
    task_image_container,
)
from buzz_operator.pod.trial_pod import (
    LOGS_MOUNT,
    LOGS_VOLUME,
    STACK_RESOURCES,
    policy_labels,
    stack_init,
    stack_mounts,
    stack_volumes,
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
    image_pull_secrets: Sequence[str] = (),
) -> dict[str, Any]:
    if not task_images:
        raise ValueError("the canary needs at least one task image")
    images = started_images(task_images)
    small = guaranteed(STACK_RESOURCES)
    init = [
        *stack_init(stack, pull_policy),
        restricted_container("operator", operator_image, pull_policy, ["sh", "-c", OPERATOR_PROBE], resources=small),
        # a further task image only has to start: the trial pod's task container is the one held
        # to TASK_SECURITY_CONTEXT, this one runs `true` and exits
        *(container(f"image-{index}", image, pull_policy, ["sh", "-c", "true"], resources=small,
                    security_context={"allowPrivilegeEscalation": False})
          for index, image in enumerate(images[1:], start=1)),
    ]
    return hardened_pod(
        name=canary_name(sweep),
        namespace=namespace,
        labels={labels.SWEEP: label_value(sweep), labels.PREFLIGHT: MARKER, **policy_labels()},
        owner=owner_reference("BuzzSweep", sweep, sweep_uid),
        init_containers=init,
        containers=[
            task_image_container(TASK_CONTAINER, images[0], pull_policy, resources=guaranteed(SMALL),
                                 mounts=[*stack_mounts(stack), {"name": LOGS_VOLUME, "mountPath": LOGS_MOUNT}]),
            restricted_container(PROBE_CONTAINER, operator_image, pull_policy, ["sh", "-c", KEEPALIVE],
                                 resources=small),
        ],
        volumes=[*stack_volumes(stack, pull_policy), *empty_dirs(LOGS_VOLUME)],
        # nothing in the canary needs a graceful stop: it is deleted once its checks are read
        grace_seconds=0,
        runtime_class_name=runtime_class_name,
        # the trials' own pull Secrets: the canary pulls what they will, with the same credentials
        image_pull_secrets=image_pull_secrets,
    )


def started_images(task_images: Sequence[str]) -> list[str]:
    """The task images the canary starts, in container order: `task` runs the first, `image-N` the Nth."""
    return list(dict.fromkeys(task_images))[:MAX_IMAGES]


def covered(task_images: Sequence[str]) -> tuple[int, int]:
    """(images the canary starts, distinct task images)."""
    distinct = len(dict.fromkeys(task_images))
    return min(distinct, MAX_IMAGES), distinct
