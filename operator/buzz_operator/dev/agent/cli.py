"""`buzz` (stand-in CLI): the subcommands the agents and harness use (docs/relay-protocol.md#cli), JSON on stdout.

Configured like the real CLI by BUZZ_RELAY_URL (ws:// or http://, the same relay either way),
BUZZ_PRIVATE_KEY (hex or nsec) and BUZZ_AUTH_TAG. It speaks the websocket protocol only (no
NIP-98 HTTP bridge). Writes print the real CLI's normalised response (`event_id`, `accepted`, the
relay's OK `message`, plus `channel_id` for a create and `mention_pubkeys` for a send;
crates/buzz-cli/src/client.rs). Errors go to stderr as {"error", "message"} with the real exit
codes: 1 user, 2 network, 3 auth, 4 other.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import uuid
from typing import Any

from .compat import AsyncTimeout
from .nostr import CredentialError, Event, Keys, Tags, latest_by, parse_auth_tag, tag_values, thread_tags
from .session import RelayError, RelaySession
from .websocket import WebSocketError

EXIT_USER, EXIT_NETWORK, EXIT_AUTH, EXIT_OTHER = 1, 2, 3, 4


class UserError(ValueError):
    """Bad arguments or a missing object (exit 1)."""


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="buzz", description="Buzz CLI (stand-in)")
    parser.add_argument("--relay", default=os.environ.get("BUZZ_RELAY_URL", "http://localhost:3000"))
    parser.add_argument("--private-key", default=os.environ.get("BUZZ_PRIVATE_KEY", ""))
    parser.add_argument("--auth-tag", default=os.environ.get("BUZZ_AUTH_TAG", ""))
    groups = parser.add_subparsers(dest="group", required=True)

    messages = groups.add_parser("messages").add_subparsers(dest="command", required=True)
    send = messages.add_parser("send")
    send.add_argument("--channel", required=True)
    send.add_argument("--content", required=True)
    send.add_argument("--mention", action="append", default=[])
    send.add_argument("--reply-to")
    get = messages.add_parser("get")
    get.add_argument("--channel", required=True)
    get.add_argument("--limit", type=int, default=50)

    channels = groups.add_parser("channels").add_subparsers(dest="command", required=True)
    create = channels.add_parser("create")
    create.add_argument("--name", required=True)
    create.add_argument("--type", default="stream", choices=("stream", "forum"))
    create.add_argument("--visibility", default="open", choices=("open", "private"))
    create.add_argument("--description")
    create.add_argument("--ttl", type=int)
    for name in ("add-member", "invite"):
        member = channels.add_parser(name)
        member.add_argument("--channel", required=True)
        member.add_argument("--pubkey", required=True, action="append")
        member.add_argument("--role", default="member")
    archive = channels.add_parser("archive")
    archive.add_argument("--channel", required=True)
    search = channels.add_parser("search")
    search.add_argument("--query", required=True)
    search.add_argument("--exact", action="store_true")
    search.add_argument("--include-archived", action="store_true")
    search.add_argument("--limit", type=int, default=50)
    members = channels.add_parser("members")
    members.add_argument("--channel", required=True)

    users = groups.add_parser("users").add_subparsers(dest="command", required=True)
    users_get = users.add_parser("get")
    users_get.add_argument("--pubkey", action="append", default=[])
    users_get.add_argument("--name")
    users_get.add_argument("--owner")
    profile = users.add_parser("set-profile")
    profile.add_argument("--name")
    profile.add_argument("--display-name")
    profile.add_argument("--about")
    profile.add_argument("--picture")
    return parser


NAME_SEARCH_LIMIT = 100  # users.rs search_by_name


def _write_response(event: Event, message: str, **extra: Any) -> dict[str, Any]:
    return {"event_id": event["id"], "accepted": True, "message": message, **extra}


async def _submit(relay: RelaySession, kind: int, content: str, tags: Tags, **extra: Any) -> dict[str, Any]:
    event = relay.sign(kind, content, tags)
    return _write_response(event, await relay.publish(event), **extra)


def _profile(event: Event) -> dict[str, Any]:
    """A kind-0 event as `users get` prints it: the profile's own fields plus its pubkey."""
    try:
        profile = json.loads(event.get("content") or "{}")
    except ValueError:
        profile = {}
    return {**(profile if isinstance(profile, dict) else {}), "pubkey": event.get("pubkey", "")}


def _matches_name(profile: dict[str, Any], query: str) -> bool:
    wanted = query.lower()
    return any(isinstance(profile.get(key), str) and wanted in profile[key].lower()
               for key in ("display_name", "name"))


async def _users_get(args: argparse.Namespace, relay: RelaySession) -> list[dict[str, Any]]:
    """By pubkey (none: this identity's own profile), or `--name`: the relay's NIP-50 search over
    kind-0 profiles, then the real CLI's case-insensitive substring filter on the names."""
    if args.name is not None:
        events = await relay.query([{"kinds": [0], "search": args.name, "limit": NAME_SEARCH_LIMIT}])
        return [p for p in (_profile(e) for e in events) if _matches_name(p, args.name)]
    pubkeys = [pk.lower() for pk in args.pubkey] or [relay.keys.pubkey]
    events = await relay.query([{"kinds": [0], "authors": pubkeys, "limit": len(pubkeys)}])
    return [_profile(event) for _, event in sorted(latest_by(events, "pubkey").items())]


def _tag(event: Event, name: str) -> str | None:
    values = tag_values(event, name)
    return values[0] if values else None


def channel_row(event: Event) -> dict[str, Any]:
    """A kind-39000 group metadata event as `channels search` prints it."""
    tags = event.get("tags", [])
    flags = {tag[0] for tag in tags if isinstance(tag, list) and len(tag) == 1}
    ttl = _tag(event, "ttl")
    return {
        "channel_id": _tag(event, "d"),
        "name": _tag(event, "name") or "",
        "channel_type": _tag(event, "t") or "stream",
        "visibility": "private" if "private" in flags else "open",
        "archived": _tag(event, "archived") == "true",
        "about": _tag(event, "about"),
        "topic": _tag(event, "topic"),
        "purpose": _tag(event, "purpose"),
        "ttl_seconds": int(ttl) if ttl and ttl.isdigit() else None,
    }


async def _reply_tags(relay: RelaySession, parent_id: str) -> Tags:
    parents = await relay.query([{"ids": [parent_id], "limit": 1}])
    if not parents:
        raise UserError(f"--reply-to event {parent_id} not found")
    return thread_tags(parents[0])


def check_usage(args: argparse.Namespace) -> None:
    """Argument errors the real CLI reports before it talks to the relay."""
    if (args.group, args.command) != ("users", "get"):
        return
    if args.name is not None:
        if args.pubkey:
            raise UserError("--name and --pubkey are mutually exclusive")
        if not args.name.strip():
            raise UserError("--name cannot be empty")
        if args.owner is not None:
            raise UserError("--owner is not supported by the stand-in CLI: owner-scoped lookups read "
                            "managed-agent records, which the development relay does not hold")
    elif args.owner is not None:
        raise UserError("--owner requires --name")


async def execute(args: argparse.Namespace, relay: RelaySession) -> Any:
    command = (args.group, args.command)
    if command == ("messages", "send"):
        content = sys.stdin.read() if args.content == "-" else args.content
        tags: Tags = [["h", args.channel]]
        if args.reply_to:
            tags.extend(await _reply_tags(relay, args.reply_to))
        mentions = [pk.lower() for pk in dict.fromkeys(args.mention)]
        tags.extend(["p", pk] for pk in mentions)
        return await _submit(relay, 9, content, tags, mention_pubkeys=mentions)
    if command == ("messages", "get"):
        events = await relay.query([{"kinds": [9], "#h": [args.channel], "limit": args.limit}])
        events.sort(key=lambda e: (e.get("created_at", 0), e.get("id", "")))
        return [{key: e.get(key) for key in ("id", "pubkey", "kind", "created_at", "content", "tags")}
                for e in events[-args.limit:]]
    if command == ("channels", "create"):
        channel_id = str(uuid.uuid4())
        tags = [["h", channel_id], ["name", args.name], ["visibility", args.visibility],
                ["channel_type", args.type]]
        if args.description:
            tags.append(["about", args.description])
        if args.ttl:
            tags.append(["ttl", str(args.ttl)])
        return await _submit(relay, 9007, "", tags, channel_id=channel_id)
    if command in (("channels", "add-member"), ("channels", "invite")):
        responses = [await _submit(relay, 9000, "", [["h", args.channel], ["p", pk.lower()], ["role", args.role]])
                     for pk in args.pubkey]
        return responses[0] if len(responses) == 1 else responses
    if command == ("channels", "archive"):
        return await _submit(relay, 9002, "", [["h", args.channel], ["archived", "true"]])
    if command == ("channels", "search"):
        events = await relay.query([{"kinds": [39000]}])
        query = args.query.casefold()
        rows = [channel_row(event) for event in latest_by(events, "d").values()]
        rows = [row for row in rows
                if (row["name"].casefold() == query if args.exact else query in row["name"].casefold())
                and (args.include_archived or not row["archived"])]
        rows.sort(key=lambda row: (row["name"], row["channel_id"] or ""))
        return rows[: args.limit]
    if command == ("channels", "members"):
        events = await relay.query([{"kinds": [39002], "#d": [args.channel]}])
        latest = latest_by(events, "d").get(args.channel)
        if latest is None:
            return []
        return [{"pubkey": t[1], "role": t[3] if len(t) > 3 and t[3] else "member"}
                for t in latest.get("tags", []) if isinstance(t, list) and len(t) >= 2 and t[0] == "p"]
    if command == ("users", "get"):
        return await _users_get(args, relay)
    if command == ("users", "set-profile"):
        profile = {key: value for key, value in (("name", args.name), ("display_name", args.display_name),
                                                 ("about", args.about), ("picture", args.picture)) if value}
        if not profile:
            raise UserError("set-profile needs at least one field")
        return await _submit(relay, 0, json.dumps(profile, separators=(",", ":")), [])
    raise UserError(f"unknown command {' '.join(command)}")


def _fail(code: int, error: str, message: str) -> int:
    print(json.dumps({"error": error, "message": message}), file=sys.stderr)
    return code


async def _run(args: argparse.Namespace) -> Any:
    keys = Keys.from_text(args.private_key)
    relay = RelaySession(args.relay, keys, parse_auth_tag(args.auth_tag))
    await relay.connect()
    try:
        return await execute(args, relay)
    finally:
        await relay.close()


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if not args.private_key:
        return _fail(EXIT_USER, "config", "BUZZ_PRIVATE_KEY (or --private-key) is required")
    try:
        check_usage(args)
        result = asyncio.run(_run(args))
    except (UserError, CredentialError) as exc:
        return _fail(EXIT_USER, "user", str(exc))
    except RelayError as exc:
        text = str(exc)
        auth = "auth" in text.lower() or "restricted" in text.lower()
        return _fail(EXIT_AUTH if auth else EXIT_OTHER, "auth" if auth else "relay", text)
    except (OSError, WebSocketError, AsyncTimeout) as exc:
        return _fail(EXIT_NETWORK, "network", str(exc) or type(exc).__name__)
    if result is not None:
        print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
