"""The stand-in buzz-acp bridge: relay connection, channel subscriptions, wake-on-mention, turn
bookkeeping (usage, handoff and turn-end log lines) and the tools a policy acts through.

The "model" is folded in: a policy (policies.py) decides what a turn does; the bridge makes every
relay write and bills every byte the policy reads or writes to the session's usage counters.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from .compat import AsyncTimeout
from .config import AcpConfig
from .nostr import Event, Tags, tag_values
from .prompt import Team, parse_team
from .session import RelayError, RelaySession, Subscription
from .tracing import EnvFilter, Logger
from .usage import Session

KIND_PROFILE = 0
KIND_MESSAGE = 9
KIND_ADD_MEMBER = 9000
KIND_CREATE_CHANNEL = 9007
TARGET = "buzz_acp"
CONNECT_ATTEMPTS = 30
AGENT_LOG_DEFAULT = "buzz_agent=info"


def _created_at(event: Event) -> int:
    value = event.get("created_at")
    return value if isinstance(value, int) else 0


@dataclass
class Turn:
    event: Event
    channel: str
    text: str
    session: Session
    # created_at of the newest event this turn has read or written (see Bridge.post)
    floor: int = 0

    @property
    def author(self) -> str:
        return str(self.event.get("pubkey", ""))


OnTurn = Callable[[Turn], Awaitable[None]]


class Bridge:
    def __init__(self, config: AcpConfig, log: Logger) -> None:
        self.config = config
        self.log = log
        # The real buzz-agent is its own process with its own logging defaults, and its handoff
        # lines reach the seat's log under the runtime's default RUST_LOG (the ledger parses
        # them from real trials, §5.5). RUST_LOG comes first so an explicit buzz_agent directive
        # still wins over the default.
        self.agent_log = Logger(EnvFilter(f"{config.rust_log or ''},{AGENT_LOG_DEFAULT}"), log.stream)
        self.team: Team = parse_team(config.system_prompt)
        self.pubkey = config.keys.pubkey
        self.relay = RelaySession(config.relay_url, config.keys, config.auth_tag)
        self.sessions: dict[str, Session] = {
            channel: Session(f"standin-{self.pubkey[:12]}-{channel[:8]}", config.system_prompt,
                             config.handoff_at)
            for channel in config.channels
        }
        self._waiters: dict[str, asyncio.Future[Event]] = {}
        self._seen: set = set()
        self._newest = 0  # created_at of the newest channel event received
        self.turns: list[asyncio.Task[None]] = []

    # -- connection ----------------------------------------------------------------------------
    def _fresh_session(self) -> RelaySession:
        return RelaySession(self.config.relay_url, self.config.keys, self.config.auth_tag)

    async def connect(self) -> None:
        for attempt in range(1, CONNECT_ATTEMPTS + 1):
            try:
                await self.relay.connect()
                return
            except (AsyncTimeout, OSError, RelayError) as exc:
                if attempt == CONNECT_ATTEMPTS:
                    raise
                self.log.warn(TARGET, f"relay connect attempt {attempt} failed: {exc}; retrying")
                await self.relay.close()
                self.relay = self._fresh_session()
                await asyncio.sleep(min(0.2 * attempt, 2.0))

    async def serve(self, on_turn: OnTurn) -> None:
        """Connect and listen; when the relay goes away (a relay pod restart), reconnect and
        resubscribe from the newest event seen, so a trial survives it. Returns only by raising
        once the relay stays unreachable for all connect attempts."""
        since = int(time.time())
        while True:
            await self.connect()
            try:
                await self.listen(on_turn, since)
            except RelayError as exc:
                self.log.warn(TARGET, f"relay connection lost ({exc}); reconnecting")
            since = max(since, self._newest)  # events of that second again; ids dedupe them
            await self.relay.close()
            self.relay = self._fresh_session()

    async def listen(self, on_turn: OnTurn, since: int) -> None:
        """Subscribe to every channel, announce readiness, then wake on each mention until the
        connection is lost (RelayError)."""
        subs = []
        for channel in self.config.channels:
            sub = await self.relay.subscribe([{"kinds": [KIND_MESSAGE], "#h": [channel], "since": since}])
            await asyncio.wait_for(sub.eose.wait(), self.relay.timeout)
            subs.append((channel, sub))
            self.log.info(TARGET, f"subscribed to channel {channel}")
        queue: asyncio.Queue = asyncio.Queue()

        async def pump(channel: str, sub: Subscription) -> None:
            while True:
                queue.put_nowait((channel, await sub.next_event()))

        pumps = [asyncio.create_task(pump(channel, sub)) for channel, sub in subs]
        lost = asyncio.ensure_future(self.relay.lost.wait())
        try:
            while True:
                getter = asyncio.ensure_future(queue.get())
                done, _ = await asyncio.wait({getter, lost}, return_when=asyncio.FIRST_COMPLETED)
                if getter not in done:
                    getter.cancel()
                    raise RelayError("relay connection lost")
                channel, event = getter.result()
                self._on_event(channel, event, on_turn)
        finally:
            lost.cancel()
            for task in pumps:
                task.cancel()

    def _on_event(self, channel: str, event: Event, on_turn: OnTurn) -> None:
        ident = str(event.get("id", ""))
        if ident in self._seen:
            return  # redelivered after a resubscription
        self._seen.add(ident)
        self._newest = max(self._newest, _created_at(event))
        if event.get("pubkey") == self.pubkey:
            return  # own messages never wake the agent
        mentioned = self.pubkey in tag_values(event, "p")
        if self.config.mentions_only and not mentioned:
            return
        waiter = self._waiters.pop(str(event.get("pubkey")), None)
        if waiter is not None and not waiter.done():
            waiter.set_result(event)  # an answer to a question this agent asked mid-turn
            return
        text = str(event.get("content", ""))
        turn = Turn(event, channel, text, self.sessions[channel], _created_at(event))
        self.turns.append(asyncio.create_task(on_turn(turn)))

    # -- model accounting ----------------------------------------------------------------------
    def read(self, turn: Turn, text: str) -> None:
        """One model call over `text`; may hand off first (logged like buzz-agent)."""
        handoff = turn.session.read(text)
        if handoff is not None:
            self.agent_log.info("buzz_agent::handoff", handoff.line())

    def report_usage(self, session: Session) -> None:
        self.log.debug("acp::usage", session.line())

    # -- tools ---------------------------------------------------------------------------------
    async def post(self, turn: Turn, content: str, thread: bool = True,
                   mentions: list[str] | None = None) -> Event:
        tags: Tags = [["h", turn.channel]]
        if thread:
            tags.extend(self._thread_tags(turn.event))
        for pubkey in dict.fromkeys(mentions or []):
            tags.append(["p", pubkey])
        # A model takes seconds; the stand-in takes milliseconds. Publishing in the same second
        # as the message being answered would tie on created_at, and a tie sorts by event id,
        # so the answer could land *before* the task in a transcript. Wait out the second.
        delay = turn.floor + 1 - time.time()
        if delay > 0:
            await asyncio.sleep(delay)
        turn.session.write(content)
        event = await self.relay.send(KIND_MESSAGE, content, tags)
        turn.floor = max(turn.floor, _created_at(event))
        return event

    @staticmethod
    def _thread_tags(parent: Event) -> Tags:
        """NIP-10 like the SDK: a direct reply to a root, or root + reply for a nested one."""
        markers = {str(tag[3]): str(tag[1]) for tag in parent.get("tags", [])
                   if isinstance(tag, list) and len(tag) >= 4 and tag[0] == "e"}
        # the parent's root; a direct reply's parent ("reply" marker alone) is the root itself
        root = markers.get("root") or markers.get("reply")
        if root is None:
            return [["e", str(parent["id"]), "", "reply"]]
        return [["e", root, "", "root"], ["e", str(parent["id"]), "", "reply"]]

    async def ask(self, turn: Turn, pubkey: str, name: str, question: str) -> Event:
        """Mention a teammate in the thread and wait (idle timeout) for its answer."""
        waiter: asyncio.Future[Event] = asyncio.get_running_loop().create_future()
        self._waiters[pubkey] = waiter
        await self.post(turn, f"@{name} {question}", mentions=[pubkey])
        try:
            answer = await asyncio.wait_for(waiter, self.config.idle_timeout_s)
        finally:
            self._waiters.pop(pubkey, None)
        self.read(turn, str(answer.get("content", "")))
        turn.floor = max(turn.floor, _created_at(answer))
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

        Display names are not unique on a shared relay (another owner's directory may reuse
        them), so a name claimed by several identities resolves to the one attested by the
        same NIP-OA owner as this agent, then to the most recently published profile."""
        latest: dict[str, Event] = {}
        for event in await self.relay.query([{"kinds": [KIND_PROFILE], "limit": 5000}]):
            author = str(event.get("pubkey", ""))
            if author not in latest or event.get("created_at", 0) >= latest[author].get("created_at", 0):
                latest[author] = event
        my_owner = self.config.auth_tag[1] if self.config.auth_tag else None
        ranked: dict[str, tuple[tuple[bool, int], str]] = {}
        for author, event in latest.items():
            try:
                profile = json.loads(event.get("content") or "{}")
            except ValueError:
                continue
            if not isinstance(profile, dict):
                continue
            same_owner = my_owner is not None and my_owner in tag_values(event, "auth")
            rank = (same_owner, _created_at(event))
            for key in ("name", "display_name"):
                name = profile.get(key)
                if isinstance(name, str) and name and (name not in ranked or rank > ranked[name][0]):
                    ranked[name] = (rank, author)
        names = {name: author for name, (_, author) in ranked.items()}
        self.read(turn, json.dumps(sorted(names)))
        return names

    def read_file(self, turn: Turn, path: str) -> str | None:
        try:
            with open(os.path.expanduser(path), encoding="utf-8") as handle:
                content = handle.read()
        except OSError as exc:
            self.log.warn(TARGET, f"read {path} failed: {exc}")
            return None
        self.read(turn, content)
        return content

    def write_file(self, turn: Turn, path: str, content: str) -> None:
        os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(content)
        turn.session.write(content)
