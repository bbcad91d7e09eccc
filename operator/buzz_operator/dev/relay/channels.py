"""What each accepted kind does to relay state (docs/relay-protocol.md#kinds). Runs inside one transaction per event,
serialised per channel by an advisory lock, so concurrent membership edits cannot lose a row of
the regenerated 39002 list. Returns the events to deliver live: the event itself plus the
relay-signed state it caused."""

from __future__ import annotations

import json
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

import asyncpg

from buzz_operator.dev.relay import state, store
from buzz_operator.relay.directory import DIRECTORY_CONDITIONS, is_directory_profile
from buzz_operator.relay.nostr import Keypair, sign_event

KIND_PROFILE = 0
KIND_MESSAGE = 9
KIND_ADD_MEMBER = 9000
KIND_REMOVE_MEMBER = 9001
KIND_EDIT_METADATA = 9002
KIND_CREATE_CHANNEL = 9007
KIND_DELETE_CHANNEL = 9008
SUPPORTED_KINDS = frozenset(
    {KIND_PROFILE, KIND_MESSAGE, KIND_ADD_MEMBER, KIND_REMOVE_MEMBER, KIND_EDIT_METADATA,
     KIND_CREATE_CHANNEL, KIND_DELETE_CHANNEL}
)
ROLES = frozenset({"owner", "admin", "member", "bot", "guest"})
# the profile fields a directory lookup resolves a name from (the stand-in's and `users get`'s)
PROFILE_NAME_KEYS = ("name", "display_name")


class Rejected(Exception):
    """Refusal with a NIP-01 machine prefix (`invalid:`, `restricted:`, …) in the message."""


@dataclass
class Delivery:
    event: dict[str, Any]
    readers: frozenset[str] | None  # None: anyone authenticated; else only these pubkeys


@dataclass
class Outcome:
    message: str = ""
    deliveries: list[Delivery] = field(default_factory=list)


def _tag(event: dict[str, Any], name: str) -> str | None:
    for tag in event["tags"]:
        if len(tag) >= 2 and tag[0] == name:
            return tag[1]
    return None


def _channel_id(event: dict[str, Any]) -> str:
    value = _tag(event, "h")
    if not value:
        raise Rejected("invalid: channel events need an h tag")
    return value


def _ttl(value: str | None, field_name: str = "ttl") -> int | None:
    if value is None or value == "":
        return None
    if not value.isdigit() or int(value) <= 0 or int(value) > 2**31 - 1:
        raise Rejected(f"invalid: {field_name} must be a positive number of seconds")
    return int(value)


async def _lock_channel(conn: asyncpg.Connection, channel_id: str) -> None:
    await conn.execute("SELECT pg_advisory_xact_lock(hashtextextended($1, 7))", channel_id)


async def _regenerate(
    conn: asyncpg.Connection, relay: Keypair, channel_id: str, kinds: tuple[int, ...]
) -> list[Delivery]:
    channel = await store.channel_row(conn, channel_id)
    if channel is None:
        return []
    members = await store.channel_members(conn, channel_id)
    readers = frozenset(pk for pk, _ in members) if channel["visibility"] == "private" else None
    builders = {
        state.KIND_METADATA: lambda: state.metadata_tags(channel),
        state.KIND_ADMINS: lambda: state.admins_tags(channel_id, members),
        state.KIND_MEMBERS: lambda: state.members_tags(channel_id, members),
    }
    out: list[Delivery] = []
    for kind in kinds:
        previous = await conn.fetchval(
            "DELETE FROM relay.events WHERE kind = $1 AND d_tag = $2 AND pubkey = $3 RETURNING created_at",
            kind, channel_id, relay.pubkey_hex,
        )
        # a replaceable event must be strictly newer than the one it replaces
        created_at = max(int(time.time()), (previous or 0) + 1)
        event = sign_event(relay, kind, "", builders[kind](), created_at)
        await store.insert_event(conn, event, channel_id, channel_id)
        out.append(Delivery(event, readers))
    return out


async def _role_of(conn: asyncpg.Connection, channel_id: str, pubkey: str) -> str | None:
    return await conn.fetchval(
        "SELECT role FROM relay.members WHERE channel_id = $1 AND pubkey = $2", channel_id, pubkey
    )


async def _store_channel_event(conn: asyncpg.Connection, event: dict[str, Any], channel_id: str) -> bool:
    stored = await store.insert_event(conn, event, channel_id)
    if stored:
        # TTLs are whole seconds: touching the row at most once a second keeps a busy channel's
        # concurrent messages from queueing on its row lock
        await conn.execute(
            "UPDATE relay.channels SET last_activity_at = now() "
            "WHERE id = $1 AND last_activity_at < now() - interval '1 second'",
            channel_id,
        )
    return stored


async def apply_event(conn: asyncpg.Connection, relay: Keypair, event: dict[str, Any]) -> Outcome:
    kind = event["kind"]
    if kind not in SUPPORTED_KINDS:
        raise Rejected(f"invalid: unsupported kind {kind}")
    if kind == KIND_PROFILE:
        return await _profile(conn, event)
    channel_id = _channel_id(event)
    # state changes serialise per channel; plain messages only read the channel, so a busy
    # channel's chat is not queued behind one lock
    changes_state = kind != KIND_MESSAGE
    if changes_state:
        await _lock_channel(conn, channel_id)
    if kind == KIND_CREATE_CHANNEL:
        return await _create(conn, relay, event, channel_id)
    channel = await store.channel_row(conn, channel_id, lock=changes_state)
    if channel is None:
        raise Rejected(f"invalid: channel {channel_id} does not exist")
    actor_role = await _role_of(conn, channel_id, event["pubkey"])
    if kind == KIND_MESSAGE:
        return await _message(conn, event, channel, actor_role)
    if kind in (KIND_ADD_MEMBER, KIND_REMOVE_MEMBER):
        return await _membership(conn, relay, event, channel, actor_role)
    if kind == KIND_EDIT_METADATA:
        return await _edit(conn, relay, event, channel, actor_role)
    return await _delete(conn, relay, event, channel, actor_role)


async def _profile(conn: asyncpg.Connection, event: dict[str, Any]) -> Outcome:
    try:
        profile = json.loads(event["content"])
    except json.JSONDecodeError as exc:
        raise Rejected("invalid: profile content must be a JSON object") from exc
    if not isinstance(profile, dict):
        raise Rejected("invalid: profile content must be a JSON object")
    if not is_directory_profile(event) and (held := await _provisioned_name(conn, event["pubkey"], profile)):
        # every trial's agents are attested by the same owner: without this, one trial's agent could
        # publish "alice" and another trial's directory lookup would find the look-alike
        raise Rejected(f"restricted: {held!r} is a directory name provisioned for another identity")
    newest = await conn.fetchval(
        "SELECT max(created_at) FROM relay.events WHERE kind = 0 AND pubkey = $1", event["pubkey"]
    )
    if newest is not None and newest > event["created_at"]:
        return Outcome("duplicate: a newer profile is stored")
    # kind 0 is replaceable: keep only the newest profile of each pubkey
    await conn.execute("DELETE FROM relay.events WHERE kind = 0 AND pubkey = $1 AND id <> $2",
                       event["pubkey"], event["id"])
    if not await store.insert_event(conn, event, None):
        return Outcome("duplicate: already have this event")
    return Outcome("", [Delivery(event, None)])


def _names(profile: dict[str, Any]) -> set[str]:
    # compared case- and space-blind: "Alice " would pass for "alice" in most directory views
    return {value.strip().casefold() for key in PROFILE_NAME_KEYS if isinstance(value := profile.get(key), str)} - {""}


async def _provisioned_name(conn: asyncpg.Connection, pubkey: str, profile: dict[str, Any]) -> str | None:
    """A name of `profile` that a directory profile of another identity holds, or None."""
    wanted = _names(profile)
    if not wanted:
        return None
    # the containment prefilter (GIN-indexed) finds events with a `kind=0` string in some tag;
    # is_directory_profile then checks it is the condition of the event's own first auth tag
    rows = await conn.fetch(
        "SELECT pubkey, created_at, kind, tags, content, id, sig FROM relay.events "
        "WHERE kind = 0 AND pubkey <> $1 AND tags @> $2::jsonb",
        pubkey, json.dumps([[DIRECTORY_CONDITIONS]]),
    )
    for row in rows:
        held = store.row_to_event(row)
        if not is_directory_profile(held):
            continue
        try:
            names = _names(json.loads(held["content"]))
        except (json.JSONDecodeError, AttributeError):
            continue
        if found := sorted(wanted & names):
            return found[0]
    return None


async def _create(conn: asyncpg.Connection, relay: Keypair, event: dict[str, Any], channel_id: str) -> Outcome:
    try:
        uuid.UUID(channel_id)
    except ValueError as exc:
        raise Rejected("invalid: h tag of a new channel must be a UUID") from exc
    if await conn.fetchval("SELECT 1 FROM relay.events WHERE id = $1", event["id"]):
        return Outcome("duplicate: already have this event")
    if await conn.fetchval("SELECT 1 FROM relay.channels WHERE id = $1", channel_id):
        raise Rejected(f"invalid: channel {channel_id} already exists")
    name = (_tag(event, "name") or "").strip()
    if not name:
        raise Rejected("invalid: name tag is required")
    visibility = _tag(event, "visibility") or "open"
    channel_type = _tag(event, "channel_type") or "stream"
    if visibility not in ("open", "private"):
        raise Rejected("invalid: visibility must be open or private")
    if channel_type not in ("stream", "forum"):
        raise Rejected("invalid: channel_type must be stream or forum")
    await conn.execute(
        "INSERT INTO relay.channels (id, name, channel_type, visibility, about, created_by, ttl_seconds) "
        "VALUES ($1,$2,$3,$4,$5,$6,$7)",
        channel_id, name, channel_type, visibility, _tag(event, "about") or None, event["pubkey"],
        _ttl(_tag(event, "ttl")),
    )
    # the creator owns the channel (create-channel task grading expects role `owner`, tasks/README.md#verifiers)
    await conn.execute(
        "INSERT INTO relay.members (channel_id, pubkey, role) VALUES ($1,$2,'owner')", channel_id, event["pubkey"]
    )
    await store.insert_event(conn, event, channel_id)
    deliveries = await _regenerate(
        conn, relay, channel_id, (state.KIND_METADATA, state.KIND_ADMINS, state.KIND_MEMBERS)
    )
    readers = deliveries[0].readers if deliveries else None
    return Outcome("", [Delivery(event, readers), *deliveries])


async def _readers(conn: asyncpg.Connection, channel: dict[str, Any]) -> frozenset[str] | None:
    if channel["visibility"] != "private":
        return None
    return frozenset(pk for pk, _ in await store.channel_members(conn, channel["id"]))


async def _message(
    conn: asyncpg.Connection, event: dict[str, Any], channel: dict[str, Any], actor_role: str | None
) -> Outcome:
    if actor_role is None:
        raise Rejected("restricted: only channel members may post")
    if channel["archived_at"] is not None:
        raise Rejected("restricted: channel is archived")
    if not await _store_channel_event(conn, event, channel["id"]):
        return Outcome("duplicate: already have this event")
    return Outcome("", [Delivery(event, await _readers(conn, channel))])


async def _membership(
    conn: asyncpg.Connection, relay: Keypair, event: dict[str, Any], channel: dict[str, Any],
    actor_role: str | None,
) -> Outcome:
    target = _tag(event, "p")
    if not target or len(target) != 64 or any(c not in "0123456789abcdef" for c in target):
        raise Rejected("invalid: p tag must be a 64-hex pubkey")
    self_removal = event["kind"] == KIND_REMOVE_MEMBER and target == event["pubkey"]
    if actor_role not in state.ADMIN_ROLES and not self_removal:
        raise Rejected("restricted: only channel owners and admins manage members")
    if await conn.fetchval("SELECT 1 FROM relay.events WHERE id = $1", event["id"]):
        return Outcome("duplicate: already have this event")
    if event["kind"] == KIND_ADD_MEMBER:
        role = _tag(event, "role") or "member"
        if role not in ROLES:
            raise Rejected(f"invalid: role must be one of {sorted(ROLES)}")
        if role == "owner" and actor_role != "owner":
            raise Rejected("restricted: only an owner may grant owner")
        await conn.execute(
            "INSERT INTO relay.members (channel_id, pubkey, role) VALUES ($1,$2,$3) "
            "ON CONFLICT (channel_id, pubkey) DO UPDATE SET role = EXCLUDED.role",
            channel["id"], target, role,
        )
    else:
        await conn.execute("DELETE FROM relay.members WHERE channel_id = $1 AND pubkey = $2", channel["id"], target)
    await _store_channel_event(conn, event, channel["id"])
    deliveries = await _regenerate(conn, relay, channel["id"], (state.KIND_ADMINS, state.KIND_MEMBERS))
    # the metadata readers change with membership too
    deliveries += await _regenerate(conn, relay, channel["id"], (state.KIND_METADATA,))
    readers = deliveries[0].readers if deliveries else None
    return Outcome("", [Delivery(event, readers), *deliveries])


async def _edit(
    conn: asyncpg.Connection, relay: Keypair, event: dict[str, Any], channel: dict[str, Any],
    actor_role: str | None,
) -> Outcome:
    # Members may archive: the seed's teardown archives as the orchestrator, a plain member (docs/tenant.md#teardown)
    if actor_role is None:
        raise Rejected("restricted: only channel members may edit the channel")
    if await conn.fetchval("SELECT 1 FROM relay.events WHERE id = $1", event["id"]):
        return Outcome("duplicate: already have this event")
    updates: dict[str, Any] = {}
    archived = _tag(event, "archived")
    if archived is not None:
        if archived not in ("true", "false"):
            raise Rejected("invalid: archived must be true or false")
        if archived == "true" and channel["archived_at"] is not None:
            raise Rejected("invalid: channel is already archived")
        updates["archived_at"] = "now()" if archived == "true" else "NULL"
    values: dict[str, Any] = {}
    for name in ("name", "about", "topic", "purpose"):
        value = _tag(event, name)
        if value is not None:
            if name == "name" and not value.strip():
                raise Rejected("invalid: name must not be empty")
            values[name] = value
    ttl = _tag(event, "ttl")
    if ttl is not None:
        values["ttl_seconds"] = _ttl(ttl)
    if not updates and not values:
        raise Rejected("invalid: nothing to change")
    assignments = [f"{col} = {expr}" for col, expr in updates.items()]
    args: list[Any] = [channel["id"]]
    for col, value in values.items():
        args.append(value)
        assignments.append(f"{col} = ${len(args)}")
    await conn.execute(
        f"UPDATE relay.channels SET {', '.join(assignments)}, updated_at = now(), last_activity_at = now() "
        "WHERE id = $1",
        *args,
    )
    await store.insert_event(conn, event, channel["id"])
    deliveries = await _regenerate(conn, relay, channel["id"], (state.KIND_METADATA,))
    readers = deliveries[0].readers if deliveries else None
    return Outcome("", [Delivery(event, readers), *deliveries])


async def _delete(
    conn: asyncpg.Connection, relay: Keypair, event: dict[str, Any], channel: dict[str, Any],
    actor_role: str | None,
) -> Outcome:
    if actor_role != "owner":
        raise Rejected("restricted: only the channel owner may delete it")
    readers = await _readers(conn, channel)
    await store.insert_event(conn, event, channel["id"])
    await conn.execute("UPDATE relay.channels SET deleted_at = now() WHERE id = $1", channel["id"])
    return Outcome("", [Delivery(event, readers)])


async def sweep_expired(conn: asyncpg.Connection, relay: Keypair) -> list[Delivery]:
    """Archive TTL channels whose deadline passed without activity (docs/relay-protocol.md#kinds `ttl`)."""
    ids = await conn.fetch(
        "SELECT id FROM relay.channels WHERE archived_at IS NULL AND deleted_at IS NULL "
        "AND ttl_seconds IS NOT NULL AND last_activity_at + make_interval(secs => ttl_seconds) < now()"
    )
    out: list[Delivery] = []
    for row in ids:
        await _lock_channel(conn, row["id"])
        await conn.execute("UPDATE relay.channels SET archived_at = now() WHERE id = $1 AND archived_at IS NULL",
                           row["id"])
        out += await _regenerate(conn, relay, row["id"], (state.KIND_METADATA,))
    return out
