"""Images pulled ahead (sweep/prepull.py): the nodes that count, the pulls started within the
bound, the pods deleted, a failed image not tried again."""

from __future__ import annotations

from typing import Any

from buzz_operator.api import labels
from buzz_operator.pod.pull_pod import build_pull_pod, pull_pod_name
from buzz_operator.pod.state import PULL_DENIED
from buzz_operator.sweep.prepull import (
    Node,
    PullPod,
    PullState,
    nodes_for_trials,
    plan_pulls,
    pull_state,
    wanted_images,
)


def node(name: str, *, ready: bool = True, taints: list[dict[str, str]] | None = None, images: list[str] = (),
         unschedulable: bool = False) -> dict[str, Any]:
    return {"metadata": {"name": name, "labels": {"kubernetes.io/hostname": f"h-{name}"}},
            "spec": {"taints": taints or [], **({"unschedulable": True} if unschedulable else {})},
            "status": {"conditions": [{"type": "Ready", "status": "True" if ready else "False"}],
                       "images": [{"names": [image, image + "@sha256:x"]} for image in images]}}


def test_only_nodes_a_trial_pod_could_run_on_count() -> None:
    items = [node("b", images=["s:1"]), node("a"), node("down", ready=False), node("cordoned", unschedulable=True),
             node("gpu", taints=[{"key": "gpu", "effect": "NoSchedule"}]),
             node("soft", taints=[{"key": "x", "effect": "PreferNoSchedule"}])]
    found = nodes_for_trials(items)
    assert [n.name for n in found] == ["a", "b", "soft"]
    assert found[1].hostname == "h-b" and "s:1" in found[1].images
    assert len(nodes_for_trials(items, limit=1)) == 1


def test_wanted_images_come_common_first_each_once() -> None:
    assert wanted_images(["stack", "op"], ["t1", "t2", "t1", "stack"]) == ["stack", "op", "t1", "t2"]


def test_pulls_start_within_the_bound_and_skip_what_the_node_has() -> None:
    nodes = [Node("n1", "h1", frozenset({"stack"})), Node("n2", "h2", frozenset())]
    wanted = ["stack", "op", "t1", "t2"]
    first = plan_pulls(wanted, nodes, [], concurrency=3)
    assert [(image, n.name) for image, n in first.start] == [("stack", "n2"), ("op", "n1"), ("op", "n2")]
    assert first.pulled == 1 and first.pulling == 0 and first.delete == []
    # two in flight: one more may start; a pulled pair counts; nothing twice
    pods = [PullPod("p1", "stack", "n2", PullState.PULLED), PullPod("p2", "op", "n1", PullState.PULLING),
            PullPod("p3", "op", "n2", PullState.PULLING)]
    second = plan_pulls(wanted, nodes, pods, concurrency=3)
    assert [(image, n.name) for image, n in second.start] == [("t1", "n1")]
    assert second.pulled == 2 and second.pulling == 2


def test_a_failed_pull_is_deleted_named_and_not_tried_again() -> None:
    nodes = [Node("n1", "h1", frozenset())]
    pods = [PullPod("p1", "bad", "n1", PullState.FAILED, PULL_DENIED), PullPod("p2", "old", "n1", PullState.PULLED),
            PullPod("p3", "gone", "n1", PullState.PULLING)]
    decided = plan_pulls(["bad", "next"], nodes, pods, concurrency=4)
    assert decided.failed == [f"bad: {PULL_DENIED}"]
    assert sorted(decided.delete) == ["p1", "p2"]  # a pull still running is left to finish
    assert [image for image, _ in decided.start] == ["next"]
    again = plan_pulls(["bad", "next"], nodes, [], concurrency=4, failed_before=["bad"])
    assert [image for image, _ in again.start] == ["next"]


def test_a_pull_pod_is_read_as_pulling_pulled_or_failed() -> None:
    pod = build_pull_pod(sweep="s", sweep_uid="u", namespace="ns", image="r/t:1", node="n1", hostname="h1",
                         pull_policy="IfNotPresent", pull_secrets=["login"])
    assert pod["spec"]["nodeSelector"] == {"kubernetes.io/hostname": "h1"}
    assert pod["spec"]["imagePullSecrets"] == [{"name": "login"}]
    assert pod["metadata"]["name"] == pull_pod_name("s", "r/t:1", "n1") != pull_pod_name("s", "r/t:1", "n2")
    assert pod["metadata"]["labels"][labels.COMPONENT] == labels.IMAGE_PULL
    assert pod["metadata"]["ownerReferences"][0]["kind"] == "BuzzSweep"
    assert pull_state(pod).state is PullState.PULLING
    ran = {**pod, "status": {"phase": "Succeeded"}}
    assert pull_state(ran) == PullPod(pod["metadata"]["name"], "r/t:1", "n1", PullState.PULLED)
    # sh missing from the image: the container could not start, but the image was pulled
    crashed = {**pod, "status": {"containerStatuses": [{"imageID": "r/t@sha256:1", "state": {
        "waiting": {"reason": "CreateContainerError"}}}]}}
    assert pull_state(crashed).state is PullState.PULLED
    denied = {**pod, "status": {"containerStatuses": [{"state": {"waiting": {
        "reason": "ErrImagePull", "message": "failed to resolve image: 401 Unauthorized"}}}]}}
    assert pull_state(denied) == PullPod(pod["metadata"]["name"], "r/t:1", "n1", PullState.FAILED, PULL_DENIED)


def test_the_next_trials_compose_services_are_pulled_ahead_too(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from types import SimpleNamespace

    from buzz_operator.dataset.task import load_task
    from buzz_operator.sweep.drive.prepull import next_task_images
    from buzz_operator.sweep.planner import plan_trials

    from tests.unit.dataset.task_factory import make_task

    task = load_task(make_task(tmp_path, extra={"environment/docker-compose.yaml": "services:\n  db:\n    image: redis:7\n"}))
    read = SimpleNamespace(tasks=[task], spec=SimpleNamespace(task_image_registry="r.local/tasks"), dataset="d")
    upcoming = plan_trials("s", "u", "0" * 64, [task.name], 1)
    assert next_task_images(read, upcoming) == [task.image_ref("r.local/tasks", "d"), "redis:7"]  # type: ignore[arg-type]
