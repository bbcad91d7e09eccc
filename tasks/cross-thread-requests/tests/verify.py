#!/usr/bin/env python3
"""Deterministic verifier for cross-thread-requests.

Reads the post-agent Buzz evidence snapshot (v1) and scores the orchestrator's replies to two
concurrent top-level requests from the trial user: ALPHA (the task event, (17 * 19) + 23 = 346)
and BETA (the harness's scripted `beta-request`, (84 / 7) + 29 = 41). Is each answered in its own
thread, labelled, with only its own answer, in exactly two orchestrator messages that both
mention the user? The dimensions, their rules and the reward are those of Block's verifier
(block/buzz benchmarks/buzz-dataset/cross-thread-requests/tests/verify.py). Stdlib only: it runs
inside the task container with whatever python3 the image has.

Writes --reward (metrics, sort_keys, every value 1.0/0.0 plus `reward`) and --details (indent 2).
Unreadable or structurally invalid evidence scores all zeros and puts the reason in details
under `error`.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

TASK_NAME = "cross-thread-requests"
DIMENSIONS = (
    "evidence_complete",
    "alpha_correct",
    "beta_correct",
    "thread_isolation",
    "user_mentioned_twice",
)
USER_DISPLAY_NAME = "Priya Simone Patel"
# Must agree with instruction.md and the [[buzz.scripted_messages]] entry in task.toml.
BETA_LABEL = "beta-request"
ALPHA_VALUE = 346  # (17 * 19) + 23
BETA_VALUE = 41  # (84 / 7) + 29


class EvidenceError(Exception):
    """The snapshot cannot be read or does not have the v1 shape."""


def load_evidence(path: Path) -> dict[str, Any]:
    try:
        evidence = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as error:
        raise EvidenceError(f"cannot read evidence {path}: {error}") from error
    if not isinstance(evidence, dict):
        raise EvidenceError("evidence is not a JSON object")
    if not isinstance(evidence.get("messages"), list):
        raise EvidenceError("evidence.messages is not a list")
    if not isinstance(evidence.get("identities"), dict):
        raise EvidenceError("evidence.identities is not an object")
    return evidence


def rows(value: Any) -> list[dict[str, Any]]:
    """The object rows of a list; anything else in it is skipped, as Block's verifier skips it."""
    return [row for row in value if isinstance(row, dict)] if isinstance(value, list) else []


def mentioned_of(message: dict[str, Any] | None) -> list[Any]:
    mentioned = message.get("mentioned_pubkeys", []) if message is not None else []
    return mentioned if isinstance(mentioned, list) else []


def matches(message: dict[str, Any], label: str, value: int) -> bool:
    """The label, then non-digits, then exactly the value."""
    content = str(message.get("content", ""))
    return bool(re.search(rf"{label}\D+{value}(?:\D|$)", content, re.IGNORECASE))


def score(evidence: dict[str, Any]) -> tuple[dict[str, bool], dict[str, Any]]:
    alpha_root = evidence.get("task_event_id")
    scripts = [row for row in rows(evidence.get("scripted_events")) if row.get("label") == BETA_LABEL]
    beta_root = scripts[0].get("event_id") if len(scripts) == 1 else None
    identities: dict[str, Any] = evidence["identities"]
    user = identities.get(USER_DISPLAY_NAME)
    user = user if isinstance(user, dict) else {}
    orchestrators = [
        row for row in identities.values() if isinstance(row, dict) and row.get("role") == "orchestrator"
    ]
    pubkey = orchestrators[0].get("pubkey") if len(orchestrators) == 1 else None
    messages = rows(evidence["messages"])
    # Every orchestrator message in the transcript.
    candidates = [row for row in messages if pubkey and row.get("pubkey") == pubkey]
    # A reply counts for a request when it is in that request's thread and labels its value.
    alpha_replies = [
        row
        for row in candidates
        if row.get("reply_to_event_id") == alpha_root and matches(row, "ALPHA", ALPHA_VALUE)
    ]
    beta_replies = [
        row
        for row in candidates
        if row.get("reply_to_event_id") == beta_root and matches(row, "BETA", BETA_VALUE)
    ]
    alpha = alpha_replies[-1] if alpha_replies else None
    beta = beta_replies[-1] if beta_replies else None
    alpha_content = str(alpha.get("content", "")) if alpha is not None else ""
    beta_content = str(beta.get("content", "")) if beta is not None else ""
    results = {
        "evidence_complete": evidence.get("schema_version") == 1
        and evidence.get("task_name") == TASK_NAME
        and evidence.get("truncated") is False
        and isinstance(alpha_root, str)
        and isinstance(beta_root, str)
        and len(orchestrators) == 1,
        "alpha_correct": alpha is not None,
        "beta_correct": beta is not None,
        # The behaviour under test: two different replies, exactly two orchestrator messages in
        # all, and neither names the other request.
        "thread_isolation": alpha is not None
        and beta is not None
        and len(candidates) == 2
        and alpha.get("id") != beta.get("id")
        and "BETA" not in alpha_content.upper()
        and "ALPHA" not in beta_content.upper(),
        "user_mentioned_twice": alpha is not None
        and beta is not None
        and user.get("pubkey") in mentioned_of(alpha)
        and user.get("pubkey") in mentioned_of(beta),
    }
    details = {
        "alpha_root": alpha_root,
        "beta_root": beta_root,
        "orchestrator_message_count": len(candidates),
        "alpha_message_id": alpha.get("id") if alpha is not None else None,
        "beta_message_id": beta.get("id") if beta is not None else None,
        "alpha_content": alpha_content,
        "beta_content": beta_content,
        "user_pubkey": user.get("pubkey"),
    }
    return results, details


def metrics_of(results: dict[str, bool]) -> dict[str, float]:
    metrics = {key: 1.0 if results.get(key) else 0.0 for key in DIMENSIONS}
    metrics["reward"] = 1.0 if all(metrics[key] == 1.0 for key in DIMENSIONS) else 0.0
    return metrics


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--evidence", type=Path, required=True)
    parser.add_argument("--reward", type=Path, required=True)
    parser.add_argument("--details", type=Path, required=True)
    args = parser.parse_args(argv)
    try:
        results, details = score(load_evidence(args.evidence))
    except EvidenceError as error:
        results, details = {}, {"error": str(error)}
    metrics = metrics_of(results)
    args.reward.write_text(json.dumps(metrics, sort_keys=True) + "\n", encoding="utf-8")
    args.details.write_text(json.dumps({"metrics": metrics, **details}, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(metrics, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
