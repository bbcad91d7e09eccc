#!/usr/bin/env python3
"""Deterministic verifier for multiline-message.

Reads the post-agent Buzz evidence snapshot (v1) and scores the orchestrator's last message: does
the release-readiness update arrive with its paragraph and list layout intact, as real newline
bytes rather than a flattened or `\\n`-escaped string, threaded under the task and mentioning the
trial user? The dimensions, their rules and the reward are those of Block's verifier
(block/buzz benchmarks/buzz-dataset/multiline-message/tests/verify.py), including its selection:
every orchestrator message counts, the last one is scored, and more than one fails
`evidence_complete`. Stdlib only: it runs inside the task container with whatever python3 the
image has.

Writes --reward (metrics, sort_keys, every value 1.0/0.0 plus `reward`) and --details (indent 2).
Unreadable or structurally invalid evidence scores all zeros and puts the reason in details
under `error`.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

TASK_NAME = "multiline-message"
DIMENSIONS = (
    "evidence_complete",
    "layout_preserved",
    "real_newlines",
    "reply_to_thread",
    "user_mentioned",
)
USER_DISPLAY_NAME = "Eleanor June Brooks"
EXPECTED = (
    "Release readiness\n\n- API: ready\n- Database: ready\n- Rollback: tested\n\nOwner: Platform Operations"
)


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


def score(evidence: dict[str, Any]) -> tuple[dict[str, bool], dict[str, Any]]:
    root = evidence.get("task_event_id")
    trial = evidence.get("trial") if isinstance(evidence.get("trial"), dict) else {}
    identities: dict[str, Any] = evidence["identities"]
    user = identities.get(USER_DISPLAY_NAME)
    user = user if isinstance(user, dict) else {}
    orchestrators = [
        row for row in identities.values() if isinstance(row, dict) and row.get("role") == "orchestrator"
    ]
    pubkey = orchestrators[0].get("pubkey") if len(orchestrators) == 1 else None
    messages = rows(evidence["messages"])
    # Every orchestrator message in the transcript, not only those after the task event.
    candidates = [row for row in messages if pubkey and row.get("pubkey") == pubkey]
    final = candidates[-1] if candidates else None
    content = str(final.get("content", "")) if final is not None else ""
    tags = final.get("tags", []) if final is not None else []
    results = {
        # One orchestrator message, no more: an acknowledgement before the update fails here.
        "evidence_complete": evidence.get("schema_version") == 1
        and evidence.get("task_name") == TASK_NAME
        and evidence.get("truncated") is False
        and isinstance(root, str)
        and isinstance(trial.get("channel_id"), str)
        and len(orchestrators) == 1
        and isinstance(user.get("pubkey"), str)
        and final is not None
        and len(candidates) == 1,
        # The exact block, blank lines included, somewhere in the message.
        "layout_preserved": EXPECTED in content,
        # No literal backslash-n, and at least the block's six newline bytes.
        "real_newlines": "\\n" not in content and content.count("\n") >= 6,
        "reply_to_thread": final is not None and final.get("reply_to_event_id") == root,
        "user_mentioned": user.get("pubkey") in mentioned_of(final),
    }
    details = {
        "task_event_id": root,
        "orchestrator_message_count": len(candidates),
        "selected_message_id": final.get("id") if final is not None else None,
        "content": content,
        "tags": tags,
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
