"""Images pulled ahead, one tick's share (docs/registry.md#images-pulled-ahead): lists the nodes a
trial pod could run on and the sweep's pull pods, starts the pulls sweep/prepull.py plans (at most
the operator's prepull concurrency in flight), deletes the pull pods it is done with, and returns
the status it reports. A sweep that pulls with Never, is suspended or has no trial left to start
pulls nothing and keeps no pull pod. Pull pods are the sweep's by owner reference, so a deleted
sweep takes them along; an operator restart finds them by label and goes on."""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from typing import Any

from kubernetes_asyncio.client.exceptions import ApiException

from buzz_operator.api import labels
from buzz_operator.api.common import ImagePullPolicy
from buzz_operator.api.naming import label_value
from buzz_operator.api.sweep import ImagesStatus
from buzz_operator.kube import objects
from buzz_operator.kube.client import Kube
from buzz_operator.pod.pull_pod import build_pull_pod
from buzz_operator.sweep.drive.inputs import SweepInputs
from buzz_operator.sweep.drive.plan import Plan
from buzz_operator.sweep.drive.tick import Tick
from buzz_operator.sweep.planner import PlannedTrial
from buzz_operator.sweep.prepull import Node, nodes_for_trials, plan_pulls, pull_state, wanted_images

log = logging.getLogger(__name__)
NODES_FRESH_S = 15.0  # one node list serves every sweep's ticks for this long
_nodes: tuple[float, list[Node]] | None = None


def pull_selector(sweep: str) -> str:
    return f"{labels.COMPONENT}={labels.IMAGE_PULL},{labels.SWEEP}={label_value(sweep)}"


async def trial_nodes(kube: Kube) -> list[Node]:
    global _nodes
    now = time.monotonic()
    if _nodes is None or now - _nodes[0] > NODES_FRESH_S:
        listed = kube.api.sanitize_for_serialization(await kube.core.list_node())
        _nodes = (now, nodes_for_trials(listed.get("items") or []))
    return _nodes[1]


def forget_nodes() -> None:
    """The next tick lists the nodes again (tests that change them)."""
    global _nodes
    _nodes = None


async def _pull_pods(kube: Kube, namespace: str, sweep: str) -> list[dict[str, Any]]:
    listed = await kube.core.list_namespaced_pod(namespace, label_selector=pull_selector(sweep))
    return list(kube.api.sanitize_for_serialization(listed).get("items") or [])


async def clear_pull_pods(kube: Kube, namespace: str, sweep: str) -> int:
    """Deletes every pull pod of the sweep; how many there were."""
    pods = await _pull_pods(kube, namespace, sweep)
    for pod in pods:
        await objects.delete_pod(kube, namespace, pod["metadata"]["name"], grace_seconds=0)
    return len(pods)


def next_task_images(read: SweepInputs, upcoming: Sequence[PlannedTrial]) -> list[str]:
    """The next trials' images: each task's, then its compose services' (docs/task-toml.md#compose)."""
    by_name = {t.name: t for t in read.tasks}
    return [image for p in upcoming if p.task in by_name
            for image in by_name[p.task].images(read.spec.task_image_registry, read.dataset)]


async def prepull(tick: Tick, read: SweepInputs, planned: Plan, *, warm: int = 0) -> ImagesStatus | None:
    """This tick's pulls; the sweep's images status (None when it pulls nothing ahead)."""
    spec, settings = read.spec, tick.settings
    previous = tick.previous.images or ImagesStatus()
    if spec.image_pull_policy is ImagePullPolicy.NEVER or settings.prepull_concurrency == 0:
        return previous.model_copy(update={"warm": warm}) if warm or tick.previous.images else None
    if spec.suspend or not planned.missing.first:
        await clear_pull_pods(tick.kube, tick.namespace, tick.name)
        return previous.model_copy(update={"pulling": 0, "wanted": 0, "warm": warm})
    common = [spec.stack_source(settings.stack).image, spec.operator_image or settings.operator_image]
    wanted = wanted_images(common, next_task_images(read, planned.missing.first))
    nodes = await trial_nodes(tick.kube)
    pods = [pull_state(p) for p in await _pull_pods(tick.kube, tick.namespace, tick.name)]
    failed_before = [line.split(": ", 1)[0] for line in previous.failed]
    decided = plan_pulls(wanted, nodes, pods, concurrency=settings.prepull_concurrency, failed_before=failed_before)
    for name in decided.delete:
        await objects.delete_pod(tick.kube, tick.namespace, name, grace_seconds=0)
    secrets = [ref.name for ref in spec.image_pull_secrets or []]
    created = 0
    for image, node in decided.start:
        body = build_pull_pod(sweep=tick.name, sweep_uid=tick.uid, namespace=tick.namespace, image=image, node=node.name,
                              hostname=node.hostname, pull_policy=spec.image_pull_policy.value, pull_secrets=secrets)
        try:
            await objects.create_pod(tick.kube, tick.namespace, body)
        except ApiException as error:  # refused (a quota, an admission policy): the trials pull for themselves
            log.info("sweep %s/%s: pull pod for %s on %s refused (HTTP %s); the trials pull it themselves",
                     tick.namespace, tick.name, image, node.name, error.status)
            break
        created += 1
    failed = list(dict.fromkeys([*previous.failed, *decided.failed]))[:8]
    return ImagesStatus(nodes=len(nodes), wanted=len(wanted), pulled=decided.pulled, pulling=decided.pulling + created,
                        pull_pods=previous.pull_pods + created, failed=failed, warm=warm)
