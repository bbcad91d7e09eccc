"""Relay-signed channel state (docs/relay-protocol.md#kinds): kind 39000 metadata, 39001 admins, 39002 members. They are
regenerated after every change and replace the previous version (keyed by kind + `d`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

KIND_METADATA = 39000
KIND_ADMINS = 39001
KIND_MEMBERS = 39002
ADMIN_ROLES = ("owner", "admin")


def metadata_tags(channel: Mapping[str, Any]) -> list[list[str]]:
    tags = [
        ["d", channel["id"]],
        ["name", channel["name"]],
        ["t", channel["channel_type"]],
        ["private" if channel["visibility"] == "private" else "public"],
    ]
    for field in ("about", "topic", "purpose"):
        if channel.get(field):
            tags.append([field, channel[field]])
    if channel.get("ttl_seconds") is not None:
        tags.append(["ttl", str(channel["ttl_seconds"])])
    if channel.get("archived_at") is not None:
        tags.append(["archived", "true"])
    return tags


def admins_tags(channel_id: str, members: Sequence[tuple[str, str]]) -> list[list[str]]:
    return [["d", channel_id]] + [["p", pk, role] for pk, role in members if role in ADMIN_ROLES]


def members_tags(channel_id: str, members: Sequence[tuple[str, str]]) -> list[list[str]]:
    return [["d", channel_id]] + [["p", pk, "", role] for pk, role in members]
