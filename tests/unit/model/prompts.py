"""Prompts in the shape Block's buzz-acp renders them (crates/buzz-acp/src/queue.rs,
`format_event_block`), for driving the scripted model the way the real agent would."""

from __future__ import annotations

CHANNEL = "3f2b8c1e-4d5a-4b6c-8d7e-9f0a1b2c3d4e"
USER = "a" * 64
EVENT = "e" * 64


def buzz_prompt(content: str, *, event_id: str = EVENT, sender: str = USER, channel: str = CHANNEL,
                root: str | None = None) -> str:
    parsed = f"\nParsed: parent={root}, root={root}" if root else ""
    return (
        "[Context]\nYou are in a Buzz channel.\n\n"
        "[Buzz event: @mention]\n"
        f"Event ID: {event_id}\n"
        f"Channel: trial-1234abcd-99aa00ff (#{channel})\n"
        "Kind: 9\n"
        f"From: benchmark-user (npub: npub1xyz, hex: {sender})\n"
        "Time: 2026-12-01T12:00:00+00:00\n"
        f"Content: {content}\n"
        f'Tags: [["h","{channel}"],["p","{"b" * 64}"]]'
        f"{parsed}"
    )
