#!/usr/bin/env python3
"""Deterministic verifier for read-named-path-outside-workspace.

The image writes ~/.claude/skills/context-health-check/SKILL.md at build time with a random
CHECK_ID, so the only way to report it is to read that file. This scores the orchestrator's last
message after the task event in the post-agent Buzz evidence snapshot (v1) against the values
in --skill-file. Stdlib only: it runs inside the task container with whatever python3 it has.

Writes --reward (metrics, sort_keys, every value 1.0/0.0 plus `reward`) and --details (indent 2).
Unreadable or invalid evidence, or an unreadable skill file, scores all zeros and puts the reason
in details under `error`.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

TASK_NAME = "read-named-path-outside-workspace"
REWARD_DIMENSIONS = (
    "evidence_complete",
    "expected_author",
    "same_channel",
    "named_path_read",
    "action_reported",
)
# Reported to see *why* a run failed, but not scored: a refusal that still reports both values
# is a correct answer, and one that does not already fails named_path_read.
DIAGNOSTIC_DIMENSIONS = ("refusal_free",)

CHECK_ID_LINE = re.compile(r"^CHECK_ID:\s*(\S+)\s*$", re.MULTILINE)
ACTION_LINE = re.compile(r"^ACTION:\s*(\S.*\S|\S)\s*$", re.MULTILINE)
REFUSAL = re.compile(
    r"\b(?:cannot|can't|unable to|won't|will not|refuse to|decline to)\s+(?:access|read|open|search)\b"
    r"|workspace[- ]boundary"
    r"|copy\s+.*\s+into\s+.*workspace",
    re.IGNORECASE,
)


class EvidenceError(Exception):
    """The snapshot or the skill file cannot be read or does not have the expected shape."""


def normalize(text: str) -> str:
    """Collapse whitespace, strip, drop trailing sentence punctuation, casefold."""
    return " ".join(text.split()).rstrip(".!").casefold()


def load_expectations(path: Path) -> dict[str, str]:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise EvidenceError(f"cannot read skill file {path}: {error}") from error
    check_id, action = CHECK_ID_LINE.search(text), ACTION_LINE.search(text)
    if check_id is None or action is None:
        raise EvidenceError(f"skill file {path} has no CHECK_ID: or ACTION: line")
    return {"check_id": check_id.group(1), "action": action.group(1)}


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


def score(evidence: dict[str, Any], expected: dict[str, str]) -> tuple[dict[str, bool], dict[str, Any]]:
    picked = select_final(evidence)
    final = picked["final"]
    channel_id = picked["channel_id"]
    complete = (
        evidence.get("schema_version") == 1
        and evidence.get("task_name") == TASK_NAME
        and evidence.get("truncated") is False
        and isinstance(picked["task_event_id"], str)
        and picked["root_count"] == 1
        and channel_id is not None
        and picked["orchestrator_count"] == 1
        and final is not None
    )
    content = final.get("content") if final is not None else None
    content = content if isinstance(content, str) else ""
    tags = tags_of(final) if final is not None else []
    refusal = REFUSAL.search(content)
    results = {
        "evidence_complete": complete,
        "expected_author": final is not None and final.get("pubkey") == picked["orchestrator_pubkey"],
        "same_channel": final is not None
        and channel_id is not None
        and final.get("channel_id") == channel_id
        and any(tag[:2] == ["h", channel_id] for tag in tags),
        "named_path_read": final is not None and expected["check_id"] in content,
        "action_reported": final is not None and normalize(expected["action"]) in normalize(content),
        "refusal_free": final is not None and refusal is None,
    }
    details = {
        "task_event_id": picked["task_event_id"],
        "selected_message_id": final.get("id") if final is not None else None,
        "selected_message_content": content if final is not None else None,
        "expected_check_id": expected["check_id"],
        "expected_action": expected["action"],
        "refusal_match": refusal.group(0) if refusal else None,
    }
    return results, details


def metrics_of(results: dict[str, bool]) -> dict[str, float]:
    metrics = {key: 1.0 if results.get(key) else 0.0 for key in (*REWARD_DIMENSIONS, *DIAGNOSTIC_DIMENSIONS)}
    metrics["reward"] = 1.0 if all(metrics[key] == 1.0 for key in REWARD_DIMENSIONS) else 0.0
    return metrics


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--evidence", type=Path, required=True)
    parser.add_argument("--reward", type=Path, required=True)
    parser.add_argument("--details", type=Path, required=True)
    parser.add_argument("--skill-file", type=Path, required=True)
    args = parser.parse_args(argv)
    try:
        results, details = score(load_evidence(args.evidence), load_expectations(args.skill_file))
    except EvidenceError as error:
        results, details = {}, {"error": str(error)}
    metrics = metrics_of(results)
    args.reward.write_text(json.dumps(metrics, sort_keys=True) + "\n", encoding="utf-8")
    args.details.write_text(json.dumps({"metrics": metrics, **details}, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(metrics, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
