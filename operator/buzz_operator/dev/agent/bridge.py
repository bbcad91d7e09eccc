"""The stand-in buzz-acp bridge: relay connection and reconnection, channel subscriptions,
wake-on-mention and the per-channel event queue. The "model" is folded in: a policy
(policies.py) decides what a turn does and acts through the tools (tools.py), which bill every
byte it reads or writes to the session.

Queueing is buzz-acp's `--multiple-event-handling queue` (crates/buzz-acp/src/queue.rs): an event
for a channel with no turn running starts one at once; events that arrive while it runs wait and
the next turn delivers them together, oldest first, up to MAX_BATCH_EVENTS. (Block's default,
`steer`, instead hands a mid-turn event to the running turn; docs/scripted-model.md.)
"""

from __future__ import annotations

import asyncio
import time

from .compat import AsyncTimeout
from .config import AcpConfig
from .nostr import Event, tag_values
from .prompt import Team, parse_team
from .session import RelayError, RelaySession, Subscription, SubscriptionRefused
from .tools import Tools
from .tracing import ACP_TARGET, EnvFilter, Logger
from .turn import (
    KIND_MESSAGE,
    MAX_BATCH_EVENTS,
    MAX_PENDING_PER_CHANNEL,
    OnTurn,
    Turn,
    batch_text,
    created_at,
)
from .usage import Session

CONNECT_ATTEMPTS = 30
AGENT_LOG_DEFAULT = "buzz_agent=info"


class Bridge(Tools):
    def __init__(self, config: AcpConfig, log: Logger) -> None:
        self.config = config
        self.log = log
        # The real buzz-agent is its own process with its own logging defaults, and its handoff
        # lines reach the seat's log under the runtime's default RUST_LOG (the ledger parses
        # them from real trials, docs/accounting.md#log-lines). RUST_LOG comes first so an explicit buzz_agent directive
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
        self.pending: dict[str, list[Event]] = {channel: [] for channel in config.channels}
        self.in_flight: set[str] = set()

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
                self.log.warn(ACP_TARGET, f"relay connect attempt {attempt} failed: {exc}; retrying")
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
            except SubscriptionRefused:
                raise
            except RelayError as exc:
                self.log.warn(ACP_TARGET, f"relay connection lost ({exc}); reconnecting")
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
            if sub.closed is not None:
                raise SubscriptionRefused(f"relay refused channel {channel}: {sub.closed}")
            subs.append((channel, sub))
            self.log.info(ACP_TARGET, f"subscribed to channel {channel}")
        queue: asyncio.Queue = asyncio.Queue()

        async def pump(channel: str, sub: Subscription) -> None:
            while True:
                queue.put_nowait((channel, await sub.next_event()))

        pumps = [asyncio.create_task(pump(channel, sub)) for channel, sub in subs]
        lost = asyncio.ensure_future(self.relay.lost.wait())
        try:
            while True:
                getter = asyncio.ensure_future(queue.get())
                done, _ = await asyncio.wait({getter, lost, *pumps}, return_when=asyncio.FIRST_COMPLETED)
                if getter not in done:
                    getter.cancel()
                    if lost.done():
                        raise RelayError("relay connection lost")
                    # a pump only ends when its subscription was CLOSED by the relay
                    raise next(p for p in pumps if p.done()).exception() or RelayError("subscription ended")
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
        self._newest = max(self._newest, created_at(event))
        if event.get("pubkey") == self.pubkey:
            return  # own messages never wake the agent
        mentioned = self.pubkey in tag_values(event, "p")
        if self.config.mentions_only and not mentioned:
            return
        waiter = self._waiters.pop(str(event.get("pubkey")), None)
        if waiter is not None and not waiter.done():
            waiter.set_result(event)  # an answer to a question this agent asked mid-turn
            return
        pending = self.pending.setdefault(channel, [])
        if len(pending) >= MAX_PENDING_PER_CHANNEL:
            dropped = pending.pop(0)
            self.log.warn(ACP_TARGET, f"channel {channel} queue full; dropped event {dropped.get('id')}")
        pending.append(event)
        self.dispatch(channel, on_turn)

    def dispatch(self, channel: str, on_turn: OnTurn) -> None:
        """Start the channel's next turn with everything queued for it, unless one is running."""
        pending = self.pending.get(channel)
        if channel in self.in_flight or not pending:
            return
        batch = pending[:MAX_BATCH_EVENTS]
        del pending[:MAX_BATCH_EVENTS]
        self.in_flight.add(channel)
        turn = Turn(batch, channel, batch_text(batch), self.sessions[channel])
        self.turns.append(asyncio.create_task(self._run(turn, on_turn)))

    async def _run(self, turn: Turn, on_turn: OnTurn) -> None:
        try:
            await on_turn(turn)
        finally:
            self.in_flight.discard(turn.channel)
        self.dispatch(turn.channel, on_turn)  # not reached when cancelled: shutting down
