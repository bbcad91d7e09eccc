"""A restarted operator resumes mid-corridor: the operator is stopped as soon as a trial is
Launching, a new one picks the trial up from its recorded status and finishes it in the same
try (same pod, no retry): the seats were launched once and the task was posted once."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path
from typing import Any

from kopf.testing import KopfRunner

from tests.support.cluster import kubectl_json


def apply(namespace: str, body: dict[str, Any]) -> None:
    subprocess.run(["kubectl", "-n", namespace, "apply", "-f", "-"], input=json.dumps(body), check=True,
                   capture_output=True, text=True)


def wait_until(predicate, timeout_s: float, what: str):  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if (value := predicate()):
            return value
        time.sleep(0.5)
    raise AssertionError(f"timed out waiting for {what}")


def pod_exists(namespace: str, name: str) -> bool:
    return bool(kubectl_json("-n", namespace, "get", "pods", "--field-selector", f"metadata.name={name}")["items"])


def trial_phase(namespace: str) -> tuple[str, dict[str, Any]] | None:
    items = kubectl_json("-n", namespace, "get", "buzztrials")["items"]
    if not items:
        return None
    return (items[0].get("status") or {}).get("phase", "Pending"), items[0]


async def test_operator_restart_resumes_a_launching_trial(namespace, crds, sweep_secrets, make_sweep, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    store = tmp_path / "store"
    args = ["run", "--standalone", "-n", namespace, "-m", "buzz_operator.handlers"]
    with KopfRunner(args, timeout=60) as first:
        apply(namespace, make_sweep("s1", store_url=f"file://{store}", tasks=["user-mention"]))
        # launching: the pod exists while the status still says Pending (entering Provisioning
        # and Launching rides on the next write, trial/state.write_can_wait)
        wait_until(lambda: (found := trial_phase(namespace)) and found[0] in ("Pending", "Provisioning", "Launching")
                   and pod_exists(namespace, found[1]["metadata"]["name"]), 240, "launching")
    assert first.exception is None, first.output

    with KopfRunner(args, timeout=60) as second:
        wait_until(lambda: (found := trial_phase(namespace)) and found[0] in ("Succeeded", "Failed"), 420, "the end")
        _, trial = wait_until(lambda: (found := trial_phase(namespace)) and any(
            c["type"] == "Released" for c in found[1]["status"].get("conditions", [])) and found, 120, "teardown")
    assert second.exception is None, second.output

    status = trial["status"]
    assert status["phase"] == "Succeeded" and status["reward"] == 1.0, status
    # the same try and pod as before the restart
    assert status.get("retries", 0) == 0 and status["pod"] == trial["metadata"]["name"]
    evidence = json.loads((store / "s1" / trial["metadata"]["name"] / "agent" / "buzz" / "buzz-evidence.json")
                          .read_text())
    user_messages = [m for m in evidence["messages"] if m["author_role"] == "user"]
    assert [m["id"] for m in user_messages] == [status["taskEventId"]]
    # stopped before its first write, the trial was fresh to both operators: each announced it,
    # and the Event's name (the trial's and its uid's) made the second post meet the first
    events = kubectl_json("-n", namespace, "get", "events", "--field-selector",
                          f"involvedObject.name={trial['metadata']['name']}")["items"]
    assert [e["reason"] for e in events].count("Admitted") == 1, [e["reason"] for e in events]
