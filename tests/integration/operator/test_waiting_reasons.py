"""Without Kueue, a trial whose pod the scheduler cannot place says so in its status: the real
scheduler's own message (insufficient cpu) in status.waiting, with the time waited, while the
trial is still launching — not only at the deadline (docs/queueing.md#waiting-reasons)."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

from kopf.testing import KopfRunner

from tests.support.cluster import kubectl_json


def test_an_unschedulable_pod_says_why_in_the_trials_status(  # type: ignore[no-untyped-def]
    namespace, crds, sweep_secrets, make_sweep, tmp_path: Path
) -> None:
    body = make_sweep("toobig", store_url=f"file://{tmp_path / 'store'}", tasks=["hello-file"])
    body["spec"]["condition"]["inline"]["environment"] = {"override_cpus": 64}  # more than any node here
    with KopfRunner(["run", "--standalone", "-n", namespace, "-m", "buzz_operator.handlers"], timeout=60) as runner:
        subprocess.run(["kubectl", "-n", namespace, "apply", "-f", "-"], input=json.dumps(body), check=True,
                       capture_output=True, text=True)
        deadline, waiting, trial = time.monotonic() + 180, None, None
        while time.monotonic() < deadline:
            trials = kubectl_json("-n", namespace, "get", "buzztrials")["items"]
            trial = trials[0] if trials else None
            waiting = ((trial or {}).get("status") or {}).get("waiting")
            if waiting and waiting.get("reason") == "Unschedulable":
                break
            time.sleep(1)
        pods = kubectl_json("-n", namespace, "get", "pods", "-l", "app.kubernetes.io/component=trial-pod")["items"]
        subprocess.run(["kubectl", "-n", namespace, "delete", "buzzsweep", "toobig", "--wait=false"],
                       capture_output=True)
    assert runner.exception is None, runner.output
    assert waiting is not None, (trial or {}).get("status")
    assert (waiting["source"], waiting["reason"]) == ("scheduler", "Unschedulable"), waiting
    assert "Insufficient cpu" in waiting["message"], waiting
    assert "queue" not in waiting and waiting["since"], waiting
    # no queue name, no Kueue label: the pod is what it was before Kueue support
    assert pods and not any(k.startswith("kueue.x-k8s.io/") for k in pods[0]["metadata"]["labels"]), pods
