"""Warm pods and images pulled ahead, through the operator on the real kubelet, pulling from the
local registry with its login (docs/warm-pods.md, docs/registry.md#images-pulled-ahead).

A sweep of three tasks that each take a few seconds (tests/support/hungry_tasks.py slow_tasks,
their image pinned in the registry) at parallelism 1 with one warm pod: on a node that has none of
the registry's images, pull pods bring them ahead; the second and third trials start on pods their
sweep made ready while the trial before them ran; every trial scores; no pod is made that no trial
used; and once the sweep is complete no warm or pull pod is left. A suspended sweep deletes its
warm pods."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from buzz_operator.api import labels
from kopf.testing import KopfRunner

from tests.support.cluster import hack, in_registry, kubectl, kubectl_json
from tests.support.hungry_tasks import hello_image, slow_tasks

from .test_operator import apply, condition, operator_args, wait_until

TASKS = ["slow-1", "slow-2", "slow-3"]
RUN_S = 12  # each task's command: long enough for the sweep's ticks (5 s) to come while it runs


def slow_sweep(namespace: str, make_sweep, name: str, store: Path, **spec: object) -> dict[str, Any]:  # type: ignore[no-untyped-def]
    kubectl("-n", namespace, "create", "configmap", "slow-tasks",
            *(f"--from-literal={k}={v}" for k, v in slow_tasks(len(TASKS), RUN_S, in_registry(hello_image())).items()))
    body = make_sweep(name, store_url=f"file://{store}", tasks=TASKS, parallelism=1, **spec)
    body["spec"]["dataset"] = {"configMapRef": {"name": "slow-tasks"}}
    return body


def pods(namespace: str, selector: str) -> list[dict[str, Any]]:
    return kubectl_json("-n", namespace, "get", "pods", "-l", selector)["items"]


def node_images() -> set[str]:
    return {name for node in kubectl_json("get", "nodes")["items"]
            for image in node["status"].get("images") or [] for name in image.get("names") or []}


def forget_registry_images() -> None:
    """The node without the registry's images, and its status saying so (the kubelet lists the
    images it has at its next status update)."""
    hack("registry.sh", "forget")
    stack = in_registry("docker.io/buzz/stack:dev")
    wait_until(lambda: stack not in node_images(), 90, "the node's status to drop the registry's images")


def scheduled_pods(namespace: str) -> set[str]:
    events = kubectl_json("-n", namespace, "get", "events", "--field-selector", "reason=Scheduled")["items"]
    return {e["involvedObject"]["name"] for e in events}


async def test_trials_claim_warm_pods_whose_images_were_pulled_ahead(  # type: ignore[no-untyped-def]
    namespace, crds, sweep_secrets, make_sweep, tmp_path: Path
) -> None:
    forget_registry_images()
    body = slow_sweep(namespace, make_sweep, "warm", tmp_path / "store", warmPods=1)
    seen_warm: set[str] = set()
    seen_pull: set[str] = set()
    with KopfRunner(operator_args(namespace), timeout=60) as runner:
        apply(namespace, body)

        def complete() -> dict[str, Any] | None:
            seen_warm.update(p["metadata"]["name"] for p in pods(namespace, f"{labels.WARM}=true"))
            seen_pull.update(p["metadata"]["name"] for p in pods(namespace, f"{labels.COMPONENT}={labels.IMAGE_PULL}"))
            sweep = kubectl_json("-n", namespace, "get", "buzzsweep", "warm")
            done = condition(sweep, "Complete")
            return sweep if done and done["status"] == "True" else None

        sweep = wait_until(complete, 600, "the sweep to complete")
        # the sweep's last ticks delete what is left of its pulls and warm pods
        wait_until(lambda: not pods(namespace, f"{labels.WARM}=true") and not pods(
            namespace, f"{labels.COMPONENT}={labels.IMAGE_PULL}"), 60, "no warm or pull pod left")
    assert runner.exception is None, runner.output
    status = sweep["status"]
    assert (status["total"], status["succeeded"], status["meanReward"]) == (3, 3, 1.0), status
    images = status["images"]
    print(f"\nimages ahead: {json.dumps(images)}; pull pods seen {len(seen_pull)}, warm pods seen {sorted(seen_warm)}")
    assert images["pullPods"] >= 1 and images["nodes"] == 1 and images["failed"] == [], images
    trials = sorted(kubectl_json("-n", namespace, "get", "buzztrials")["items"],
                    key=lambda t: t["status"]["phaseTimes"]["provisioning"])
    starts = {t["metadata"]["name"]: t["status"]["podStart"] for t in trials}
    print("pod starts:", json.dumps(starts))
    first, *later = trials
    assert starts[first["metadata"]["name"]]["warm"] is False
    assert all(starts[t["metadata"]["name"]]["warm"] for t in later), starts
    assert all(t["status"]["reward"] == 1.0 for t in trials)
    # how long each waited is bench/warm.py's to measure; here, that each pod's pulls were read
    assert all(s["pullSeconds"] is not None for s in starts.values())
    # every trial pod that was scheduled belongs to a trial: no warm pod was made for nothing
    trial_names = {t["metadata"]["name"] for t in trials}
    scheduled = scheduled_pods(namespace)
    trial_pods = {p for p in scheduled if p.startswith("warm-") and "-pull-" not in p and not p.endswith("-preflight")}
    assert trial_pods == trial_names, scheduled
    assert seen_warm <= trial_names, seen_warm
    bundle = json.loads((tmp_path / "store" / "warm" / later[0]["metadata"]["name"] / "result.json").read_text())
    assert bundle["agent_result"]["metadata"]["pod_start"]["warm"] is True


async def test_a_suspended_sweep_keeps_no_warm_pod(  # type: ignore[no-untyped-def]
    namespace, crds, sweep_secrets, make_sweep, tmp_path: Path
) -> None:
    body = slow_sweep(namespace, make_sweep, "held", tmp_path / "store", warmPods=2)
    with KopfRunner(operator_args(namespace), timeout=60) as runner:
        apply(namespace, body)
        warm = wait_until(lambda: pods(namespace, f"{labels.WARM}=true"), 120, "a warm pod")
        assert all(not any(k.startswith("BUZZ_") and "KEY" in k for c in p["spec"]["containers"]
                           for k in (e["name"] for e in c.get("env") or [])) for p in warm)
        assert all(p["metadata"]["ownerReferences"][0]["kind"] == "BuzzSweep" for p in warm)
        assert len(pods(namespace, f"{labels.WARM}=true")) <= 2
        apply(namespace, {**body, "spec": {**body["spec"], "suspend": True}})
        wait_until(lambda: not pods(namespace, f"{labels.WARM}=true"), 60, "the warm pods deleted")
        await asyncio.sleep(6)  # a tick later, still none
        assert not pods(namespace, f"{labels.WARM}=true")
    assert runner.exception is None, runner.output
