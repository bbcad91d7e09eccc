"""`buzz-evidence.json` v1 (docs/evidence.md#fields) and `transcript.json` (docs/evidence.md#transcriptjson), byte-compatible with the
seed's `build_buzz_evidence`: messages are read as the trial user, observed channels as the
orchestrator (docs/evidence.md#export: the agent-created channel is private to it)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from buzz_operator.relay.channel_views import channel_members, search_channels_exact
from buzz_operator.relay.client import RelayError
from buzz_operator.relay.evidence_order import order_messages
from buzz_operator.relay.scripted import ScriptLike, find_posted
from buzz_operator.relay.tenant import client_as
from buzz_operator.relay.tenant_models import RelayTarget, TenantHandle, TenantSecrets

SCHEMA_VERSION = 1
TRANSCRIPT_LIMIT = 1000  # `messages get --limit 1000` (docs/evidence.md#export)
KIND_MESSAGE = 9


def _identities(handle: TenantHandle) -> dict[str, dict[str, str]]:
    identities = {handle.user.name: {"role": "user", "pubkey": handle.user.pubkey}}
    for seat in handle.seats:
        identities[seat.seat_id] = {"role": seat.kind, "pubkey": seat.pubkey}
    return identities


def _clean_tags(raw: Any) -> list[list[str]]:
    if not isinstance(raw, list):
        return []
    return [list(t) for t in raw if isinstance(t, list) and t and all(isinstance(x, str) for x in t)]


def normalize_message(raw: dict[str, Any], by_pubkey: dict[str, tuple[str, str]]) -> dict[str, Any]:
    tags = _clean_tags(raw.get("tags"))
    pubkey = raw.get("pubkey") if isinstance(raw.get("pubkey"), str) else ""
    kind = raw.get("kind")
    created_at = raw.get("created_at")
    author, author_role = by_pubkey.get(pubkey, ("unknown", "unknown"))
    return {
        "id": raw.get("id") if isinstance(raw.get("id"), str) else "",
        "kind": kind if isinstance(kind, int) and not isinstance(kind, bool) else None,
        "created_at": created_at if isinstance(created_at, int) and not isinstance(created_at, bool) else None,
        "pubkey": pubkey,
        "author": author,
        "author_role": author_role,
        "content": raw.get("content") if isinstance(raw.get("content"), str) else "",
        "tags": tags,
        "channel_id": next((t[1] for t in tags if t[0] == "h" and len(t) >= 2), None),
        "reply_to_event_id": next(
            (t[1] for t in tags if t[0] == "e" and len(t) >= 4 and t[3] == "reply"), None
        ),
        "mentioned_pubkeys": [t[1] for t in tags if t[0] == "p" and len(t) >= 2],
    }


def build_evidence(
    handle: TenantHandle,
    raw_messages: Sequence[dict[str, Any]],
    *,
    task_event_id: str | None,
    completion_message_id: str | None,
    observed_channels: Sequence[dict[str, Any]] = (),
    scripted_events: Sequence[dict[str, Any]] = (),
    transcript_limit: int = TRANSCRIPT_LIMIT,
) -> dict[str, Any]:
    """Pure: the evidence document from a handle and what was read from the relay."""
    identities = _identities(handle)
    by_pubkey = {v["pubkey"]: (name, v["role"]) for name, v in identities.items()}
    # a directory identity's own messages (scripted reports) carry its name, as in Block's export
    by_pubkey.update({d.pubkey: (d.name, d.role) for d in handle.directory})
    messages = order_messages(
        (normalize_message(m, by_pubkey) for m in raw_messages if isinstance(m, dict)),
        task_event_id=task_event_id, seat_pubkeys=[seat.pubkey for seat in handle.seats],
        scripted_ids=[str(e.get("event_id") or "") for e in scripted_events], completion_id=completion_message_id)
    return {
        "schema_version": SCHEMA_VERSION,
        "trial": {"run_id": handle.run_id, "trial_id": handle.trial_id, "channel_id": handle.channel_id},
        "task_event_id": task_event_id,
        "completion_message_id": completion_message_id,
        "identities": identities,
        "directory": [{"identity_id": d.stable_id, "name": d.name, "role": d.role, "pubkey": d.pubkey,
                       "about": d.about} for d in handle.directory],
        "scripted_events": [dict(e) for e in scripted_events],
        "task_name": handle.task_name,
        "observed_channels": [dict(c) for c in observed_channels],
        "message_count": len(messages),
        "truncated": len(raw_messages) >= transcript_limit,
        "messages": messages,
    }


def transcript_from_evidence(evidence: dict[str, Any]) -> dict[str, Any]:
    """`transcript.json`: {channel_id, message_count, truncated, messages} (docs/evidence.md#transcriptjson)."""
    return {
        "channel_id": evidence["trial"]["channel_id"],
        "message_count": evidence["message_count"],
        "truncated": evidence["truncated"],
        "messages": evidence["messages"],
    }


def dumps_evidence(document: dict[str, Any]) -> str:
    """The seed's serialisation: `json.dumps(indent=2, sort_keys=True) + "\\n"`."""
    return json.dumps(document, indent=2, sort_keys=True) + "\n"


async def export_evidence(
    target: RelayTarget,
    handle: TenantHandle,
    secrets: TenantSecrets,
    *,
    task_event_id: str | None,
    completion_message_id: str | None,
    observe_channel_names: Sequence[str] = (),
    scripted_messages: Sequence[ScriptLike] = (),
) -> dict[str, Any]:
    async with client_as(target, secrets.user_secret_hex, secrets.user_auth_tag) as user:
        raw = await user.query(
            [{"kinds": [KIND_MESSAGE], "#h": [handle.channel_id], "limit": TRANSCRIPT_LIMIT}], timeout=30
        )
    found = find_posted(handle, scripted_messages, raw, task_event_id)
    missing = [m.label for m, f in zip(scripted_messages, found, strict=True) if f is None]
    if missing:
        # the run step published them before it waited: their absence is a relay that lost events
        raise RelayError(f"scripted events {missing} are not in the channel")
    observed: list[dict[str, Any]] = []
    if observe_channel_names:
        orchestrator = secrets.seats[handle.orchestrator.seat_id]
        async with client_as(target, orchestrator.secret_hex, orchestrator.auth_tag) as orch:
            for name in observe_channel_names:
                for match in await search_channels_exact(orch, name):
                    members = await channel_members(orch, match["channel_id"]) if match["channel_id"] else []
                    observed.append({**match, "members": members})
    return build_evidence(
        handle, raw, task_event_id=task_event_id, completion_message_id=completion_message_id,
        observed_channels=observed, scripted_events=[f.to_dict() for f in found if f is not None],
    )
