#!/usr/bin/env python3
"""Deterministic verifier for reply-to-thread.

Reads the post-agent Buzz evidence snapshot (v1) and scores the orchestrator's last message
after the task event: did it land in the user's thread, in the trial channel, with the right
projection? Stdlib only: it runs inside the task container with whatever python3 the image has.

Writes --reward (metrics, sort_keys, every value 1.0/0.0 plus `reward`) and --details (indent 2).
Unreadable or structurally invalid evidence scores all zeros and puts the reason in details
under `error`, so a broken export reads as "investigate", never as a crash.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

DIMENSIONS = ("evidence_complete", "expected_author", "same_channel", "reply_to_thread", "answer_correct")

# Month-6 revenue 120,000·1.05^6, month-6 expenses 75,000·1.02^6, and the sum over months 1-6 of
# their difference, each rounded to the dollar.
EXPECTED_AMOUNTS = {
    "month_6_revenue": 160811.0,
    "month_6_expenses": 84462.0,
    "cumulative_operating_profit": 374470.0,
}
TOLERANCE = 1.0

# A line "names" an amount when it carries its label. The value must sit in the text after that
# label and before the next label on the same line, so "Month 6 revenue: …; month 6 expenses: …"
# on one line works, while a table row of bare numbers names nothing.
LABELS = {
    "month_6_revenue": re.compile(r"\brevenues?\b", re.IGNORECASE),
    "month_6_expenses": re.compile(r"\bexpenses?\b", re.IGNORECASE),
    "cumulative_operating_profit": re.compile(
        r"\b(?:cumulative|total)\b[^\d:;|=\n]*\bprofits?\b|\bprofits?\b[^\d:;|=\n]*\b(?:cumulative|total)\b",
        re.IGNORECASE,
    ),
}

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
    message after the root. Returns everything the dimensions need."""
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


def labelled_values(content: str) -> dict[str, list[float]]:
    """For each amount, the numbers found after its label on lines that name it."""
    found: dict[str, list[float]] = {key: [] for key in LABELS}
    for line in content.splitlines():
        hits = sorted(
            (match.start(), match.end(), key)
            for key, pattern in LABELS.items()
            for match in pattern.finditer(line)
        )
        for index, (_, end, key) in enumerate(hits):
            stop = hits[index + 1][0] if index + 1 < len(hits) else len(line)
            found[key].extend(parse_numbers(line[end:stop]))
    return found


def score(evidence: dict[str, Any]) -> tuple[dict[str, bool], dict[str, Any]]:
    picked = select_final(evidence)
    final = picked["final"]
    channel_id = picked["channel_id"]
    task_event_id = picked["task_event_id"]
    complete = (
        evidence.get("schema_version") == 1
        and evidence.get("truncated") is False
        and isinstance(task_event_id, str)
        and picked["root_count"] == 1
        and channel_id is not None
        and picked["orchestrator_count"] == 1
        and final is not None
    )
    content = final.get("content") if final is not None else None
    content = content if isinstance(content, str) else ""
    tags = tags_of(final) if final is not None else []
    values = labelled_values(content)
    results = {
        "evidence_complete": complete,
        # Candidates are already the orchestrator's messages; this stays explicit so the
        # dimension means the same thing as in the seed harness and fails with no final.
        "expected_author": final is not None and final.get("pubkey") == picked["orchestrator_pubkey"],
        "same_channel": final is not None
        and channel_id is not None
        and final.get("channel_id") == channel_id
        and any(tag[:2] == ["h", channel_id] for tag in tags),
        "reply_to_thread": final is not None
        and isinstance(task_event_id, str)
        and final.get("reply_to_event_id") == task_event_id
        and ["e", task_event_id, "", "reply"] in tags,
        "answer_correct": final is not None
        and all(
            any(abs(value - expected) <= TOLERANCE for value in values[key])
            for key, expected in EXPECTED_AMOUNTS.items()
        ),
    }
    details = {
        "task_event_id": task_event_id,
        "selected_message_id": final.get("id") if final is not None else None,
        "selected_message_content": content if final is not None else None,
        "parsed_numbers": parse_numbers(content),
        "labelled_values": values,
        "expected_amounts": EXPECTED_AMOUNTS,
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
