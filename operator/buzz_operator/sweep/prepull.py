"""Images pulled ahead (pure; docs/registry.md#images-pulled-ahead): which of a sweep's images
each node should have before its trials' pods need them, which pull pods to start now within the
bound, which to delete, and what the sweep's status says about it.

The images wanted are the ones every trial pod runs (the stack image and the operator's, which
serves the forwarder) and the task images of the next trials in plan order, as far ahead as a
window reaches: a sweep of 89 tasks pulls its images a few at a time, as its trials come, and
never all 89 at once. A node counts when a trial pod could run there: Ready, schedulable, and
without a taint that keeps pods off it (trial pods tolerate none)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from buzz_operator.api import labels
from buzz_operator.pod.pull_pod import HOSTNAME_LABEL
from buzz_operator.pod.state import PULL_FAILURES, pull_cause

KEEP_OFF = ("NoSchedule", "NoExecute")
MAX_NODES = 64  # the nodes of a bigger cluster are not pulled to ahead: see docs/registry.md
FAILURES_SHOWN = 3


@dataclass(frozen=True)
class Node:
    name: str
    hostname: str
    images: frozenset[str]  # what the kubelet reports (its 50 biggest images by default)


class PullState(StrEnum):
    PULLING = "pulling"
    PULLED = "pulled"
    FAILED = "failed"


@dataclass(frozen=True)
class PullPod:
    name: str
    image: str
    node: str
    state: PullState
    why: str = ""


def nodes_for_trials(items: Iterable[Mapping[str, Any]], limit: int = MAX_NODES) -> list[Node]:
    """The nodes a trial pod could run on, by name, at most ``limit``."""
    found = []
    for item in items:
        meta, spec, status = item.get("metadata") or {}, item.get("spec") or {}, item.get("status") or {}
        ready = any(c.get("type") == "Ready" and c.get("status") == "True" for c in status.get("conditions") or [])
        kept_off = any(t.get("effect") in KEEP_OFF for t in spec.get("taints") or [])
        hostname = (meta.get("labels") or {}).get(HOSTNAME_LABEL)
        if not ready or spec.get("unschedulable") or kept_off or not hostname:
            continue
        images = frozenset(name for image in status.get("images") or [] for name in image.get("names") or [])
        found.append(Node(str(meta["name"]), str(hostname), images))
    return sorted(found, key=lambda n: n.name)[:limit]


def wanted_images(common: Sequence[str], next_task_images: Sequence[str]) -> list[str]:
    """The images to have on the nodes, in the order to pull them: the ones every trial pod runs
    first, then the next trials' task images; each once."""
    return list(dict.fromkeys([*common, *next_task_images]))


def pull_state(pod: Mapping[str, Any]) -> PullPod:
    """What a pull pod says: pulled once its container ran (whatever it exited with) or the pod
    ended; failed when the kubelet gave up pulling."""
    meta, status = pod.get("metadata") or {}, pod.get("status") or {}
    annotations = meta.get("annotations") or {}
    image, node = str(annotations.get(labels.PULL_IMAGE, "")), str(annotations.get(labels.PULL_NODE, ""))
    name = str(meta.get("name", ""))
    for container in status.get("containerStatuses") or []:
        state = container.get("state") or {}
        waiting = state.get("waiting") or {}
        if waiting.get("reason") in PULL_FAILURES:
            message = str(waiting.get("message") or waiting.get("reason"))
            return PullPod(name, image, node, PullState.FAILED, pull_cause(message) or message[:160])
        if state.get("running") or state.get("terminated") or container.get("imageID"):
            return PullPod(name, image, node, PullState.PULLED)
    if status.get("phase") in ("Succeeded", "Failed"):
        return PullPod(name, image, node, PullState.PULLED)
    return PullPod(name, image, node, PullState.PULLING)


@dataclass(frozen=True)
class PullPlan:
    start: list[tuple[str, Node]]  # (image, node) pulls to start now, in order
    delete: list[str]  # pull pods done with: failed, or of an image no longer wanted and not pulling
    pulled: int  # (image, node) pairs of the wanted images that are on their node
    pulling: int
    failed: list[str]  # "<image>: <cause>" of the failed pulls, the first few


def plan_pulls(wanted: Sequence[str], nodes: Sequence[Node], pods: Sequence[PullPod], *, concurrency: int,
               failed_before: Iterable[str] = ()) -> PullPlan:
    """At most ``concurrency`` pulls in flight for the sweep; an image that failed to pull (now,
    or in ``failed_before``, the images the status lists) is not tried again: its trials fail
    with the kubelet's own reason, as they would have without the pull ahead."""
    by_pair = {(p.image, p.node): p for p in pods}
    failed_images = set(failed_before)
    failures = [f"{p.image}: {p.why}" for p in pods if p.state is PullState.FAILED]
    failed_images |= {p.image for p in pods if p.state is PullState.FAILED}
    wanted_set = set(wanted)
    pulling = sum(1 for p in pods if p.state is PullState.PULLING)
    delete = [p.name for p in pods
              if p.state is PullState.FAILED or (p.image not in wanted_set and p.state is not PullState.PULLING)]
    start: list[tuple[str, Node]] = []
    pulled = 0
    room = max(concurrency - pulling, 0)
    for image in wanted:
        for node in nodes:
            pod = by_pair.get((image, node.name))
            if image in node.images or (pod is not None and pod.state is PullState.PULLED):
                pulled += 1
            elif pod is None and image not in failed_images and len(start) < room:
                start.append((image, node))
    return PullPlan(start, delete, pulled, pulling, failures[:FAILURES_SHOWN])
