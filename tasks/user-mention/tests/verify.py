#!/usr/bin/env python3
"""Deterministic verifier for user-mention.

Reads the post-agent Buzz evidence snapshot (v1) and scores the orchestrator's last message
after the task event: does it hand the turn back with an event-level mention (a `p` tag) of the
three-word trial user, in the trial channel, with the right total? Stdlib only: it runs inside
the task container with whatever python3 the image has.

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

TASK_NAME = "user-mention"
DIMENSIONS = (
    "evidence_complete",
    "three_word_user",
    "expected_author",
    "same_channel",
    "user_p_tagged",
    "answer_correct",
)
USER_DISPLAY_NAME = "John Vincent Doe"
EXPECTED_TOTAL = 5328.0  # 12 licenses x $37 x 12 months
TOLERANCE = 1.0

NUMBER = re.compile(r"(?<![A-Za-z0-9_])-?\$?\d[\d,]*(?:\.\d+)?")


class EvidenceError(Exception):
    """The snapshot cannot be read or does not have the v1 shape."""


def parse_numbers(text: str) -> list[float]:
    return [float(match.replace("$", "").replace(",", "")) for match in NUMBER.findall(text)]


def load_evidence(path: Path) -> dict[str, Any]:
    try:
        evidence = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as error:
        raise EvidenceError(f"cannot read evidence {path}: {error}") from error
    if not isinstance(evidence, dict):
        raise EvidenceError("evidence is not a JSON object")
    messages = evidence.get("messages")
    if not isinstance(messages, list) or not all(isinstance(item, dict) for item in messages):
        raise EvidenceError("evidence.messages is not a list of objects")
    identities = evidence.get("identities")
    if not isinstance(identities, dict) or not all(isinstance(item, dict) for item in identities.values()):
        raise EvidenceError("evidence.identities is not an object of objects")
    return evidence


def select_final(evidence: dict[str, Any]) -> dict[str, Any]:
    """The shared selection: one orchestrator, one root (the task event), last orchestrator
    message after the root."""
    messages: list[dict[str, Any]] = evidence["messages"]
    orchestrators = [
        ident for ident in evidence["identities"].values() if ident.get("role") == "orchestrator"
    ]
    pubkey = orchestrators[0].get("pubkey") if len(orchestrators) == 1 else None
    if not (isinstance(pubkey, str) and pubkey):
        pubkey = None
    task_event_id = evidence.get("task_event_id")
    roots = [
        i for i, m in enumerate(messages) if isinstance(task_event_id, str) and m.get("id") == task_event_id
    ]
    final = None
    if len(roots) == 1 and pubkey is not None:
        candidates = [m for m in messages[roots[0] + 1 :] if m.get("pubkey") == pubkey]
        final = candidates[-1] if candidates else None
    trial = evidence.get("trial")
    channel_id = trial.get("channel_id") if isinstance(trial, dict) else None
    return {
        "orchestrator_count": len(orchestrators),
        "orchestrator_pubkey": pubkey,
        "task_event_id": task_event_id,
        "root_count": len(roots),
        "channel_id": channel_id if isinstance(channel_id, str) else None,
        "final": final,
    }


def tags_of(message: dict[str, Any]) -> list[list[Any]]:
    tags = message.get("tags")
    return [tag for tag in tags if isinstance(tag, list)] if isinstance(tags, list) else []


def score(evidence: dict[str, Any]) -> tuple[dict[str, bool], dict[str, Any]]:
    picked = select_final(evidence)
    final = picked["final"]
    channel_id = picked["channel_id"]
    users = [(name, ident) for name, ident in evidence["identities"].items() if ident.get("role") == "user"]
    user_name, user = users[0] if len(users) == 1 else (None, {})
    user_pubkey = user.get("pubkey") if isinstance(user.get("pubkey"), str) and user.get("pubkey") else None
    complete = (
        evidence.get("schema_version") == 1
        and evidence.get("task_name") == TASK_NAME
        and evidence.get("truncated") is False
        and isinstance(picked["task_event_id"], str)
        and picked["root_count"] == 1
        and channel_id is not None
        and picked["orchestrator_count"] == 1
        and len(users) == 1
        and user_pubkey is not None
        and final is not None
    )
    content = final.get("content") if final is not None else None
    content = content if isinstance(content, str) else ""
    tags = tags_of(final) if final is not None else []
    mentioned = final.get("mentioned_pubkeys") if final is not None else None
    mentioned = mentioned if isinstance(mentioned, list) else []
    numbers = parse_numbers(content)
    results = {
        "evidence_complete": complete,
        # The provisioner must have seeded the multi-word name, or the task does not test
        # resolving one; a self-check of the fixture, not of the agent.
        "three_word_user": user_name == USER_DISPLAY_NAME and len(user_name.split()) == 3,
        "expected_author": final is not None and final.get("pubkey") == picked["orchestrator_pubkey"],
        "same_channel": final is not None
        and channel_id is not None
        and any(tag[:2] == ["h", channel_id] for tag in tags),
        # An event-level mention is a `p` tag; "@John Vincent Doe" typed into the text notifies
        # nobody, so it does not count.
        "user_p_tagged": final is not None
        and user_pubkey is not None
        and any(tag[:2] == ["p", user_pubkey] for tag in tags)
        and user_pubkey in mentioned,
        "answer_correct": final is not None and any(abs(n - EXPECTED_TOTAL) <= TOLERANCE for n in numbers),
    }
    details = {
        "task_event_id": picked["task_event_id"],
        "selected_message_id": final.get("id") if final is not None else None,
        "selected_message_content": content if final is not None else None,
        "user_display_name": user_name,
        "user_pubkey": user_pubkey,
        "mentioned_pubkeys": mentioned,
        "parsed_numbers": numbers,
        "expected_total": EXPECTED_TOTAL,
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
