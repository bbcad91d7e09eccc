"""Scripted messages (tasks/README.md, "The [buzz] table"): events a task declares, published by
the harness right after the task event, back to back, so Buzz's own queueing and batching decide
how the agents see them — Block's `_send_scripted_messages` (block/buzz #6448).

Each is signed by its actor: the trial user, or a directory identity whose key the operator
derives (tenant.actor_secrets) and never hands to the pod. Only public metadata is recorded —
`{label, event_id, actor, reply_to_event_id}`, the evidence's `scripted_events`.

Idempotent across an operator restart: a message already in the channel (same author, same
content) is found, not posted twice.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from buzz_operator.dataset.config import USER_ACTOR
from buzz_operator.relay.client import RelayClient, RelayError
from buzz_operator.relay.messages import KIND_MESSAGE
from buzz_operator.relay.tenant_models import SeatSecret, TenantHandle


class ScriptLike(Protocol):
    """The fields of `buzz_operator.dataset.ScriptedMessage` publishing reads."""

    @property
    def label(self) -> str: ...
    @property
    def actor(self) -> str: ...
    @property
    def content(self) -> str: ...
    @property
    def reply_to_task(self) -> bool: ...
    @property
    def mention_orchestrator(self) -> bool: ...


@dataclass(frozen=True)
class ScriptedEvent:
    label: str
    event_id: str
    actor: str
    reply_to_event_id: str | None

    def to_dict(self) -> dict[str, str | None]:
        return {"label": self.label, "event_id": self.event_id, "actor": self.actor,
                "reply_to_event_id": self.reply_to_event_id}


def content_of(message: ScriptLike, handle: TenantHandle) -> str:
    return message.content.replace("{orchestrator}", handle.orchestrator.seat_id).replace("{user}", handle.user.name)


def tags_of(message: ScriptLike, handle: TenantHandle, task_event_id: str) -> list[list[str]]:
    """As `buzz messages send --channel … [--reply-to <task>] [--mention <orchestrator>]` tags it:
    a direct reply is one `e` tag marked "reply" (buzz-sdk ThreadRef, root == parent)."""
    tags = [["h", handle.channel_id]]
    if message.reply_to_task:
        tags.append(["e", task_event_id, "", "reply"])
    if message.mention_orchestrator:
        tags.append(["p", handle.orchestrator.pubkey])
    return tags


def actor_pubkey(handle: TenantHandle, actor: str) -> str:
    if actor == USER_ACTOR:
        return handle.user.pubkey
    for identity in handle.directory:
        if identity.stable_id == actor:
            return identity.pubkey
    raise RelayError(f"scripted actor {actor!r} is not an identity of this tenant")


# Opens a relay connection as one identity (tenant.client_as bound to the relay target).
OpenAs = Callable[[str, str], RelayClient]


def find_posted(handle: TenantHandle, messages: Sequence[ScriptLike], events: Sequence[dict[str, Any]],
                task_event_id: str | None) -> list[ScriptedEvent | None]:
    """Pure: each scripted message's record if `events` (the channel's) hold it — same author,
    same content — else None."""
    posted = {(e.get("pubkey"), e.get("content")): str(e.get("id")) for e in events if isinstance(e, dict)}
    found: list[ScriptedEvent | None] = []
    for message in messages:
        event_id = posted.get((actor_pubkey(handle, message.actor), content_of(message, handle)))
        found.append(None if event_id is None else ScriptedEvent(
            message.label, event_id, message.actor, task_event_id if message.reply_to_task else None))
    return found


async def publish_scripted(
    handle: TenantHandle,
    messages: Sequence[ScriptLike],
    task_event_id: str,
    *,
    user: RelayClient,
    open_as: OpenAs,
    actors: dict[str, SeatSecret],
) -> list[ScriptedEvent]:
    """Publish `messages` in order (skipping those already in the channel); their records."""
    if not messages:
        return []
    authors = sorted({actor_pubkey(handle, m.actor) for m in messages})
    events = await user.query([{"kinds": [KIND_MESSAGE], "#h": [handle.channel_id], "authors": authors}],
                              timeout=30)
    recorded: list[ScriptedEvent] = []
    for message, found in zip(messages, find_posted(handle, messages, events, task_event_id), strict=True):
        if found is None:
            event_id = await _publish(message, handle, task_event_id, content_of(message, handle), user=user,
                                      open_as=open_as, actors=actors)
            found = ScriptedEvent(message.label, event_id, message.actor,
                                  task_event_id if message.reply_to_task else None)
        recorded.append(found)
    return recorded


async def _publish(message: ScriptLike, handle: TenantHandle, task_event_id: str, content: str, *,
                   user: RelayClient, open_as: OpenAs, actors: dict[str, SeatSecret]) -> str:
    tags = tags_of(message, handle, task_event_id)
    if message.actor == USER_ACTOR:
        event = user.sign(KIND_MESSAGE, content, tags)
        ok, reason = await user.publish(event)
    else:
        secret = actors.get(message.actor)
        if secret is None:
            raise RelayError(f"scripted actor {message.actor!r} has no key (not in the tenant's scripted_actors)")
        async with open_as(secret.secret_hex, secret.auth_tag) as client:
            event = client.sign(KIND_MESSAGE, content, tags)
            ok, reason = await client.publish(event)
    if not ok:
        raise RelayError(f"scripted message {message.label!r} refused: {reason}")
    return str(event["id"])
