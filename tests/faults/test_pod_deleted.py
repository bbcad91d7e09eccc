"""A running task pod deleted under a trial: the trial is retried as infra in a fresh try and
finishes scored; with retry.maxRetries 0 it ends Failed with failure class infra and no reward
(never a 0). One in-process operator runs both sweeps side by side.

Prints: pod deleted: retried and finished <n>/1; maxRetries 0: infra, reward <None>.
"""

from __future__ import annotations

import time
from pathlib import Path

from buzz_operator.api.common import GROUP, VERSION
from buzz_operator.kube import objects
from buzz_operator.kube.client import Kube
from kopf.testing import KopfRunner

from .conftest import list_trials, operator_args, settled, wait_for


async def test_deleted_pod_is_retried_as_infra(  # type: ignore[no-untyped-def]
    kube: Kube, namespace, crds, sweep_secrets, make_sweep, tmp_path: Path
) -> None:
    store = tmp_path / "store"
    sweeps = {"retry": {"maxRetries": 1, "backoffSeconds": 1}, "noretry": {"maxRetries": 0}}
    deleted: dict[str, str] = {}
    with KopfRunner(operator_args(namespace), timeout=60) as runner:
        for name, retry in sweeps.items():
            await kube.custom.create_namespaced_custom_object(GROUP, VERSION, namespace, "buzzsweeps", make_sweep(
                name, store_url=f"file://{store}", tasks=["hello-file"], retry=retry, cpuRequestFraction=0.2))

        async def delete_running_pods() -> bool:
            for trial in await list_trials(kube, namespace):
                status = trial.get("status") or {}
                sweep = trial["spec"]["sweepName"]
                if sweep not in deleted and status.get("phase") == "Running" and status.get("pod"):
                    await objects.delete_pod(kube, namespace, status["pod"], grace_seconds=0)
                    deleted[sweep] = status["pod"]
            return len(deleted) == len(sweeps)

        started = time.monotonic()
        await wait_for(delete_running_pods, 300, "both trials Running", poll=0.1)

        async def all_settled() -> list[dict] | None:  # type: ignore[type-arg]
            found = await list_trials(kube, namespace)
            return found if len(found) == 2 and all(settled(t) for t in found) else None

        trials = {t["spec"]["sweepName"]: t for t in await wait_for(all_settled, 420, "both trials settled")}
        elapsed = time.monotonic() - started
    assert runner.exception is None, runner.output[-3000:]

    retried, final = trials["retry"]["status"], trials["noretry"]["status"]
    print(f"\npod deleted while Running: retried as infra and finished {int(retried.get('phase') == 'Succeeded')}/1 "
          f"(reward {retried.get('reward')}, retries {retried.get('retries')}, first try ended "
          f"{[a.get('reason') for a in retried.get('failedTries', [])]}); maxRetries 0: {final.get('phase')}/"
          f"{final.get('failureClass')}/{final.get('reason')}, reward {final.get('reward')} ({elapsed:.0f}s)")
    assert retried["phase"] == "Succeeded" and retried["reward"] == 1.0, retried
    assert retried["retries"] == 1, retried
    assert retried["failedTries"][0]["failureClass"] == "infra", retried["failedTries"]
    assert retried["failedTries"][0]["reason"] == "PodDeleted", retried["failedTries"]
    assert final["phase"] == "Failed" and final["failureClass"] == "infra", final
    assert final.get("reward") is None, final
    # the deleted pods are gone, and so are the new try's (teardown)
    pods = await kube.core.list_namespaced_pod(namespace, label_selector="app.kubernetes.io/component=trial-pod")
    assert [p.metadata.name for p in pods.items if not p.metadata.deletion_timestamp] == []
    # the retried trial's bundle is committed once, under its own name
    assert (store / "retry" / trials["retry"]["metadata"]["name"] / "result.json").is_file()
