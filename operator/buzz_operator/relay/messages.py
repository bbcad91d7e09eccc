"""What the harness does in the channel as the trial user (docs/corridor.md#run, docs/completion.md#what-is-watched)."""

from __future__ import annotations

from typing import Any

from buzz_operator.relay.client import RelayClient, RelayError

KIND_MESSAGE = 9
DONE_PREFIX = "DONE:"  # the five bytes an orchestrator's completion message starts with (docs/completion.md)


async def post_task(
    client: RelayClient, channel_id: str, orchestrator_name: str, orchestrator_pubkey: str, instruction: str
) -> str:
    """`messages send --content "@<orch> <instruction>" --mention <pk>`; returns the event id
    (the evidence's `task_event_id`)."""
    event = client.sign(
        KIND_MESSAGE, f"@{orchestrator_name} {instruction}", [["h", channel_id], ["p", orchestrator_pubkey]]
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
