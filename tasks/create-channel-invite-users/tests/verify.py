#!/usr/bin/env python3
"""Deterministic verifier for create-channel-invite-users.

Reads the post-agent Buzz evidence snapshot (v1). Its `observed_channels` come from the
production CLI run as the orchestrator (`channels search --exact --include-archived` plus
`channels members`), so this grades the relay state a user would see, not what the agent said
it did. Stdlib only: it runs inside the task container with whatever python3 the image has.

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

TASK_NAME = "create-channel-invite-users"
DIMENSIONS = (
    "evidence_complete",
    "channel_created",
    "channel_shape",
    "temporary_channel",
    "exact_membership",
    "expected_roles",
)
CHANNEL_NAME = "fix-pr-1234"
TTL_SECONDS = 3600  # "for one hour"
# Must agree with instruction.md and the [[buzz.directory]] blocks in task.toml.
TARGET_USERS = ("benchmark-user-07", "benchmark-user-19", "benchmark-user-42")
TARGET_BOTS = ("benchmark-bot-03", "benchmark-bot-08")
DIRECTORY_USERS = 50
DIRECTORY_BOTS = 10


class EvidenceError(Exception):
    """The snapshot cannot be read or does not have the v1 shape."""


def _list_of_objects(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(item, dict) for item in value)


def load_evidence(path: Path) -> dict[str, Any]:
    try:
        evidence = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as error:
        raise EvidenceError(f"cannot read evidence {path}: {error}") from error
    if not isinstance(evidence, dict):
        raise EvidenceError("evidence is not a JSON object")
    identities = evidence.get("identities")
    if not isinstance(identities, dict) or not all(isinstance(item, dict) for item in identities.values()):
        raise EvidenceError("evidence.identities is not an object of objects")
    for key in ("directory", "observed_channels"):
        if not _list_of_objects(evidence.get(key)):
            raise EvidenceError(f"evidence.{key} is not a list of objects")
    for channel in evidence["observed_channels"]:
        if "members" in channel and not _list_of_objects(channel["members"]):
            raise EvidenceError("evidence.observed_channels[].members is not a list of objects")
    return evidence


def _pubkey(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def score(evidence: dict[str, Any]) -> tuple[dict[str, bool], dict[str, Any]]:
    directory: list[dict[str, Any]] = evidence["directory"]
    names = [row.get("name") for row in directory]
    roles = [row.get("role") for row in directory]
    by_name = {row.get("name"): row for row in directory}
    targets = {name: _pubkey(by_name.get(name, {}).get("pubkey")) for name in (*TARGET_USERS, *TARGET_BOTS)}
    orchestrators = [
        ident for ident in evidence["identities"].values() if ident.get("role") == "orchestrator"
    ]
    orchestrator = _pubkey(orchestrators[0].get("pubkey")) if len(orchestrators) == 1 else None

    complete = (
        evidence.get("schema_version") == 1
        and evidence.get("task_name") == TASK_NAME
        and len(directory) == DIRECTORY_USERS + DIRECTORY_BOTS
        and len(set(names)) == len(names)
        and roles.count("user") == DIRECTORY_USERS
        and roles.count("bot") == DIRECTORY_BOTS
        and all(pubkey is not None for pubkey in targets.values())
        and orchestrator is not None
    )

    matching = [c for c in evidence["observed_channels"] if c.get("name") == CHANNEL_NAME]
    # Two channels with the name is a failure too: the agent retried and left a duplicate.
    channel = matching[0] if len(matching) == 1 else None
    members: list[dict[str, Any]] = channel.get("members", []) if channel is not None else []
    member_pubkeys = [member.get("pubkey") for member in members]
    actual_roles = {member.get("pubkey"): member.get("role") for member in members}
    expected_roles: dict[str, str] = {}
    if orchestrator is not None and all(pubkey is not None for pubkey in targets.values()):
        expected_roles[orchestrator] = "owner"
        expected_roles.update({str(targets[name]): "member" for name in TARGET_USERS})
        expected_roles.update({str(targets[name]): "bot" for name in TARGET_BOTS})
    ttl = channel.get("ttl_seconds") if channel is not None else None

    results = {
        "evidence_complete": complete,
        "channel_created": channel is not None,
        "channel_shape": channel is not None
        and channel.get("channel_type") == "stream"
        and channel.get("visibility") == "private"
        and channel.get("archived") is False,
        "temporary_channel": channel is not None
        and isinstance(ttl, int)
        and not isinstance(ttl, bool)
        and ttl == TTL_SECONDS,
        "exact_membership": channel is not None
        and bool(expected_roles)
        and len(member_pubkeys) == len(set(member_pubkeys))
        and set(member_pubkeys) == set(expected_roles),
        "expected_roles": channel is not None and bool(expected_roles) and actual_roles == expected_roles,
    }
    details = {
        "matching_channel_count": len(matching),
        "channel_id": channel.get("channel_id") if channel is not None else None,
        "channel": {k: v for k, v in channel.items() if k != "members"} if channel is not None else None,
        "expected_members": expected_roles,
        "actual_members": members,
        "target_pubkeys": targets,
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
