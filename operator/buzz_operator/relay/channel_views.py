"""Relay-side equivalents of the CLI reads the evidence export uses (docs/relay-protocol.md#cli): `channels search
--exact --include-archived` over kind 39000 metadata, and `channels members` over kind 39002."""

from __future__ import annotations

from typing import Any

from buzz_operator.relay.client import RelayClient

KIND_METADATA = 39000
KIND_MEMBERS = 39002
_SEARCH_LIMIT = 5000


def _latest_by_d(events: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    latest: dict[str, dict[str, Any]] = {}
    for event in events:
        d = next((t[1] for t in event.get("tags", []) if len(t) >= 2 and t[0] == "d"), None)
        if d is not None and (d not in latest or event["created_at"] >= latest[d]["created_at"]):
            latest[d] = event
    return latest


def channel_summary(channel_id: str, event: dict[str, Any]) -> dict[str, Any]:
    """One search row: {channel_id, name, channel_type, visibility, archived, about, topic,
    purpose, ttl_seconds} read from a 39000 event's tags (docs/relay-protocol.md#kinds shapes)."""
    tags = event.get("tags", [])
    values = {t[0]: t[1] for t in reversed(tags) if len(t) >= 2}
    flags = {t[0] for t in tags if len(t) == 1}
    ttl = values.get("ttl")
    return {
        "channel_id": channel_id,
        "name": values.get("name", ""),
        "channel_type": values.get("t", "stream"),
        "visibility": "private" if "private" in flags else "open",
        "archived": values.get("archived") == "true",
        "about": values.get("about"),
        "topic": values.get("topic"),
        "purpose": values.get("purpose"),
        "ttl_seconds": int(ttl) if ttl is not None and ttl.isdigit() else None,
    }


async def search_channels_exact(client: RelayClient, query: str) -> list[dict[str, Any]]:
    """Channels the caller can see whose name equals `query` case-insensitively, archived ones
    included, sorted by name then id (the CLI's order)."""
    events = await client.query([{"kinds": [KIND_METADATA], "limit": _SEARCH_LIMIT}])
    rows = [channel_summary(cid, ev) for cid, ev in _latest_by_d(events).items()]
    wanted = query.casefold()
    return sorted((r for r in rows if r["name"].casefold() == wanted), key=lambda r: (r["name"], r["channel_id"]))


async def channel_members(client: RelayClient, channel_id: str) -> list[dict[str, str]]:
    """`[{pubkey, role}]` from the latest 39002: role is the 4th element of a `p` tag or `member`."""
    events = await client.query([{"kinds": [KIND_MEMBERS], "#d": [channel_id]}])
    latest = _latest_by_d(events).get(channel_id)
    if latest is None:
        return []
    return [
        {"pubkey": t[1], "role": t[3] if len(t) >= 4 and t[3] else "member"}
        for t in latest["tags"]
        if len(t) >= 2 and t[0] == "p"
    ]
