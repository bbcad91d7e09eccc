"""What the harness does in the channel as the trial user (docs/corridor.md#run, docs/completion.md#what-is-watched)."""

from __future__ import annotations

from typing import Any

from buzz_operator.relay.client import RelayClient, RelayError

KIND_MESSAGE = 9
DONE_PREFIX = "DONE:"  # the five bytes an orchestrator's completion message starts with (docs/completion.md)


def task_content(orchestrator_name: str, instruction: str) -> str:
    """The task message's exact text: what post_task sends and a restarted run looks for."""
    return f"@{orchestrator_name} {instruction}"


def find_task(events: list[dict[str, Any]], orchestrator_name: str, instruction: str) -> str | None:
    """Pure: the id of the task message among the channel's user messages, or None. Matched on its
    whole text: a scripted message the user posts may mention the orchestrator too, in the task's
    own second (cross-thread-requests' BETA request), and the relay returns same-second events by
    id, so the first message that merely starts with the mention is the task only by chance."""
    content = task_content(orchestrator_name, instruction)
    found = [e for e in events if e.get("content") == content]
    return str(min(found, key=lambda e: (e.get("created_at") or 0, str(e.get("id"))))["id"]) if found else None


async def post_task(
    client: RelayClient, channel_id: str, orchestrator_name: str, orchestrator_pubkey: str, instruction: str
) -> str:
    """`messages send --content "@<orch> <instruction>" --mention <pk>`; returns the event id
    (the evidence's `task_event_id`)."""
    event = client.sign(
        KIND_MESSAGE, task_content(orchestrator_name, instruction), [["h", channel_id], ["p", orchestrator_pubkey]]
    )
    ok, message = await client.publish(event)
    if not ok:
        raise RelayError(f"task message refused: {message}")
    return str(event["id"])


def _is_done(event: dict[str, Any]) -> bool:
    content = event.get("content")
    return isinstance(content, str) and content.startswith(DONE_PREFIX)


async def find_done(client: RelayClient, channel_id: str, orchestrator_pubkey: str, since: int) -> dict[str, Any] | None:
    """The first orchestrator `DONE:` message at or after `since` already stored, or None."""
    flt = {"kinds": [KIND_MESSAGE], "#h": [channel_id], "authors": [orchestrator_pubkey], "since": since}
    done = [e for e in await client.query([flt], timeout=30) if _is_done(e)]
    return min(done, key=lambda e: (e.get("created_at") or 0)) if done else None


async def wait_for_done(
    client: RelayClient, channel_id: str, orchestrator_pubkey: str, since: int
) -> dict[str, Any]:
    """The first orchestrator message at or after `since` whose content starts with `DONE:`,
    seen through a live subscription the moment it lands. Bound it with `asyncio.timeout`."""
    flt = {"kinds": [KIND_MESSAGE], "#h": [channel_id], "authors": [orchestrator_pubkey], "since": since}
    async with client.subscribe([flt]) as sub:
        async for event in sub:
            if _is_done(event):
                return event
    raise RelayError("subscription ended before a DONE: message arrived")
