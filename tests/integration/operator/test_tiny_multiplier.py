"""`timeoutMultiplier: 0.0001`, as a new user might try it, scales the task's agent and verifier
deadlines to a second each and nothing else: the pod still has its start and setup deadlines, so
the trial ends as the team's own result (an agent or verifier timeout, or an answer in time),
never as `ScheduleTimeout` "not running after 1s" (docs/corridor.md#deadlines)."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

from kopf.testing import KopfRunner

from tests.support.cluster import kubectl_json

TERMINAL = {"Succeeded", "Failed"}




def test_a_tiny_multiplier_gives_the_team_a_second_not_the_pod(  # type: ignore[no-untyped-def]
    namespace, crds, sweep_secrets, make_sweep, tmp_path: Path
) -> None:
    body = make_sweep("tiny", store_url=f"file://{tmp_path / 'store'}", tasks=["hello-file"],
                      timeoutMultiplier=0.0001, retry={"maxRetries": 0})
    with KopfRunner(["run", "--standalone", "-n", namespace, "-m", "buzz_operator.handlers"], timeout=60) as runner:
        subprocess.run(["kubectl", "-n", namespace, "apply", "-f", "-"], input=json.dumps(body), check=True,
                       capture_output=True, text=True)
        deadline, trial = time.monotonic() + 300, None
        while time.monotonic() < deadline:
            trials = kubectl_json("-n", namespace, "get", "buzztrials")["items"]
            trial = trials[0] if trials else None
            if ((trial or {}).get("status") or {}).get("phase") in TERMINAL:
                break
            time.sleep(1)
        subprocess.run(["kubectl", "-n", namespace, "delete", "buzzsweep", "tiny", "--wait=false"],
                       capture_output=True)
    assert runner.exception is None, runner.output
    assert trial is not None
    status, deadlines = trial.get("status") or {}, trial["spec"]["deadlines"]
    assert status.get("phase") in TERMINAL, status
    # the task's own limits scaled to a second; hello-file's 600 s build timeout and the 120 s
    # setup untouched
    assert (deadlines["agentSeconds"], deadlines["verifierSeconds"]) == (1, 1), deadlines
    assert (deadlines["scheduleSeconds"], deadlines["setupSeconds"]) == (600, 120), deadlines
    assert status.get("reason") != "ScheduleTimeout" and status.get("failureClass") != "infra", status
    assert status.get("retries", 0) == 0, status
