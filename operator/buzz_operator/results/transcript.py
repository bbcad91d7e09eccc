"""A trial's channel as a readable thread (``buzzctl trial evidence``): who said what, replies
indented under the message they answer, mentions resolved to names.

Reads ``buzz-evidence.json`` v1 (docs/evidence.md#fields) or the ``transcript.json`` derived from
it: both hold normalised messages with ``id``, ``author``, ``author_role``, ``content``,
``created_at``, ``reply_to_event_id`` and ``mentioned_pubkeys``; the evidence also names every
identity and the seeded directory, which is what turns a pubkey into a name.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from buzz_operator.relay.bech32 import Bech32Error, decode_key

# a pubkey written into text, bare or as a nostr: URI of the hex key
_HEX64 = re.compile(r"(?:nostr:)?(?<![0-9a-fA-F])([0-9a-fA-F]{64})(?![0-9a-fA-F])")
# or as NIP-19 `npub1…` (bare or NIP-21 `nostr:npub1…`), the way Nostr clients write mentions
_NPUB = re.compile(r"(?:nostr:)?(?<![0-9a-z])(npub1[02-9ac-hj-np-z]{58})(?![0-9a-z])")
INDENT = "    "


@dataclass(frozen=True, slots=True)
class ThreadLine:
    depth: int
    author: str
    role: str
    when: str
    content: str
    mentions: tuple[str, ...]
    message_id: str


def names_by_pubkey(document: Mapping[str, Any]) -> dict[str, str]:
    """pubkey → name from the evidence's identities and directory, then from message authors."""
    names: dict[str, str] = {}
    for entry in document.get("directory") or []:
        if isinstance(entry, Mapping) and entry.get("pubkey") and entry.get("name"):
            names[str(entry["pubkey"]).lower()] = str(entry["name"])
    for name, identity in (document.get("identities") or {}).items():
        if isinstance(identity, Mapping) and identity.get("pubkey"):
            names[str(identity["pubkey"]).lower()] = str(name)
    for message in document.get("messages") or []:
        author = message.get("author")
        if message.get("pubkey") and author and author != "unknown":
            names.setdefault(str(message["pubkey"]).lower(), str(author))
    return names


def _name(pubkey: str, names: Mapping[str, str]) -> str:
    return names.get(pubkey.lower(), pubkey[:8] + "…")


def _npub_name(match: re.Match[str], names: Mapping[str, str]) -> str:
    try:
        pubkey = decode_key(match.group(1), "npub")
    except Bech32Error:  # looks like an npub but its checksum fails: leave the text as written
        return match.group(0)
    return f"@{names[pubkey]}" if pubkey in names else match.group(0)


def _resolve(content: str, names: Mapping[str, str]) -> str:
    """Pubkeys written into message text (hex or npub, bare or ``nostr:``) become ``@name``."""
    content = _NPUB.sub(lambda m: _npub_name(m, names), content)
    return _HEX64.sub(
        lambda m: f"@{names[m.group(1).lower()]}" if m.group(1).lower() in names else m.group(0), content
    )


def _when(created_at: object, start: int | None) -> str:
    if not isinstance(created_at, int):
        return "--:--:--"
    if start is None:
        return datetime.fromtimestamp(created_at, UTC).strftime("%H:%M:%S")
    seconds = max(0, created_at - start)
    return f"+{seconds // 3600:02d}:{seconds % 3600 // 60:02d}:{seconds % 60:02d}"


def thread(document: Mapping[str, Any]) -> list[ThreadLine]:
    """Messages in reading order: each top-level message followed by its replies, depth-first,
    replies in time order. A reply whose parent is not in the channel is shown at the top."""
    messages: Sequence[Mapping[str, Any]] = [
        m for m in document.get("messages") or [] if isinstance(m, Mapping)
    ]
    names = names_by_pubkey(document)
    ids = {str(m.get("id")) for m in messages if m.get("id")}
    children: dict[str | None, list[Mapping[str, Any]]] = {}
    for message in messages:
        parent = message.get("reply_to_event_id")
        key = str(parent) if parent and str(parent) in ids else None
        children.setdefault(key, []).append(message)
    stamps = [m["created_at"] for m in messages if isinstance(m.get("created_at"), int)]
    start = min(stamps) if stamps else None
    lines: list[ThreadLine] = []
    seen: set[str] = set()

    def walk(parent: str | None, depth: int) -> None:
        for message in children.get(parent, []):
            message_id = str(message.get("id") or "")
            if message_id and message_id in seen:
                continue  # a malformed reply cycle must not loop
            seen.add(message_id)
            lines.append(
                ThreadLine(
                    depth=depth,
                    author=str(message.get("author") or _name(str(message.get("pubkey") or ""), names)),
                    role=str(message.get("author_role") or "unknown"),
                    when=_when(message.get("created_at"), start),
                    content=_resolve(str(message.get("content") or ""), names),
                    mentions=tuple(_name(str(p), names) for p in message.get("mentioned_pubkeys") or []),
                    message_id=message_id,
                )
            )
            if message_id:
                walk(message_id, depth + 1)

    walk(None, 0)
    return lines


def render_thread(document: Mapping[str, Any]) -> str:
    """Plain text: ``[+00:00:03] lead (orchestrator) → @worker-1`` then the content, indented."""
    out: list[str] = []
    header = document.get("task_name") or ""
    channel = (document.get("trial") or {}).get("channel_id") or document.get("channel_id") or ""
    if header or channel:
        out.append(f"# {header or 'channel'} {channel}".rstrip())
    for line in thread(document):
        pad = INDENT * line.depth
        arrow = "↳ " if line.depth else ""
        mentions = f" → {', '.join('@' + m for m in line.mentions)}" if line.mentions else ""
        out.append(f"{pad}{arrow}[{line.when}] {line.author} ({line.role}){mentions}")
        body = line.content.rstrip("\n").splitlines() or [""]
        out.extend(f"{pad}{'  ' if line.depth else ''}  {text}" for text in body)
    if document.get("truncated"):
        out.append("(transcript truncated at the export limit)")
    return "\n".join(out) + "\n"
