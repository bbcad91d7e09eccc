#!/usr/bin/env python3
"""Deterministic verifier for interleaved-agent-reports.

Reads the post-agent Buzz evidence snapshot (v1) and scores the orchestrator's last message: after
three reporter bots posted their inputs back-to-back (the harness's scripted events), does one
synthesis label all four inputs and the final value (17 + 23 - 11) * 3 = 87, notify the user
exactly once, in the user's thread, without waking any reporter again? The dimensions, their
rules and the reward are those of Block's verifier (block/buzz
benchmarks/buzz-dataset/interleaved-agent-reports/tests/verify.py), including its selection:
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
import re
import sys
from pathlib import Path
from typing import Any

TASK_NAME = "interleaved-agent-reports"
DIMENSIONS = (
    "evidence_complete",
    "reports_delivered",
    "inputs_complete",
    "answer_correct",
    "single_human_callback",
    "reporters_not_rementioned",
    "reply_to_thread",
)
USER_DISPLAY_NAME = "Nora Isabel Grant"
# Must agree with the [[buzz.directory]] and [[buzz.scripted_messages]] entries in task.toml.
REPORTERS = ("Ledger Scout", "Risk Sentinel", "Ops Forecaster")
LABELS = {"ledger-report", "risk-report", "operations-report"}
INPUT_PATTERNS = (
    r"north\D+17",
    r"south\D+23",
    r"reserve\D+11",
    r"multiplier\D+3",
)
FINAL_VALUE = re.compile(r"(?:final|result|forecast|=)\D*87(?:\D|$)", re.IGNORECASE)


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
    identities: dict[str, Any] = evidence["identities"]
    user = identities.get(USER_DISPLAY_NAME)
    user = user if isinstance(user, dict) else {}
    orchestrators = [
        row for row in identities.values() if isinstance(row, dict) and row.get("role") == "orchestrator"
    ]
    pubkey = orchestrators[0].get("pubkey") if len(orchestrators) == 1 else None
    # Directory rows by display name.
    directory = {row.get("name"): row for row in rows(evidence.get("directory"))}
    reporter_pubkeys = {directory[name].get("pubkey") for name in REPORTERS if name in directory}
    # The three reports by label, as the harness recorded them.
    script_ids = {
        row.get("event_id") for row in rows(evidence.get("scripted_events")) if row.get("label") in LABELS
    }
    messages = rows(evidence["messages"])
    delivered_ids = {row.get("id") for row in messages}
    # Every orchestrator message in the transcript, not only those after the task event.
    candidates = [row for row in messages if pubkey and row.get("pubkey") == pubkey]
    final = candidates[-1] if candidates else None
    content = str(final.get("content", "")) if final is not None else ""
    mentioned = set(mentioned_of(final))
    human_callbacks = [row for row in candidates if user.get("pubkey") in mentioned_of(row)]
    results = {
        # One orchestrator message, no more, and exactly the three seeded reporters.
        "evidence_complete": evidence.get("schema_version") == 1
        and evidence.get("task_name") == TASK_NAME
        and evidence.get("truncated") is False
        and len(orchestrators) == 1
        and len(directory) == 3
        and final is not None
        and len(candidates) == 1,
        # Harness health: all three reports were published and are in the transcript.
        "reports_delivered": len(script_ids) == 3 and None not in script_ids and script_ids <= delivered_ids,
        # Every input under its own label: a synthesis that dropped a report fails here.
        "inputs_complete": all(re.search(pattern, content, re.IGNORECASE) for pattern in INPUT_PATTERNS),
        "answer_correct": bool(FINAL_VALUE.search(content)),
        # Exactly one orchestrator message mentions the user, and it is the scored one.
        "single_human_callback": len(human_callbacks) == 1 and final in human_callbacks,
        # No orchestrator message wakes a reporter again, by `p` tag or by `@Name` text.
        "reporters_not_rementioned": len(reporter_pubkeys) == 3
        and all(
            set(mentioned_of(row)).isdisjoint(reporter_pubkeys)
            and not any(f"@{name}" in str(row.get("content", "")) for name in REPORTERS)
            for row in candidates
        ),
        "reply_to_thread": final is not None and final.get("reply_to_event_id") == root,
    }
    details = {
        "task_event_id": root,
        "scripted_event_ids": sorted(str(value) for value in script_ids),
        "orchestrator_message_count": len(candidates),
        "human_callback_count": len(human_callbacks),
        "selected_message_id": final.get("id") if final is not None else None,
        "content": content,
        "mentioned_pubkeys": sorted(str(value) for value in mentioned),
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
