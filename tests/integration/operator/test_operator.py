"""The operator under KopfRunner on the host, against the real cluster: an invalid sweep is
refused with a condition naming the field; a valid one is planned into owned BuzzTrials whose
daemons walk the corridor to a scored, bundled, torn-down end."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path
from typing import Any

from kopf.testing import KopfRunner

from tests.support.cluster import kubectl_json

ROOT = Path(__file__).resolve().parents[3]




def kubectl(*args: str) -> None:
    subprocess.run(["kubectl", *args], check=True, capture_output=True, text=True)


def apply(namespace: str, body: dict[str, Any]) -> None:
    subprocess.run(["kubectl", "-n", namespace, "apply", "-f", "-"], input=json.dumps(body), check=True,
                   capture_output=True, text=True)


def wait_until(predicate, timeout_s: float, what: str):  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if (value := predicate()):
            return value
        time.sleep(1)
    raise AssertionError(f"timed out waiting for {what}")


def condition(body: dict[str, Any], type_: str) -> dict[str, Any] | None:
    return next((c for c in (body.get("status") or {}).get("conditions", []) if c["type"] == type_), None)


def operator_args(namespace: str) -> list[str]:
    return ["run", "--standalone", "-n", namespace, "-m", "buzz_operator.handlers"]


async def test_invalid_sweep_is_not_accepted(namespace, crds, sweep_secrets, make_sweep, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    body = make_sweep("bad", store_url=f"file://{tmp_path}", tasks=["no-such-task"])
    with KopfRunner(operator_args(namespace), timeout=60) as runner:
        apply(namespace, body)

        def refused() -> dict[str, Any] | None:
            accepted = condition(kubectl_json("-n", namespace, "get", "buzzsweep", "bad"), "Accepted")
            return accepted if accepted and accepted["status"] == "False" else None

        accepted = wait_until(refused, 60, "the sweep to be refused")
    assert accepted["reason"] == "InvalidSpec" and accepted["message"].startswith("spec.include:"), accepted
    assert kubectl_json("-n", namespace, "get", "buzztrials")["items"] == []
    assert runner.exception is None, runner.output


async def test_oracle_sweep_runs_to_scored_bundles(namespace, crds, sweep_secrets, make_sweep, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    store = tmp_path / "store"
    body = make_sweep("s1", store_url=f"file://{store}", tasks=["user-mention"])
    with KopfRunner(operator_args(namespace), timeout=60) as runner:
        apply(namespace, body)

        def complete() -> dict[str, Any] | None:
            sweep = kubectl_json("-n", namespace, "get", "buzzsweep", "s1")
            done = condition(sweep, "Complete")
            return sweep if done and done["status"] == "True" else None

        sweep = wait_until(complete, 420, "the sweep to complete")
    assert runner.exception is None, runner.output
    status = sweep["status"]
    assert (status["total"], status["succeeded"], status["meanReward"]) == (1, 1, 1.0), status
    trials = kubectl_json("-n", namespace, "get", "buzztrials")["items"]
    assert len(trials) == 1
    trial = trials[0]
    assert trial["metadata"]["ownerReferences"][0]["kind"] == "BuzzSweep"
    assert trial["status"]["phase"] == "Succeeded" and trial["status"]["reward"] == 1.0, trial["status"]
    assert condition(trial, "Released") is not None
    bundle = store / "s1" / trial["metadata"]["name"]
    summary = json.loads((bundle / "agent" / "buzz" / "summary.json").read_text())
    assert summary["secret_scan"]["clean"], summary["secret_scan"]
    assert json.loads((bundle / "result.json").read_text())["verifier_result"]["rewards"]["reward"] == 1.0
    everything = "".join(p.read_text(errors="replace") for p in bundle.rglob("*") if p.is_file())
    assert sweep_secrets not in everything
    assert sweep_secrets not in json.dumps(trial)


async def test_deleted_trial_gets_its_channel_archived(namespace, crds, sweep_secrets, make_sweep, cluster_relay, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    import asyncpg

    body = make_sweep("s2", store_url=f"file://{tmp_path}", tasks=["user-mention"])
    with KopfRunner(operator_args(namespace), timeout=60) as runner:
        apply(namespace, body)

        def provisioned() -> str | None:
            items = kubectl_json("-n", namespace, "get", "buzztrials")["items"]
            ready = [t for t in items if (t.get("status") or {}).get("trialId")]
            return ready[0]["metadata"]["name"] if ready else None

        name = wait_until(provisioned, 120, "a provisioned trial")
        # hold the sweep back, or its level-based reconcile would plan the trial again
        kubectl("-n", namespace, "patch", "buzzsweep", "s2", "--type=merge", "-p", '{"spec":{"suspend":true}}')
        kubectl("-n", namespace, "delete", "buzztrial", name, "--timeout=60s")
    assert runner.exception is None, runner.output
    conn = await asyncpg.connect(cluster_relay.target.pg_dsn)
    try:
        archived = await conn.fetchval("SELECT archived_at IS NOT NULL FROM benchmark.trial_manifest")
    finally:
        await conn.close()
    assert archived is True
    assert kubectl_json("-n", namespace, "get", "buzztrials")["items"] == []


async def test_condition_edited_after_acceptance_is_refused(namespace, crds, sweep_secrets, make_sweep, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    body = make_sweep("s3", store_url=f"file://{tmp_path}", tasks=["user-mention"], suspend=True)
    with KopfRunner(operator_args(namespace), timeout=60) as runner:
        apply(namespace, body)
        recorded = wait_until(lambda: (kubectl_json("-n", namespace, "get", "buzzsweep", "s3").get("status") or {})
                              .get("conditionHash"), 60, "the condition hash to be recorded")
        body["spec"]["condition"]["inline"]["trial_budget"]["timeout_seconds"] = 299
        apply(namespace, body)

        def refused() -> dict[str, Any] | None:
            accepted = condition(kubectl_json("-n", namespace, "get", "buzzsweep", "s3"), "Accepted")
            return accepted if accepted and accepted["status"] == "False" else None

        accepted = wait_until(refused, 60, "the edited sweep to be refused")
    assert runner.exception is None, runner.output
    assert accepted["message"].startswith("spec.condition: the condition changed"), accepted
    assert recorded[:12] in accepted["message"]
    assert kubectl_json("-n", namespace, "get", "buzztrials")["items"] == []


async def test_finished_sweep_is_deleted_after_its_ttl(namespace, crds, sweep_secrets, make_sweep, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    store = tmp_path / "store"
    body = make_sweep("s4", store_url=f"file://{store}", tasks=["user-mention"], ttlSecondsAfterFinished=0)
    with KopfRunner(operator_args(namespace), timeout=60) as runner:
        apply(namespace, body)

        def gone() -> bool:
            found = subprocess.run(["kubectl", "-n", namespace, "get", "buzzsweep", "s4"], capture_output=True,
                                   text=True)
            return "NotFound" in found.stderr

        wait_until(gone, 420, "the finished sweep to be deleted")
    assert runner.exception is None, runner.output
    # the evidence outlives the sweep
    assert [p.name for p in store.glob("s4/*/result.json")] == ["result.json"]
