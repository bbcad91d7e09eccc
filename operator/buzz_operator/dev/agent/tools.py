"""What a policy acts through — the stand-in's folded-in MCP toolset: posting in the channel,
asking a teammate, channel and member admin, the profile directory, files — plus the model
accounting every read and write is billed through (usage and handoff log lines)."""

from __future__ import annotations

import asyncio
import json
import os
import uuid

from .config import AcpConfig
from .nostr import Event, Tags, latest_by, provisioned_by, tag_values, thread_tags
from .session import RelaySession
from .tracing import ACP_TARGET, Logger
from .turn import (
    KIND_ADD_MEMBER,
    KIND_CHANNEL_MEMBERS,
    KIND_CREATE_CHANNEL,
    KIND_MESSAGE,
    KIND_PROFILE,
    Turn,
    created_at,
)
from .usage import Session


class Tools:
    """Mixed into Bridge, which owns the state declared here."""

    config: AcpConfig
    log: Logger
    agent_log: Logger
    relay: RelaySession
    _waiters: dict[str, asyncio.Future[Event]]

    # -- model accounting ----------------------------------------------------------------------
    def read(self, turn: Turn, text: str) -> None:
        """One model call over `text`; may hand off first (logged like buzz-agent)."""
        handoff = turn.session.read(text)
        if handoff is not None:
            self.agent_log.info("buzz_agent::handoff", handoff.line())

    def report_usage(self, session: Session) -> None:
        self.log.debug("acp::usage", session.line())

    # -- tools ---------------------------------------------------------------------------------
    async def post(self, turn: Turn, content: str, reply_to: Event | None = None,
                   mentions: list[str] | None = None) -> Event:
        """Publish in the turn's channel: a thread reply to `reply_to`, else a top-level message."""
        tags: Tags = [["h", turn.channel]]
        if reply_to is not None:
            tags.extend(thread_tags(reply_to))
        for pubkey in dict.fromkeys(mentions or []):
            tags.append(["p", pubkey])
        # Published at once, often in the second of the event it answers: the evidence's order
        # puts an answer after what it answers (docs/evidence.md#order), so nothing waits here.
        turn.session.write(content)
        return await self.relay.send(KIND_MESSAGE, content, tags)

    async def ask(self, turn: Turn, about: Event, pubkey: str, name: str, question: str) -> Event:
        """Mention a teammate in the thread of `about` and wait (idle timeout) for its answer."""
        waiter: asyncio.Future[Event] = asyncio.get_running_loop().create_future()
        self._waiters[pubkey] = waiter
        await self.post(turn, f"@{name} {question}", reply_to=about, mentions=[pubkey])
        try:
            answer = await asyncio.wait_for(waiter, self.config.idle_timeout_s)
        finally:
            self._waiters.pop(pubkey, None)
        self.read(turn, str(answer.get("content", "")))
        return answer

    async def create_channel(self, turn: Turn, name: str, ttl: int | None) -> str:
        channel_id = str(uuid.uuid4())
        tags: Tags = [["h", channel_id], ["name", name], ["visibility", "private"],
                      ["channel_type", "stream"]]
        if ttl:
            tags.append(["ttl", str(ttl)])
        turn.session.write(json.dumps(tags))
        await self.relay.send(KIND_CREATE_CHANNEL, "", tags)
        return channel_id

    async def add_member(self, turn: Turn, channel_id: str, pubkey: str, role: str) -> None:
        tags: Tags = [["h", channel_id], ["p", pubkey], ["role", role]]
        turn.session.write(json.dumps(tags))
        await self.relay.send(KIND_ADD_MEMBER, "", tags)

    async def directory(self, turn: Turn) -> dict[str, str]:
        """name → pubkey from kind-0 profiles (latest per author), read into the context.

        Display names are not unique on a shared relay: another owner's directory may reuse
        them, and every agent its owner attested (another trial's too) may publish a profile
        under any name. A name claimed by several identities resolves to the directory identity
        this agent's owner provisioned (its own auth tag grants profiles only, a tag no agent
        can mint: buzz_operator.relay.directory), then to any identity of the same owner, then
        to the most recently published profile."""
        latest = latest_by(await self.relay.query([{"kinds": [KIND_PROFILE], "limit": 5000}]), "pubkey")
        my_owner = self.config.auth_tag[1] if self.config.auth_tag else None
        ranked: dict[str, tuple[tuple[bool, bool, int], str]] = {}
        for author, event in latest.items():
            try:
                profile = json.loads(event.get("content") or "{}")
            except ValueError:
                continue
            if not isinstance(profile, dict):
                continue
            same_owner = my_owner is not None and my_owner in tag_values(event, "auth")
            rank = (my_owner is not None and provisioned_by(event, my_owner), same_owner, created_at(event))
            for key in ("name", "display_name"):
                name = profile.get(key)
                if isinstance(name, str) and name and (name not in ranked or rank > ranked[name][0]):
                    ranked[name] = (rank, author)
        names = {name: author for name, (_, author) in ranked.items()}
        self.read(turn, json.dumps(sorted(names)))
        return names

    async def channel_members(self, turn: Turn, channel_id: str) -> list[str]:
        """The channel's member pubkeys, from the relay's kind-39002 member list (as `buzz channels
        members` reads it), read into the context."""
        latest = latest_by(await self.relay.query([{"kinds": [KIND_CHANNEL_MEMBERS], "#d": [channel_id]}]), "d")
        event = latest.get(channel_id)
        members = tag_values(event, "p") if event is not None else []
        self.read(turn, json.dumps(members))
        return members

    async def profiles(self, turn: Turn, pubkeys: list[str]) -> list[tuple[str, str, str]]:
        """(pubkey, name, about) of each identity's latest kind-0 profile, as `buzz users get
        --pubkey` prints them (the profile's own fields), read into the context."""
        if not pubkeys:
            return []
        events = await self.relay.query([{"kinds": [KIND_PROFILE], "authors": pubkeys, "limit": 5000}])
        rows = []
        for author, event in sorted(latest_by(events, "pubkey").items()):
            try:
                profile = json.loads(event.get("content") or "{}")
            except ValueError:
                continue
            if not isinstance(profile, dict):
                continue
            name = profile.get("display_name") or profile.get("name")
            about = profile.get("about")
            rows.append((author, name if isinstance(name, str) else "", about if isinstance(about, str) else ""))
        self.read(turn, json.dumps(rows))
        return rows

    def read_file(self, turn: Turn, path: str) -> str | None:
        try:
            with open(os.path.expanduser(path), encoding="utf-8") as handle:
                content = handle.read()
        except OSError as exc:
            self.log.warn(ACP_TARGET, f"read {path} failed: {exc}")
            return None
        self.read(turn, content)
        return content

    async def run_command(self, turn: Turn, command: str) -> tuple[int, str]:
        """A shell command in the agent's own container, as dev-mcp's shell tool runs one: its
        exit code (a signal as 128 + its number, as a shell reports it) and what it printed."""
        process = await asyncio.create_subprocess_shell(
            command, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
        out, err = await process.communicate()
        code = process.returncode if process.returncode is not None else -1
        code = 128 - code if code < 0 else code
        if code != 0:
            self.log.warn(ACP_TARGET, f"command exited {code}: {err.decode(errors='replace')[-400:]}")
        self.read(turn, out.decode(errors="replace"))
        return code, out.decode(errors="replace")

    def write_file(self, turn: Turn, path: str, content: str) -> None:
        os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(content)
        turn.session.write(content)

