"""Settled trials leave kopf's watch (docs/design.md#settled-trials), against the real apiserver:
each finished trial is labelled settled with kopf's finalizer off, and the sweep still counts it;
a settled trial deleted by hand is planned and run again; a restarted operator lists the settled
trials before it plans, so it creates nothing twice and its rollup is the same."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from buzz_operator.api.labels import SETTLED
from buzz_operator.handlers import FINALIZER
from kopf.testing import KopfRunner

from tests.integration.operator.test_operator import (
    apply,
    condition,
    kubectl,
    kubectl_json,
    operator_args,
    wait_until,
)


def trials(namespace: str) -> dict[str, dict[str, Any]]:
    return {t["metadata"]["name"]: t for t in kubectl_json("-n", namespace, "get", "buzztrials")["items"]}


def settled(trial: dict[str, Any]) -> bool:
    meta = trial["metadata"]
    return (meta.get("labels") or {}).get(SETTLED) == "true" and FINALIZER not in (meta.get("finalizers") or [])


async def test_settled_trials_leave_the_watch_and_are_still_counted(  # type: ignore[no-untyped-def]
    namespace, crds, sweep_secrets, make_sweep, tmp_path: Path
) -> None:
    store = tmp_path / "store"

    def sweep_done() -> dict[str, Any] | None:
        sweep = kubectl_json("-n", namespace, "get", "buzzsweep", "st")
        done = condition(sweep, "Complete")
        return sweep if done and done["status"] == "True" and sweep["status"].get("succeeded") == 2 else None

    with KopfRunner(operator_args(namespace), timeout=60) as first:
        apply(namespace, make_sweep("st", store_url=f"file://{store}", tasks=["hello-file"], attempts=2,
                                    parallelism=2))
        wait_until(sweep_done, 420, "the sweep to complete")
        found = wait_until(lambda: (t := trials(namespace)) and all(settled(x) for x in t.values()) and t, 60,
                           "both trials settled")
        assert len(found) == 2
        # deleted by hand: no finalizer holds it, the settled watch drops it, the planner makes it again
        gone = sorted(found)[0]
        old_uid = found[gone]["metadata"]["uid"]
        kubectl("-n", namespace, "delete", "buzztrial", gone, "--wait=true", "--timeout=30s")
        again = wait_until(lambda: (t := trials(namespace).get(gone)) and t["metadata"]["uid"] != old_uid
                           and settled(t) and t, 420, "the deleted trial run again and settled")
        assert again["status"]["phase"] == "Succeeded", again["status"]
        wait_until(sweep_done, 60, "the sweep to count both trials again")
    assert first.exception is None, first.output

    before = {name: t["metadata"]["uid"] for name, t in trials(namespace).items()}
    with KopfRunner(operator_args(namespace), timeout=60) as second:
        # several reconcile ticks (5 s) of an operator whose kopf sees none of the trials
        await asyncio.sleep(20)
        sweep = kubectl_json("-n", namespace, "get", "buzzsweep", "st")
    assert second.exception is None, second.output
    assert {name: t["metadata"]["uid"] for name, t in trials(namespace).items()} == before
    status = sweep["status"]
    assert (status["total"], status["succeeded"], status["meanReward"]) == (2, 2, 1.0), status
    assert condition(sweep, "Complete")["status"] == "True"
