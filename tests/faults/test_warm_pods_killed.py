"""The operator SIGKILLed while warm pods are up (docs/warm-pods.md), and restarted each time (the
`buzz-operator` console script as a subprocess): once when the first warm pods wait for their
trials, once when a trial has just claimed one. A sweep of six tasks that take a few seconds each,
at parallelism 2 with two warm pods. Every trial ends exactly once and scores; no trial pod is made
twice (a warm pod is claimed, never replaced by a second pod of its name); every bundle is in the
store; and once the sweep is complete no warm or pull pod is left.

Prints: warm pods killed: <terminal>/6 terminal, <claimed> claimed warm, <dup> duplicate pods,
<left> pods left, <missing> bundles missing.
"""

from __future__ import annotations

import asyncio
import time
from collections import defaultdict
from pathlib import Path

from buzz_operator.api import labels
from buzz_operator.api.common import GROUP, VERSION
from buzz_operator.kube.client import Kube

from tests.support.cluster import in_registry, kubectl
from tests.support.hungry_tasks import hello_image, slow_tasks

from .conftest import OperatorProcess, list_trials, settled, wait_for

COUNT, RUN_S = 6, 10


async def test_operator_killed_with_warm_pods_up_loses_and_leaks_nothing(  # type: ignore[no-untyped-def]
    kube: Kube, namespace, crds, sweep_secrets, make_sweep, tmp_path: Path
) -> None:
    store = tmp_path / "store"
    kubectl("-n", namespace, "create", "configmap", "slow-tasks",
            *(f"--from-literal={k}={v}" for k, v in slow_tasks(COUNT, RUN_S, in_registry(hello_image())).items()))
    body = make_sweep("warmkill", store_url=f"file://{store}", tasks=[f"slow-{n}" for n in range(1, COUNT + 1)],
                      parallelism=2, warmPods=2, cpuRequestFraction=0.1, retry={"maxRetries": 2, "backoffSeconds": 1})
    body["spec"]["dataset"] = {"configMapRef": {"name": "slow-tasks"}}
    pods_seen: dict[str, set[str]] = defaultdict(set)  # trial pod name -> uids
    warm_seen: set[str] = set()
    stop_watching = asyncio.Event()

    async def watch_pods() -> None:
        while not stop_watching.is_set():
            listed = await kube.core.list_namespaced_pod(namespace, label_selector=f"{labels.COMPONENT}="
                                                                               f"{labels.TRIAL_POD}")
            for pod in listed.items:
                pods_seen[pod.metadata.name].add(pod.metadata.uid)
                if (pod.metadata.labels or {}).get(labels.WARM) == "true":
                    warm_seen.add(pod.metadata.name)
            await asyncio.sleep(0.3)

    def claimed(trials: list[dict]) -> list[str]:  # type: ignore[type-arg]
        return [t["metadata"]["name"] for t in trials if ((t.get("status") or {}).get("podStart") or {}).get("warm")]

    operator = OperatorProcess(namespace, tmp_path)
    watcher = asyncio.create_task(watch_pods())
    killed_at: list[str] = []
    started = time.monotonic()
    try:
        operator.start()
        await kube.custom.create_namespaced_custom_object(GROUP, VERSION, namespace, "buzzsweeps", body)

        async def warm_up() -> bool:
            return bool(warm_seen - {t["metadata"]["name"] for t in await list_trials(kube, namespace)})

        async def one_claimed() -> bool:
            return bool(claimed(await list_trials(kube, namespace)))

        for what, reached in (("warm pods waiting for their trials", warm_up), ("a warm pod claimed", one_claimed)):
            await wait_for(reached, 600, what, poll=0.2)
            operator.kill()
            killed_at.append(f"{what} @{time.monotonic() - started:.0f}s")
            await asyncio.sleep(1)
            operator.start()

        async def all_settled() -> list[dict] | None:  # type: ignore[type-arg]
            found = await list_trials(kube, namespace)
            return found if len(found) == COUNT and all(settled(t) for t in found) else None

        trials = await wait_for(all_settled, 900, "every trial settled", poll=2)

        async def nothing_left() -> bool:
            listed = await kube.core.list_namespaced_pod(
                namespace, label_selector=f"{labels.SWEEP}=warmkill,{labels.COMPONENT}!={labels.TRIAL_POD}")
            warm = await kube.core.list_namespaced_pod(namespace, label_selector=f"{labels.WARM}=true")
            return not listed.items and not warm.items

        await wait_for(nothing_left, 120, "no warm or pull pod left")
    finally:
        stop_watching.set()
        await watcher
        code = operator.stop()
    names = {t["metadata"]["name"] for t in trials}
    terminal = sum(t["status"]["phase"] in ("Succeeded", "Failed") for t in trials)
    scored = sum(t["status"].get("reward") == 1.0 for t in trials)
    duplicate = {n: u for n, u in pods_seen.items() if len(u) > 1}
    missing = [n for n in names if not (store / "warmkill" / n / "result.json").is_file()]
    strays = sorted(set(pods_seen) - {f"{n}{suffix}" for n in names for suffix in ("", "-r1", "-r2")}
                    - {"warmkill-preflight"})
    print(f"\nwarm pods, operator SIGKILLed {len(killed_at)}x ({'; '.join(killed_at)}): {terminal}/{COUNT} terminal "
          f"({scored} scored 1.0), {len(claimed(trials))} claimed warm, {len(warm_seen)} warm pods seen, "
          f"{len(duplicate)} duplicate pods, {len(strays)} pods of no trial, {len(missing)} bundles missing")
    assert code == 0, operator.log_path.read_text()[-3000:]
    assert terminal == scored == COUNT, unscored_story(trials, store / "warmkill", operator.log_path)
    assert claimed(trials), "no trial started on a warm pod"
    assert not duplicate and not strays and not missing, (duplicate, strays, missing)


def unscored_story(trials: list[dict], bundles: Path, log: Path) -> str:  # type: ignore[type-arg]
    """What a trial that did not score 1.0 went through: its status, its result.json's verifier
    and exception parts, and the operator's log lines naming it; so a rare failure in CI says why."""
    import json

    told = []
    lines = log.read_text(errors="replace").splitlines()
    for trial in trials:
        status = trial.get("status") or {}
        if status.get("reward") == 1.0:
            continue
        name = trial["metadata"]["name"]
        result = bundles / name / "result.json"
        found = json.loads(result.read_text()) if result.is_file() else {}
        told.append(f"{name}: status {json.dumps(status, sort_keys=True)[:3000]}\n"
                    f"  result verifier {found.get('verifier_result')} exception {found.get('exception_info')}\n"
                    + "\n".join(f"  | {line[:400]}" for line in lines if name in line)[-6000:])
    return "\n".join(told)
