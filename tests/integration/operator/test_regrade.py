"""spec.regrade: the verifier of each finished trial runs again on the evidence its bundle
recorded, in a grading pod of the task image; a task graded on the container's state says it
cannot be regraded. The committed bundle is untouched; the new verifier output is kept under
regrades/<generation>/, and the grading pod is gone afterwards."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from buzz_operator.api.labels import SETTLED
from kopf.testing import KopfRunner

from tests.integration.operator.test_operator import (
    apply,
    condition,
    kubectl,
    kubectl_json,
    operator_args,
    wait_until,
)

TASKS = ["hello-file", "user-mention"]


async def test_regrade_reruns_the_verifier_on_recorded_evidence(  # type: ignore[no-untyped-def]
    namespace, crds, sweep_secrets, make_sweep, tmp_path: Path
) -> None:
    store = tmp_path / "store"
    with KopfRunner(operator_args(namespace), timeout=60) as runner:
        apply(namespace, make_sweep("g1", store_url=f"file://{store}", tasks=TASKS, parallelism=2))

        def complete() -> dict[str, Any] | None:
            sweep = kubectl_json("-n", namespace, "get", "buzzsweep", "g1")
            done = condition(sweep, "Complete")
            return sweep if done and done["status"] == "True" else None

        wait_until(complete, 420, "the sweep to complete")
        before = {t["spec"]["task"]: t for t in kubectl_json("-n", namespace, "get", "buzztrials")["items"]}
        committed = {task: (store / "g1" / t["metadata"]["name"] / "result.json").read_bytes()
                     for task, t in before.items()}
        kubectl("-n", namespace, "patch", "buzzsweep", "g1", "--type=merge", "-p", '{"spec":{"regrade":true}}')
        generation = kubectl_json("-n", namespace, "get", "buzzsweep", "g1")["metadata"]["generation"]

        def regraded() -> dict[str, dict[str, Any]] | None:
            items = {t["spec"]["task"]: t for t in kubectl_json("-n", namespace, "get", "buzztrials")["items"]}
            records = {task: (t.get("status") or {}).get("regrade") for task, t in items.items()}
            return items if all(r and r["generation"] == generation for r in records.values()) else None

        after = wait_until(regraded, 300, "both trials to record a regrade")
        # a regrade takes a settled trial back into kopf's watch; once recorded it leaves again
        wait_until(lambda: all((t["metadata"].get("labels") or {}).get(SETTLED) == "true"
                               for t in kubectl_json("-n", namespace, "get", "buzztrials")["items"]),
                   60, "both regraded trials settled again")
    assert runner.exception is None, runner.output

    native = after["user-mention"]["status"]
    assert native["regrade"]["result"] == "regraded", native["regrade"]
    assert native["regrade"]["previousReward"] == 1.0 and native["reward"] == 1.0
    name = after["user-mention"]["metadata"]["name"]
    kept = store / "g1" / name / "regrades" / str(generation)
    assert native["regrade"]["bundleURL"] == f"file://{kept}"
    assert json.loads((kept / "verifier" / "reward.json").read_text())["reward"] == 1.0
    assert json.loads((kept / "regrade.json").read_text())["previous_reward"] == 1.0

    container = after["hello-file"]["status"]["regrade"]
    assert (container["result"], container["reason"]) == ("not-regradable", "VerifierNeedsContainer"), container
    for task, trial in after.items():
        assert (store / "g1" / trial["metadata"]["name"] / "result.json").read_bytes() == committed[task]
    pods = [p["metadata"]["name"] for p in kubectl_json("-n", namespace, "get", "pods")["items"]
            if "-regrade-" in p["metadata"]["name"] and not p["metadata"].get("deletionTimestamp")]
    assert pods == []
