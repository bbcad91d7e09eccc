"""Fixture evidence for tasks/create-channel-invite-users and the dimensions each must fail."""

from __future__ import annotations

import copy
import uuid
from typing import Any

from tests.unit.tasks.evidence_builder import ORCHESTRATOR, USER, Case, Identity, Snapshot, hex_id
from tests.unit.tasks.runner import TASKS_ROOT

TASK = "create-channel-invite-users"
REWARD_DIMENSIONS = (
    "evidence_complete",
    "channel_created",
    "channel_shape",
    "temporary_channel",
    "exact_membership",
    "expected_roles",
)
DIAGNOSTIC_DIMENSIONS: tuple[str, ...] = ()
CHANNEL_DIMENSIONS = frozenset(REWARD_DIMENSIONS) - {"evidence_complete"}
# With no single matching channel there is nothing to grade the shape, TTL or members of.
FAILS_ONLY_WITH = {"channel_created": CHANNEL_DIMENSIONS - {"channel_created"}}

DIRECTORY = [Identity(f"benchmark-user-{n:02d}", "user") for n in range(1, 51)] + [
    Identity(f"benchmark-bot-{n:02d}", "bot") for n in range(1, 11)
]
BY_NAME = {identity.name: identity for identity in DIRECTORY}
TARGET_USERS = ("benchmark-user-07", "benchmark-user-19", "benchmark-user-42")
TARGET_BOTS = ("benchmark-bot-03", "benchmark-bot-08")
PROMPT = (TASKS_ROOT / TASK / "instruction.md").read_text(encoding="utf-8")


def _members() -> list[dict[str, str]]:
    return [
        {"pubkey": ORCHESTRATOR.pubkey, "role": "owner"},
        *({"pubkey": BY_NAME[name].pubkey, "role": "member"} for name in TARGET_USERS),
        *({"pubkey": BY_NAME[name].pubkey, "role": "bot"} for name in TARGET_BOTS),
    ]


def _channel(seed: str = "fix-pr-1234", **changes: Any) -> dict[str, Any]:
    """One row of `channels search --exact --include-archived` plus its `channels members`."""
    channel: dict[str, Any] = {
        "channel_id": str(uuid.UUID(hex=hex_id(f"channel:{seed}")[:32])),
        "name": "fix-pr-1234",
        "channel_type": "stream",
        "visibility": "private",
        "archived": False,
        "about": None,
        "topic": None,
        "purpose": None,
        "ttl_seconds": 3600,
        "members": _members(),
    }
    channel.update(changes)
    return channel


def _snapshot(*channels: dict[str, Any], directory: list[Identity] = DIRECTORY) -> dict[str, Any]:
    snap = Snapshot(
        TASK,
        directory=list(directory),
        observed_channels=list(channels),
    )
    root = snap.post("task", USER, PROMPT)
    snap.post(
        "final",
        ORCHESTRATOR,
        "DONE: created fix-pr-1234 and added the five requested identities.",
        reply_to=root,
    )
    return snap.to_json()


def _with_member_change(change: str) -> dict[str, Any]:
    members = _members()
    if change == "extra":
        members.append({"pubkey": BY_NAME["benchmark-user-17"].pubkey, "role": "member"})
    elif change == "bot-as-member":
        members[-1] = {**members[-1], "role": "member"}
    elif change == "duplicate":
        members.append(copy.deepcopy(members[1]))
    elif change == "missing":
        members.pop()
    return _channel(members=members)


CASES = [
    Case("positive-exact-channel", _snapshot(_channel())),
    # Unrelated channels never match the exact name and are ignored.
    Case("positive-ignores-other-channels", _snapshot(_channel("other", name="fix-pr-12345"), _channel())),
    Case("ttl-two-hours", _snapshot(_channel(ttl_seconds=7200)), frozenset({"temporary_channel"})),
    Case("no-ttl", _snapshot(_channel(ttl_seconds=None)), frozenset({"temporary_channel"})),
    Case("archived-channel", _snapshot(_channel(archived=True)), frozenset({"channel_shape"})),
    Case("open-channel", _snapshot(_channel(visibility="open")), frozenset({"channel_shape"})),
    Case("forum-channel", _snapshot(_channel(channel_type="forum")), frozenset({"channel_shape"})),
    Case(
        "bot-invited-as-member",
        _snapshot(_with_member_change("bot-as-member")),
        frozenset({"expected_roles"}),
    ),
    # A duplicated member row keeps the role map intact but is not an exact membership list.
    Case(
        "duplicate-member-row", _snapshot(_with_member_change("duplicate")), frozenset({"exact_membership"})
    ),
    # One look-alike too many changes both the member set and the role map.
    Case(
        "one-extra-member",
        _snapshot(_with_member_change("extra")),
        frozenset({"exact_membership", "expected_roles"}),
    ),
    Case(
        "missing-bot",
        _snapshot(_with_member_change("missing")),
        frozenset({"exact_membership", "expected_roles"}),
    ),
    Case("duplicate-channels", _snapshot(_channel(), _channel("retry")), CHANNEL_DIMENSIONS),
    Case("no-channel", _snapshot(), CHANNEL_DIMENSIONS),
    # The directory lost a row the task does not target: harness health fails, the agent's
    # work still grades.
    Case(
        "directory-short", _snapshot(_channel(), directory=DIRECTORY[:-1]), frozenset({"evidence_complete"})
    ),
]
