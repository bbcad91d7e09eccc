"""A whole sweep: the oracle condition over two builtin tasks (one Buzz-native, graded on relay
evidence; one container task, graded on a file), attempts 1, with the operator under
KopfRunner on the host. Every trial must end Succeeded with reward 1.0, its bundle committed
in file:// storage with a clean secret scan, its pod and per-try Secret gone, its channel
archived; the sweep must report Complete with mean reward 1.0."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path
from typing import Any

import asyncpg
from kopf.testing import KopfRunner

from tests.support.cluster import kubectl_json

TASKS = ["hello-file", "user-mention"]




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


async def test_oracle_sweep_over_two_tasks(namespace, crds, cluster_relay, sweep_secrets, make_sweep, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    store = tmp_path / "store"
    body = make_sweep("demo", store_url=f"file://{store}", tasks=TASKS, parallelism=2)
    args = ["run", "--standalone", "-n", namespace, "-m", "buzz_operator.handlers"]
    with KopfRunner(args, timeout=60) as runner:
        apply(namespace, body)

        def complete() -> dict[str, Any] | None:
            sweep = kubectl_json("-n", namespace, "get", "buzzsweep", "demo")
            done = condition(sweep, "Complete")
            return sweep if done and done["status"] == "True" else None

        sweep = wait_until(complete, 600, "the sweep to complete")
    assert runner.exception is None, runner.output

    status = sweep["status"]
    assert (status["total"], status["succeeded"], status["failed"], status["meanReward"]) == (2, 2, 0, 1.0), status
    assert condition(sweep, "Accepted")["status"] == "True"
    trials = kubectl_json("-n", namespace, "get", "buzztrials")["items"]
    assert sorted(t["spec"]["task"] for t in trials) == TASKS
    pods = {p["metadata"]["name"] for p in kubectl_json("-n", namespace, "get", "pods")["items"]
            if not p["metadata"].get("deletionTimestamp")}
    secrets = {s["metadata"]["name"] for s in kubectl_json("-n", namespace, "get", "secrets")["items"]}
    for trial in trials:
        name, trial_status = trial["metadata"]["name"], trial["status"]
        assert trial_status["phase"] == "Succeeded" and trial_status["reward"] == 1.0, trial_status
        assert trial_status["outcome"] == "ok" and condition(trial, "Released") is not None
        assert name not in pods and f"{name}-seats" not in secrets
        bundle = store / "demo" / name
        result = json.loads((bundle / "result.json").read_text())
        assert result["verifier_result"]["rewards"]["reward"] == 1.0 and result["exception_info"] is None
        summary = json.loads((bundle / "agent" / "buzz" / "summary.json").read_text())
        assert summary["secret_scan"]["clean"] and summary["accounting"]["reconciled"], summary
        everything = "".join(p.read_text(errors="replace") for p in bundle.rglob("*") if p.is_file())
        assert sweep_secrets not in everything and cluster_relay.owner.secret_hex not in everything

    conn = await asyncpg.connect(cluster_relay.target.pg_dsn)
    try:
        archived = await conn.fetchval("SELECT count(*) FROM benchmark.trial_manifest WHERE archived_at IS NOT NULL")
    finally:
        await conn.close()
    assert archived == 2
