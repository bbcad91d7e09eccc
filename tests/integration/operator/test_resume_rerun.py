"""A sweep's storage outlives the sweep: re-created under the same name it resumes into that
storage — finished trials adopted from their committed bundles, never run twice — unless the
lock.json there belongs to a different experiment; and spec.rerun re-runs exactly the trials
whose recorded outcome matches, once, keeping the earlier run under reruns/<generation>/."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import asyncpg
from kopf.testing import KopfRunner

from tests.integration.operator.test_operator import (
    apply,
    condition,
    kubectl,
    kubectl_json,
    operator_args,
    wait_until,
)

TASK = "user-mention"


def _sweep(namespace: str, name: str) -> dict[str, Any]:
    return kubectl_json("-n", namespace, "get", "buzzsweep", name)


def _complete(namespace: str, name: str, generation: int | None = None):  # type: ignore[no-untyped-def]
    def check() -> dict[str, Any] | None:
        sweep = _sweep(namespace, name)
        done = condition(sweep, "Complete")
        fresh = generation is None or (sweep.get("status") or {}).get("observedGeneration") == generation
        return sweep if fresh and done and done["status"] == "True" else None
    return check


def _only_trial(namespace: str) -> dict[str, Any]:
    items = kubectl_json("-n", namespace, "get", "buzztrials")["items"]
    assert len(items) == 1, [t["metadata"]["name"] for t in items]
    return items[0]


async def _tries(dsn: str) -> int:
    conn = await asyncpg.connect(dsn)
    try:
        return int(await conn.fetchval("SELECT count(*) FROM benchmark.trial_manifest"))
    finally:
        await conn.close()


async def test_resume_adopts_rerun_reruns_once_and_a_changed_experiment_is_refused(  # type: ignore[no-untyped-def]
    namespace, crds, sweep_secrets, make_sweep, cluster_relay, tmp_path: Path
) -> None:
    store = tmp_path / "store"
    body = make_sweep("r1", store_url=f"file://{store}", tasks=[TASK])
    with KopfRunner(operator_args(namespace), timeout=60) as runner:
        apply(namespace, body)
        wait_until(_complete(namespace, "r1"), 420, "the first run")
        first = _only_trial(namespace)
        name = first["metadata"]["name"]
        assert first["status"]["reward"] == 1.0
        assert await _tries(cluster_relay.target.pg_dsn) == 1
        lock = json.loads((store / "r1" / "lock.json").read_text())
        assert lock["tasks"] and (store / "r1" / "config.json").is_file()
        # the stack as the preflight canary installed it, and the trial's pod installed the same one
        assert lock["stack"]["layout"] == "folder" and "buzz-acp" in lock["stack"]["binaries"], lock["stack"]
        ran = json.loads((store / "r1" / name / "result.json").read_text())["agent_result"]["metadata"]["stack"]
        assert ran["digest"] == lock["stack"]["digest"] == first["status"]["stack"]["digest"]

        # 1. the sweep deleted and created again: it resumes into its storage; the trial is adopted
        kubectl("-n", namespace, "delete", "buzzsweep", "r1", "--timeout=120s")
        wait_until(lambda: not kubectl_json("-n", namespace, "get", "buzztrials")["items"], 120, "trials gone")
        apply(namespace, body)
        wait_until(_complete(namespace, "r1"), 300, "the resumed sweep")
        adopted = _only_trial(namespace)
        assert adopted["metadata"]["uid"] != first["metadata"]["uid"]
        released = condition(adopted, "Released")
        assert released is not None and released["reason"] == "Adopted", adopted["status"]
        assert adopted["status"]["reward"] == 1.0 and "pod" not in adopted["status"]
        assert adopted["status"]["stack"]["digest"] == lock["stack"]["digest"]  # read from its result.json
        assert await _tries(cluster_relay.target.pg_dsn) == 1  # nothing ran again
        assert json.loads((store / "r1" / "lock.json").read_text()) == lock

        # 2. spec.rerun: trials whose outcome is ok run again, once; the earlier run is kept
        kubectl("-n", namespace, "patch", "buzzsweep", "r1", "--type=merge", "-p",
                json.dumps({"spec": {"rerun": {"reasons": ["ok"]}}}))
        generation = _sweep(namespace, "r1")["metadata"]["generation"]

        def rerun_done() -> dict[str, Any] | None:
            items = kubectl_json("-n", namespace, "get", "buzztrials")["items"]
            return next((t for t in items if t["metadata"].get("annotations", {}).get(
                "bench.buzz.dev/created-at-generation") == str(generation)
                and (condition(t, "Released") or {}).get("reason") == "TornDown"), None)

        rerun = wait_until(rerun_done, 420, "the re-run trial to finish")
        assert rerun["metadata"]["name"] == name and rerun["status"]["reward"] == 1.0
        kept = store / "r1" / name / "reruns" / str(generation)
        assert json.loads((kept / "result.json").read_text())["verifier_result"]["rewards"]["reward"] == 1.0
        assert (store / "r1" / name / "result.json").is_file()  # the new run committed afresh
        assert await _tries(cluster_relay.target.pg_dsn) == 2
        await asyncio.sleep(12)  # two more sweep ticks: the re-run trial is not selected again
        assert _only_trial(namespace)["metadata"]["uid"] == rerun["metadata"]["uid"]

        # 3. a different experiment under the same name and storage is refused, naming the change
        kubectl("-n", namespace, "delete", "buzzsweep", "r1", "--timeout=120s")
        wait_until(lambda: not kubectl_json("-n", namespace, "get", "buzztrials")["items"], 120, "trials gone")
        changed = make_sweep("r1", store_url=f"file://{store}", tasks=[TASK, "hello-file"])

        def refused() -> dict[str, Any] | None:
            accepted = condition(_sweep(namespace, "r1"), "Accepted")
            return accepted if accepted and accepted["status"] == "False" else None

        apply(namespace, changed)
        accepted = wait_until(refused, 120, "the changed sweep to be refused")
        assert "lock.json" in accepted["message"] and "task hello-file added" in accepted["message"], accepted
        assert kubectl_json("-n", namespace, "get", "buzztrials")["items"] == []
    assert runner.exception is None, runner.output
