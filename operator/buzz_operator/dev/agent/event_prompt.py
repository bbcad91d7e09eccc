"""The prompt buzz-acp builds for a turn (crates/buzz-acp/src/queue.rs `format_prompt`): a
`[Context]` section for the batch's last event, then the event section — one event as a
`[Buzz event: <tag>]` block, several as `[Buzz events — N events]` with a
`--- Event i (<tag>) ---` header before each block, every block rendered by
`format_event_block`. buzz-acp sends the sections as separate text blocks and buzz-agent joins a
prompt's blocks with one newline (agent.rs `prompt_to_text`), so the text a model reads is the
sections joined by `\n`. A model endpoint reads the same text from the stand-in as from the real
bridge (buzz_operator.dev.model.event parses it), so only the fields the real one shows are here.

Not rendered: the `[Thread Context]` section buzz-acp adds for a thread reply (the thread's root
and recent replies fetched from the relay), and the steer and cancel-merge framings of a
mid-turn event, which the stand-in's queueing never produces (docs/scripted-model.md).

Pure: the channel's metadata and the profiles it names are looked up by the caller.
"""

from __future__ import annotations

import datetime
import json
import re
from dataclasses import dataclass
from typing import Any

from .compat import UTC
from .nostr import Event, encode_npub

MAX_LABEL_CHARS = 64  # queue.rs MAX_PROMPT_LABEL_LEN
MAX_DESCRIPTION_CHARS = 500
_HEX64 = re.compile(r"^[0-9a-fA-F]{64}$")


@dataclass(frozen=True)
class ChannelInfo:
    name: str
    description: str | None = None


@dataclass(frozen=True)
class Profile:
    display_name: str | None = None
    nip05: str | None = None
    is_agent: bool = False  # carries a NIP-OA auth tag (pool.rs profile_event_is_agent)


def profile_of(event: Event) -> Profile | None:
    """A kind-0 event as buzz-acp's profile lookup reads it."""
    try:
        content = json.loads(event.get("content") or "{}")
    except ValueError:
        return None
    if not isinstance(content, dict):
        return None
    name = content.get("display_name") or content.get("name")
    nip05 = content.get("nip05")
    is_agent = any(isinstance(t, list) and len(t) == 4 and t[0] == "auth" for t in event.get("tags", []))
    return Profile(name if isinstance(name, str) else None, nip05 if isinstance(nip05, str) else None, is_agent)


def _label(pubkey: str, profiles: dict[str, Profile]) -> str | None:
    profile = profiles.get(pubkey.lower())
    if profile is None:
        return None
    for raw in (profile.display_name, profile.nip05):
        clean = "".join(c for c in (raw or "").strip() if c.isprintable())[:MAX_LABEL_CHARS]
        if clean:
            return clean
    return None


def thread_of(event: Event) -> tuple[str | None, str | None]:
    """(root, parent) from NIP-10 markers, as buzz_core::nip10 resolves them."""
    root = reply = None
    for tag in event.get("tags", []):
        if isinstance(tag, list) and len(tag) >= 4 and tag[0] == "e" and _HEX64.match(str(tag[1])):
            if tag[3] == "root":
                root = str(tag[1])
            elif tag[3] == "reply":
                reply = str(tag[1])
    if reply is None:
        return None, None
    return (root or reply), reply


def mentions_of(event: Event) -> list[str]:
    return [str(t[1]) for t in event.get("tags", []) if isinstance(t, list) and len(t) >= 2 and t[0] == "p"]


def _channel_display(channel_id: str, info: ChannelInfo | None) -> str:
    return f"{info.name} (#{channel_id})" if info is not None else channel_id


def event_block(channel_id: str, info: ChannelInfo | None, event: Event, profiles: dict[str, Profile]) -> str:
    pubkey = str(event.get("pubkey", ""))
    label = _label(pubkey, profiles)
    npub = encode_npub(pubkey) if _HEX64.match(pubkey) else pubkey
    sender = f"{label} (npub: {npub}, hex: {pubkey})" if label else f"{npub} (hex: {pubkey})"
    stamp = event.get("created_at")
    when = (datetime.datetime.fromtimestamp(stamp, UTC).isoformat() if isinstance(stamp, int) else str(stamp))
    lines = [
        f"Event ID: {event.get('id', '')}",
        f"Channel: {_channel_display(channel_id, info)}",
        f"Kind: {event.get('kind', '')}",
        f"From: {sender}",
        f"Time: {when}",
        f"Content: {event.get('content', '')}",
        "Tags: " + json.dumps(event.get("tags", []), separators=(",", ":"), ensure_ascii=False),
    ]
    root, parent = thread_of(event)
    parsed = [f"parent={parent}"] if parent else []
    parsed += [f"root={root}"] if root else []
    mentioned = mentions_of(event)
    if mentioned:
        actors = [f"{name} ({pk})" if (name := _label(pk, profiles)) else pk for pk in mentioned]
        parsed.append(f"mentions=[{', '.join(actors)}]")
    if parsed:
        lines.append("Parsed: " + ", ".join(parsed))
    return "\n".join(lines)


def _human_facing(event: Event, profiles: dict[str, Profile]) -> bool:
    """An unknown identity counts as human, as in buzz-acp: humans must not lose the thread."""
    def is_agent(pubkey: str) -> bool:
        profile = profiles.get(pubkey.lower())
        return profile is not None and profile.is_agent

    sender = str(event.get("pubkey", ""))
    return not is_agent(sender) or any(not is_agent(pk) for pk in mentions_of(event) if pk != sender)


def context_block(channel_id: str, info: ChannelInfo | None, event: Event, profiles: dict[str, Profile]) -> str:
    root, parent = thread_of(event)
    anchor = (root or str(event.get("id", ""))) if _human_facing(event, profiles) else None
    scope = "thread" if root else "channel"
    lines = ["[Context]", f"Scope: {scope}", f"Channel: {_channel_display(channel_id, info)}"]
    if info is not None and info.description:
        text = " ".join(info.description.split())
        lines.append("Description: " + (text if len(text) <= MAX_DESCRIPTION_CHARS
                                        else text[:MAX_DESCRIPTION_CHARS] + "…"))
    if root:
        lines.append(f"Thread root: {root}")
        if parent and parent != root:
            lines.append(f"Parent: {parent}")
        lines.append("Use `buzz messages thread --channel <UUID> --event <ID>` to fetch thread context.")
        if anchor:
            lines.append(f"IMPORTANT: For ordinary replies in this turn, use `--reply-to {anchor}` on "
                         "`buzz messages send` so the conversation stays threaded. If the human explicitly "
                         "asks for a channel-root, top-level, or broadcast post, send that message without "
                         "`--reply-to`. If the requested destination is ambiguous, ask before sending.")
    else:
        lines.append("Hint: Use `buzz messages get --channel <UUID>` for recent messages if needed.")
        if anchor:
            lines.append(f"IMPORTANT: This is a new top-level message. For ordinary replies in this turn, use "
                         f"`--reply-to {anchor}` on `buzz messages send` — the triggering message is the thread "
                         "root. Do NOT reply into any other (older) thread. If the human explicitly asks for a "
                         "channel-root, top-level, or broadcast post, send that message without `--reply-to`.")
    return "\n".join(lines)


def event_section(channel_id: str, info: ChannelInfo | None, events: list[Event], profiles: dict[str, Profile],
                  tags: list[str]) -> str:
    """queue.rs `format_prompt` step 4b: the batch's events, each with its prompt tag."""
    if len(events) == 1:
        return f"[Buzz event: {tags[0]}]\n{event_block(channel_id, info, events[0], profiles)}"
    section = f"[Buzz events — {len(events)} events]"
    for index, event in enumerate(events):  # no zip(strict=): this runs on Python 3.9
        section += f"\n\n--- Event {index + 1} ({tags[index]}) ---\n{event_block(channel_id, info, event, profiles)}"
    return section


def render_batch(channel_id: str, info: ChannelInfo | None, events: list[Event], profiles: dict[str, Profile],
                 tags: list[str]) -> str:
    """The whole prompt text of a turn delivering `events` (oldest first; scope from the last)."""
    return (f"{context_block(channel_id, info, events[-1], profiles)}\n"
            f"{event_section(channel_id, info, events, profiles, tags)}")


def render(channel_id: str, info: ChannelInfo | None, event: Event, profiles: dict[str, Profile],
           tag: str = "@mention") -> str:
    """The whole prompt text of one single-event turn."""
    return render_batch(channel_id, info, [event], profiles, [tag])


def wanted_profiles(event: Event) -> list[str]:
    """Whose profiles the prompt names: the sender and everyone mentioned."""
    return list(dict.fromkeys([str(event.get("pubkey", "")), *mentions_of(event)]))


def batch_profiles(events: list[Event]) -> list[str]:
    """Whose profiles a batch's prompt names (pool.rs `collect_prompt_pubkeys`)."""
    return list(dict.fromkeys(pubkey for event in events for pubkey in wanted_profiles(event)))


def lookup(events: list[Any]) -> dict[str, Profile]:
    profiles: dict[str, Profile] = {}
    newest: dict[str, int] = {}
    for event in events:
        if not isinstance(event, dict):
            continue
        pubkey = str(event.get("pubkey", "")).lower()
        stamp = event.get("created_at") if isinstance(event.get("created_at"), int) else 0
        profile = profile_of(event)
        if profile is not None and stamp >= newest.get(pubkey, -1):
            profiles[pubkey], newest[pubkey] = profile, stamp
    return profiles
