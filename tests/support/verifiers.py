"""A task's own verifier run on an evidence document, as the grading step runs it in the pod."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from buzz_operator.relay.evidence import dumps_evidence

TASKS = Path(__file__).resolve().parents[2] / "tasks"


def reward(task: str, evidence: dict[str, Any], work: Path) -> float:
    """tasks/<task>/tests/verify.py's reward for `evidence` (files written under `work`)."""
    path = work / "evidence.json"
    path.write_text(dumps_evidence(evidence), encoding="utf-8")
    done = subprocess.run([sys.executable, str(TASKS / task / "tests" / "verify.py"), "--evidence", str(path),
                           "--reward", str(work / "reward.json"), "--details", str(work / "details.json")],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return float(json.loads((work / "reward.json").read_text())["reward"])


def reply_to_thread_reward(evidence: dict[str, Any], work: Path) -> float:
    return reward("reply-to-thread", evidence, work)
