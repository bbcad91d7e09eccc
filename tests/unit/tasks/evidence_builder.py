"""Builds buzz-evidence.json v1 snapshots (docs/evidence.md#fields) for verifier fixtures.

Messages are written as the relay returns them (id, pubkey, kind, created_at, content, tags) and
normalised here exactly as the harness export does: `author`/`author_role` from the identity
(or directory identity) whose pubkey matches, `channel_id` from the first `h` tag,
`reply_to_event_id` from the first `e` tag marked "reply", `mentioned_pubkeys` from every `p`
tag. Building fixtures through that one path keeps the derived fields consistent with the tags,
so a fixture can only fail the dimension it was written to fail.

Scripted messages (task.toml `[[buzz.scripted_messages]]`) go through `Snapshot.script`, which
publishes them as the harness does — `{orchestrator}`/`{user}` filled in, a `p` tag of the
orchestrator unless `mention_orchestrator = false`, a reply tag to the task event when
`reply_to_task = true` — and records them in `scripted_events`.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

RUN_ID = "run-fixtures"
TRIAL_ID = "trial-0001"
CHANNEL_ID = "0b5c9f2e-4d7a-4e61-9c3f-8a2d6b1e7f40"
OTHER_CHANNEL_ID = "7e3a1d90-2c4b-4f85-a6e1-5b9c0d2f3a71"
BASE_TIME = 1_767_225_600  # 2026-01-01T00:00:00Z; only the order of timestamps matters


def hex_id(seed: str) -> str:
    """A stable 64-hex string standing in for a pubkey or event id."""
    return hashlib.sha256(seed.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Identity:
    """A trial identity or a seeded directory identity. `identity_id` (default: the name) seeds
    the pubkey, as it seeds the stable key in the harness, so two directory identities can share
    a display name."""

    name: str
    role: str
    identity_id: str | None = None
    about: str = ""

    @property
    def key(self) -> str:
        return self.identity_id or self.name

    @property
    def pubkey(self) -> str:
        return hex_id(f"pubkey:{self.key}")

    def directory_row(self) -> dict[str, str]:
        """The identity's row in evidence.directory."""
        return {
            "identity_id": self.key,
            "name": self.name,
            "role": self.role,
            "pubkey": self.pubkey,
            "about": self.about,
        }


USER = Identity("user", "user")
ORCHESTRATOR = Identity("solo-1", "orchestrator")
WORKER = Identity("worker-1", "worker")


def raw_message(
    seed: str,
    author: Identity,
    content: str,
    *,
    offset: int,
    channel_id: str | None = CHANNEL_ID,
    reply_to: str | None = None,
    mentions: tuple[str, ...] = (),
) -> dict[str, Any]:
    """A kind-9 stream message as `buzz messages get` returns it."""
    tags: list[list[str]] = []
    if channel_id is not None:
        tags.append(["h", channel_id])
    if reply_to is not None:
        tags.append(["e", reply_to, "", "reply"])
    tags.extend(["p", pubkey] for pubkey in mentions)
    return {
        "id": hex_id(f"event:{seed}"),
        "pubkey": author.pubkey,
        "kind": 9,
        "created_at": BASE_TIME + offset,
        "content": content,
        "tags": tags,
    }


def normalise(raw: dict[str, Any], identities: list[Identity]) -> dict[str, Any]:
    # A later identity wins on a shared pubkey: the export lays the directory over the trial's.
    by_pubkey = {identity.pubkey: identity for identity in identities}
    author = by_pubkey.get(raw["pubkey"])
    tags = raw["tags"]
    channel = next((tag[1] for tag in tags if tag[0] == "h"), None)
    reply_to = next((tag[1] for tag in tags if tag[0] == "e" and len(tag) > 3 and tag[3] == "reply"), None)
    return {
        "id": raw["id"],
        "kind": raw["kind"],
        "created_at": raw["created_at"],
        "pubkey": raw["pubkey"],
        "author": author.name if author else "unknown",
        "author_role": author.role if author else "unknown",
        "content": raw["content"],
        "tags": tags,
        "channel_id": channel,
        "reply_to_event_id": reply_to,
        "mentioned_pubkeys": [tag[1] for tag in tags if tag[0] == "p"],
    }


@dataclass
class Snapshot:
    """One trial's evidence, assembled the way the harness assembles it."""

    task_name: str
    identities: list[Identity] = field(default_factory=lambda: [USER, ORCHESTRATOR])
    directory: list[Identity] = field(default_factory=list)
    observed_channels: list[dict[str, Any]] = field(default_factory=list)
    raw_messages: list[dict[str, Any]] = field(default_factory=list)
    scripted_events: list[dict[str, str | None]] = field(default_factory=list)
    task_event_id: str | None = None
    completion_message_id: str | None = None
    truncated: bool = False
    schema_version: int = 1

    def post(self, seed: str, author: Identity, content: str, **kwargs: Any) -> str:
        message = raw_message(seed, author, content, offset=len(self.raw_messages) * 5, **kwargs)
        self.raw_messages.append(message)
        if self.task_event_id is None and author.role == "user" and author in self.identities:
            self.task_event_id = message["id"]
        if (
            author.role == "orchestrator"
            and content.startswith("DONE:")
            and self.completion_message_id is None
        ):
            self.completion_message_id = message["id"]
        return message["id"]

    def script(self, scripted: dict[str, Any], *, delivered: bool = True) -> str:
        """Publish one `[[buzz.scripted_messages]]` entry as the harness does, right after the
        task event, and record it in scripted_events. `delivered=False` records the event but
        leaves it out of the transcript (the relay accepted it, the channel read did not see it)."""
        assert self.task_event_id is not None, "scripted messages follow the task event"
        actor_id = scripted["actor"]
        orchestrator = next(i for i in self.identities if i.role == "orchestrator")
        user = next(i for i in self.identities if i.role == "user")
        actor = user if actor_id == "user" else next(i for i in self.directory if i.key == actor_id)
        content = (
            scripted["content"].replace("{orchestrator}", orchestrator.name).replace("{user}", user.name)
        )
        reply_to = self.task_event_id if scripted.get("reply_to_task", False) else None
        mentions = (orchestrator.pubkey,) if scripted.get("mention_orchestrator", True) else ()
        label = scripted["label"]
        message = raw_message(
            f"scripted:{label}",
            actor,
            content,
            offset=len(self.raw_messages) * 5,
            reply_to=reply_to,
            mentions=mentions,
        )
        if delivered:
            self.raw_messages.append(message)
        self.scripted_events.append(
            {"label": label, "event_id": message["id"], "actor": actor_id, "reply_to_event_id": reply_to}
        )
        return message["id"]

    def to_json(self) -> dict[str, Any]:
        messages = sorted(
            (normalise(raw, [*self.identities, *self.directory]) for raw in self.raw_messages),
            key=lambda m: (m["created_at"] is None, m["created_at"] or 0),
        )
        return {
            "schema_version": self.schema_version,
            "trial": {"run_id": RUN_ID, "trial_id": TRIAL_ID, "channel_id": CHANNEL_ID},
            "task_event_id": self.task_event_id,
            "completion_message_id": self.completion_message_id,
            "identities": {i.name: {"role": i.role, "pubkey": i.pubkey} for i in self.identities},
            "directory": [identity.directory_row() for identity in self.directory],
            "scripted_events": self.scripted_events,
            "task_name": self.task_name,
            "observed_channels": self.observed_channels,
            "message_count": len(messages),
            "truncated": self.truncated,
            "messages": messages,
        }


def dump(evidence: dict[str, Any]) -> str:
    """The harness's byte format: indent 2, sorted keys, trailing newline (docs/evidence.md#export)."""
    return json.dumps(evidence, indent=2, sort_keys=True) + "\n"


@dataclass(frozen=True)
class Case:
    """A fixture and the dimensions the verifier must score 0.0 on it (all others 1.0)."""

    name: str
    evidence: dict[str, Any]
    failing: frozenset[str] = frozenset()
