"""Read the Buzz events a conversation delivered out of the prompt text `buzz-acp` builds.

buzz-acp renders every event it delivers as a block (its `queue::format_event_block`):

    Event ID: <64 hex>
    Channel: <name> (#<uuid>)      or just <uuid>
    Kind: 9
    From: <label> (npub: npub1…, hex: <64 hex>)   or   npub1… (hex: <64 hex>)
    Time: <rfc3339>
    Content: <text, possibly several lines>
    Tags: [["h","<uuid>"], …]
    Parsed: parent=…, root=…, mentions=[…]

under a `[Buzz event: <tag>]` header for a one-event batch, or after a `--- Event i (<tag>) ---`
line inside `[Buzz events — N events]` (queue.rs `format_prompt`); a mid-turn steer and a
cancel-and-merge re-prompt wrap the same blocks in other headers. The stand-in buzz-acp renders
the same blocks, so one reader serves both stacks: it takes every block of every prompt.
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


def _block(block: str, event_id: str) -> BuzzEvent | None:
    channel = _CHANNEL.search(block)
    sender = _FROM_HEX.search(block)
    content_at = block.find("\nContent: ")
    if channel is None or sender is None or content_at < 0:
        return None
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
        event_id=event_id,
        channel_id=channel.group(1),
        sender=sender.group(1),
        content=content.rstrip("\n"),
        root_id=root.group(1) if root else None,
        created_at=created_at,
    )


def events_in(prompt: str) -> list[BuzzEvent]:
    """Every well-formed event block of one prompt, in the order rendered."""
    starts = list(_BLOCK.finditer(prompt))
    events = []
    for index, start in enumerate(starts):
        stop = starts[index + 1].start() if index + 1 < len(starts) else len(prompt)
        event = _block(prompt[start.start():stop], start.group(1))
        if event is not None:
            events.append(event)
    return events


def delivered(prompts: list[str]) -> list[BuzzEvent]:
    """Every event the conversation's prompts delivered, once each, oldest delivery first (a
    re-rendered event, as a cancel-and-merge re-prompt repeats it, keeps its first place)."""
    seen: dict[str, BuzzEvent] = {}
    for prompt in prompts:
        for event in events_in(prompt):
            seen.setdefault(event.event_id, event)
    if not seen:
        raise NoEvent("the prompt holds no `Event ID:` block from buzz-acp")
    return list(seen.values())


def last_event(prompt: str) -> BuzzEvent:
    events = events_in(prompt)
    if not events:
        if _BLOCK.search(prompt):
            raise NoEvent("the last event block lacks its Channel, From or Content line")
        raise NoEvent("the prompt holds no `Event ID:` block from buzz-acp")
    return events[-1]


def instruction_of(content: str) -> str:
    """The task message is `@<agent> <instruction>`: drop the leading mention."""
    text = content.lstrip()
    if text.startswith("@"):
        parts = text.split(None, 1)
        return parts[1] if len(parts) > 1 else ""
    return text
