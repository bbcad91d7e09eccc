#!/usr/bin/env python3
"""Deterministic verifier for ambiguous-user-mention.

Reads the post-agent Buzz evidence snapshot (v1) and scores the orchestrator's messages: two
channel members are both displayed as `Taylor Morgan Lee`, told apart only by the routing code in
their profile. Does exactly one message notify (`p`-tag) the release captain (ORCHID-72) with
`ORCHID-72 approved`, does no message notify the observer twin, and does a separate message tell
the requester it was sent, both in the requester's thread? The dimensions, their rules and the
reward are those of Block's verifier (block/buzz
benchmarks/buzz-dataset/ambiguous-user-mention/tests/verify.py). Stdlib only: it runs inside the
task container with whatever python3 the image has.

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

TASK_NAME = "ambiguous-user-mention"
DIMENSIONS = (
    "evidence_complete",
    "target_notified_once",
    "other_not_notified",
    "message_correct",
    "user_callback",
    "reply_to_thread",
)
USER_DISPLAY_NAME = "Olivia Grace Park"
# Must agree with the [[buzz.directory]] identity_ids in task.toml.
TARGET_ID = "taylor-release-captain"
OTHER_ID = "taylor-observer"
DELIVERY_TEXT = "ORCHID-72 approved"
CALLBACK_WORDS = ("sent", "notified", "delivered")


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
    # Directory rows by identity_id: the display names are the same on purpose.
    directory = {row.get("identity_id"): row for row in rows(evidence.get("directory"))}
    target = directory.get(TARGET_ID, {})
    other = directory.get(OTHER_ID, {})
    identities: dict[str, Any] = evidence["identities"]
    user = identities.get(USER_DISPLAY_NAME)
    user = user if isinstance(user, dict) else {}
    orchestrators = [
        row for row in identities.values() if isinstance(row, dict) and row.get("role") == "orchestrator"
    ]
    pubkey = orchestrators[0].get("pubkey") if len(orchestrators) == 1 else None
    messages = rows(evidence["messages"])
    # Every orchestrator message in the transcript.
    authored = [row for row in messages if pubkey and row.get("pubkey") == pubkey]
    target_messages = [row for row in authored if target.get("pubkey") in mentioned_of(row)]
    other_messages = [row for row in authored if other.get("pubkey") in mentioned_of(row)]
    delivery = target_messages[0] if len(target_messages) == 1 else None
    # The callback is a message to the user that is not the delivery: one message notifying
    # both does not count.
    callbacks = [
        row for row in authored if user.get("pubkey") in mentioned_of(row) and row not in target_messages
    ]
    callback = callbacks[-1] if callbacks else None
    results = {
        "evidence_complete": evidence.get("schema_version") == 1
        and evidence.get("task_name") == TASK_NAME
        and evidence.get("truncated") is False
        and len(directory) == 2
        and isinstance(target.get("pubkey"), str)
        and isinstance(other.get("pubkey"), str)
        and target.get("pubkey") != other.get("pubkey")
        and len(orchestrators) == 1,
        # The behaviour under test: the profile-matched pubkey is notified exactly once ...
        "target_notified_once": len(target_messages) == 1,
        # ... and the twin never.
        "other_not_notified": len(other_messages) == 0,
        "message_correct": delivery is not None and DELIVERY_TEXT in str(delivery.get("content", "")),
        "user_callback": callback is not None
        and any(word in str(callback.get("content", "")).casefold() for word in CALLBACK_WORDS),
        "reply_to_thread": delivery is not None
        and callback is not None
        and delivery.get("reply_to_event_id") == root
        and callback.get("reply_to_event_id") == root,
    }
    details = {
        "task_event_id": root,
        "target_pubkey": target.get("pubkey"),
        "other_pubkey": other.get("pubkey"),
        "user_pubkey": user.get("pubkey"),
        "orchestrator_message_count": len(authored),
        "delivery_message_id": delivery.get("id") if delivery is not None else None,
        "callback_message_id": callback.get("id") if callback is not None else None,
        "target_notification_count": len(target_messages),
        "other_notification_count": len(other_messages),
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
