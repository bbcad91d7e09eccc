"""Read the Buzz event a turn answers out of the prompt text `buzz-acp` builds.

buzz-acp renders every event it delivers as a block (its `queue::format_event_block`):

    [Buzz event: @mention]
    Event ID: <64 hex>
    Channel: <name> (#<uuid>)      or just <uuid>
    Kind: 9
    From: <label> (npub: npub1…, hex: <64 hex>)   or   npub1… (hex: <64 hex>)
    Time: <rfc3339>
    Content: <text, possibly several lines>
    Tags: [["h","<uuid>"], …]
    Parsed: parent=…, root=…, mentions=[…]

The stand-in buzz-acp renders the same block, so one reader serves both stacks. The model acts
on the last event block of the last prompt: that is the one the turn answers.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime

_BLOCK = re.compile(r"^Event ID: ([0-9a-f]{64})\s*$", re.MULTILINE)
_CHANNEL = re.compile(r"^Channel: (?:.*\(#)?([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\)?\s*$",
                      re.MULTILINE)
_FROM_HEX = re.compile(r"^From: .*?hex: ([0-9a-f]{64})\)\s*$", re.MULTILINE)
_TIME = re.compile(r"^Time: (\S+)\s*$", re.MULTILINE)
_FIELD = re.compile(r"^(Tags|Parsed): ", re.MULTILINE)
_ROOT = re.compile(r"\broot=([0-9a-f]{64})")


@dataclass(frozen=True)
class BuzzEvent:
    event_id: str
    channel_id: str
    sender: str  # hex pubkey of the author
    content: str
    root_id: str | None  # thread root when the event is itself a thread reply
    created_at: float | None = None  # unix seconds, from the block's `Time:` line


class NoEvent(ValueError):
    """The prompt holds no Buzz event block the model could answer."""


def last_event(prompt: str) -> BuzzEvent:
    starts = list(_BLOCK.finditer(prompt))
    if not starts:
        raise NoEvent("the prompt holds no `Event ID:` block from buzz-acp")
    block = prompt[starts[-1].start():]
    channel = _CHANNEL.search(block)
    sender = _FROM_HEX.search(block)
    content_at = block.find("\nContent: ")
    if channel is None or sender is None or content_at < 0:
        raise NoEvent("the last event block lacks its Channel, From or Content line")
    rest = block[content_at + len("\nContent: "):]
    end = _FIELD.search(rest)
    content = rest[: end.start()] if end else rest
    root = _ROOT.search(rest[end.start():]) if end else None
    time = _TIME.search(block[:content_at])
    try:
        created_at = datetime.fromisoformat(time.group(1)).timestamp() if time else None
    except ValueError:
        created_at = None
    return BuzzEvent(
        event_id=starts[-1].group(1),
        channel_id=channel.group(1),
        sender=sender.group(1),
        content=content.rstrip("\n"),
        root_id=root.group(1) if root else None,
        created_at=created_at,
    )


def instruction_of(content: str) -> str:
    """The task message is `@<agent> <instruction>`: drop the leading mention."""
    text = content.lstrip()
    if text.startswith("@"):
        parts = text.split(None, 1)
        return parts[1] if len(parts) > 1 else ""
    return text
