"""The development relay: a Buzz-compatible NIP-01/NIP-42/NIP-29-style websocket relay backed by
Postgres, enough to run benchmark trials against (docs/relay-protocol.md). Host-header tenancy, AUTH before anything,
NIP-OA admission by the relay owner, channel kinds with relay-signed state, REQ with live
delivery, and `GET /_readiness`. Every bad input is answered, never raised:
`OK false` / `CLOSED` / `NOTICE` with a NIP-01 machine prefix."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import secrets
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from http import HTTPStatus
from typing import Any

import asyncpg
from websockets.asyncio.server import Server, ServerConnection
from websockets.asyncio.server import serve as ws_serve
from websockets.exceptions import ConnectionClosed
from websockets.http11 import Request, Response

from buzz_operator.dev.relay import channels, store
from buzz_operator.dev.relay.bridge import Bridge, FrontListener
from buzz_operator.dev.relay.config import RelayConfig
from buzz_operator.dev.relay.filters import Filter, FilterError, parse_filter
from buzz_operator.relay.hosts import normalize_host, relay_url_authority
from buzz_operator.relay.nostr import (
    KIND_AUTH,
    event_auth_tag,
    event_is_attested,
    event_shape_error,
    verify_auth_tag,
    verify_event,
)

KIND_GIFT_WRAP = 1059  # NIP-59: signed by a throwaway key, so it never matches the connection's identity
log = logging.getLogger("buzz_operator.dev.relay")

AUTH_WINDOW_S = 600  # NIP-42: AUTH events must be recent
FUTURE_SKEW_S = 900
MAX_SUBS_PER_CONNECTION = 64
SEND_TIMEOUT_S = 10.0
_FRAME_LIMIT = 4 * 1024 * 1024  # frames above this are dropped by websockets itself
_HEAD_LIMIT = 64 * 1024  # the front listener's stream buffer bounds one request head


@dataclass(eq=False)  # identity-hashed: sessions live in a set
class Session:
    ws: ServerConnection
    challenge: str = field(default_factory=lambda: secrets.token_hex(16))
    pubkey: str | None = None
    subs: dict[str, list[Filter]] = field(default_factory=dict)
    writes: asyncio.Semaphore = field(default_factory=lambda: asyncio.Semaphore(16))
    tasks: set[asyncio.Task[None]] = field(default_factory=set)


class Relay:
    def __init__(self, config: RelayConfig, pool: asyncpg.Pool) -> None:
        self.config = config
        self.pool = pool
        self.relay_keypair = config.relay_keypair
        self.authority = config.authority
        self.sessions: set[Session] = set()

    # -- HTTP side: readiness and tenancy --------------------------------------------------------
    async def process_request(self, connection: ServerConnection, request: Request) -> Response | None:
        if request.path.split("?", 1)[0] == "/_readiness":
            ok = await self.database_ready()
            status = HTTPStatus.OK if ok else HTTPStatus.SERVICE_UNAVAILABLE
            return connection.respond(status, "ok\n" if ok else "database unavailable\n")
        host = request.headers.get("Host", "")
        if normalize_host(host) != self.authority:
            # unknown tenant fails closed, before the websocket upgrade (docs/relay-protocol.md#tenancy)
            log.info("unknown host refused", extra={"fields": {"host": host[:200]}})
            return connection.respond(HTTPStatus.NOT_FOUND, "unknown relay host\n")
        return None

    async def database_ready(self) -> bool:
        try:
            async with asyncio.timeout(2.0):
                return await self.pool.fetchval("SELECT 1") == 1
        except Exception:  # any failure means "not ready"; the reason is logged, not raised
            log.warning("readiness: postgres did not answer SELECT 1", exc_info=True)
            return False

    # -- websocket side ------------------------------------------------------------------------
    async def handle(self, ws: ServerConnection) -> None:
        session = Session(ws)
        self.sessions.add(session)
        try:
            await ws.send(json.dumps(["AUTH", session.challenge]))
            async for raw in ws:
                await self.on_message(session, raw)
        except ConnectionClosed:
            pass
        finally:
            self.sessions.discard(session)
            for task in list(session.tasks):
                task.cancel()

    async def send(self, session: Session, frame: list[Any]) -> None:
        try:
            async with asyncio.timeout(SEND_TIMEOUT_S):
                await session.ws.send(json.dumps(frame))
        except ConnectionClosed:
            pass
        except TimeoutError:
            # a reader that stopped reading must not stall live delivery to everyone else
            log.warning("dropping a slow consumer", extra={"fields": {"pubkey": session.pubkey}})
            session.ws.transport.abort()

    async def on_message(self, session: Session, raw: str | bytes) -> None:
        try:
            msg = json.loads(raw)
        except (json.JSONDecodeError, UnicodeDecodeError):
            await self.send(session, ["NOTICE", "invalid: message is not JSON"])
            return
        if not isinstance(msg, list) or not msg or not isinstance(msg[0], str):
            await self.send(session, ["NOTICE", "invalid: message must be a JSON array starting with a type"])
            return
        head = msg[0]
        if head == "EVENT" and len(msg) == 2:
            size = len(raw.encode() if isinstance(raw, str) else raw)
            # writes run concurrently (bounded) so a burst of publishes is not serialised
            await session.writes.acquire()
            task = asyncio.create_task(self._event_task(session, msg[1], size))
            session.tasks.add(task)
            task.add_done_callback(session.tasks.discard)
        elif head == "AUTH" and len(msg) == 2:
            await self.on_auth(session, msg[1])
        elif head == "REQ" and len(msg) >= 3:
            await self.on_req(session, msg[1], msg[2:])
        elif head == "CLOSE" and len(msg) == 2:
            session.subs.pop(str(msg[1]), None)
        else:
            await self.send(session, ["NOTICE", f"invalid: unsupported or malformed {head[:20]!r} message"])

    async def _event_task(self, session: Session, event: Any, size: int) -> None:
        try:
            await self.on_event(session, event, size)
        except Exception:  # a bug must cost one event, never the connection or the relay
            log.exception("event handling failed")
            eid = event.get("id", "") if isinstance(event, dict) else ""
            await self.send(session, ["OK", eid if isinstance(eid, str) else "", False, "error: internal error"])
        finally:
            session.writes.release()

    async def on_auth(self, session: Session, event: Any) -> None:
        eid = event.get("id", "") if isinstance(event, dict) else ""
        reason = self._auth_refusal(session, event)
        if reason is not None:
            log.info("auth refused", extra={"fields": {"reason": reason}})
            await self.send(session, ["OK", eid, False, reason])
            return
        session.pubkey = event["pubkey"]
        log.info("authenticated", extra={"fields": {"pubkey": session.pubkey}})
        await self.send(session, ["OK", eid, True, ""])

    def _auth_refusal(self, session: Session, event: Any) -> str | None:
        shape = event_shape_error(event)
        if shape is not None:
            return f"invalid: {shape}"
        if not verify_event(event):
            return "invalid: bad event id or signature"
        if event["kind"] != KIND_AUTH:
            return f"invalid: AUTH event must be kind {KIND_AUTH}"
        tags = {t[0]: t[1] for t in event["tags"] if len(t) >= 2}
        if tags.get("challenge") != session.challenge:
            return "invalid: challenge does not match"
        try:
            relay_ok = relay_url_authority(tags.get("relay", "")) == self.authority
        except ValueError:
            relay_ok = False
        if not relay_ok:
            return "invalid: relay tag does not name this relay"
        if abs(time.time() - event["created_at"]) > AUTH_WINDOW_S:
            return "invalid: AUTH event is stale"
        if not self._admitted(event, for_auth=True):
            return "restricted: pubkey is not attested by the relay owner"
        return None

    def _admitted(self, event: dict[str, Any], *, for_auth: bool = False) -> bool:
        """The owner itself, or an identity carrying a valid NIP-OA tag from the owner (docs/relay-protocol.md#auth).
        Tag conditions (`kind=…`, `created_at…`) restrict what the identity may publish, so
        they are evaluated against each published event, not against the AUTH event."""
        if event["pubkey"] == self.config.owner_pubkey:
            return True
        if for_auth:
            tag = event_auth_tag(event)
            return tag is not None and verify_auth_tag(tag, event["pubkey"], self.config.owner_pubkey)
        return event_is_attested(event, self.config.owner_pubkey)

    async def on_event(self, session: Session, event: Any, size: int) -> None:
        eid = event.get("id", "") if isinstance(event, dict) else ""
        eid = eid if isinstance(eid, str) else ""
        ok, message, deliveries = await self.accept_event(event, size, signer=session.pubkey)
        await self.send(session, ["OK", eid, ok, message])
        await self.broadcast(deliveries)

    async def accept_event(
        self, event: Any, size: int, *, signer: str | None
    ) -> tuple[bool, str, list[channels.Delivery]]:
        """Validate, admit and store one published event: `(ok, message, deliveries)`. Shared by
        the websocket EVENT path and the HTTP bridge's POST /events, so both admit alike; the
        caller answers first and then broadcasts the deliveries. `signer` is the connection's
        authenticated pubkey (NIP-42, or the bridge's NIP-98 signer), None before AUTH."""
        eid = event.get("id", "") if isinstance(event, dict) else ""
        eid = eid if isinstance(eid, str) else ""
        if size > self.config.max_event_bytes:
            return False, f"invalid: event exceeds {self.config.max_event_bytes} bytes", []
        shape = event_shape_error(event)
        if shape is not None:
            return False, f"invalid: {shape}", []
        if signer is None:
            return False, "auth-required: authenticate with NIP-42 first", []
        if event["pubkey"] != signer and event["kind"] != KIND_GIFT_WRAP:
            # as Block's relay (handlers/event.rs): one connection publishes as its own identity only,
            # so a trial's agent cannot post as another identity it learnt the pubkey of
            return False, "invalid: event pubkey does not match authenticated identity", []
        if not verify_event(event):
            return False, "invalid: bad event id or signature", []
        if event["kind"] == KIND_AUTH:
            return False, "invalid: AUTH events are not published", []
        if event["created_at"] > time.time() + FUTURE_SKEW_S:
            return False, "invalid: created_at is too far in the future", []
        if not self._admitted(event):
            return False, "restricted: event lacks a valid owner auth tag", []
        try:
            async with self.pool.acquire() as conn, conn.transaction():
                outcome = await channels.apply_event(conn, self.relay_keypair, event)
        except channels.Rejected as exc:
            return False, str(exc), []
        except Exception:  # the database is down or misbehaving: tell the client it may retry
            log.exception("event write failed", extra={"fields": {"id": eid, "kind": event["kind"]}})
            return False, "error: storage failure, retryable: try again", []
        return True, outcome.message, outcome.deliveries

    async def broadcast(self, deliveries: list[channels.Delivery]) -> None:
        for delivery in deliveries:
            for session in list(self.sessions):
                if session.pubkey is None:
                    continue
                if delivery.readers is not None and session.pubkey not in delivery.readers:
                    continue
                for sub_id, filters in list(session.subs.items()):
                    if any(f.matches(delivery.event) for f in filters):
                        await self.send(session, ["EVENT", sub_id, delivery.event])

    async def on_req(self, session: Session, sub_id: Any, raw_filters: list[Any]) -> None:
        if not isinstance(sub_id, str) or not 0 < len(sub_id) <= 64:
            await self.send(session, ["NOTICE", "invalid: subscription id must be a 1-64 character string"])
            return
        if session.pubkey is None:
            await self.send(session, ["CLOSED", sub_id, "auth-required: authenticate with NIP-42 first"])
            return
        try:
            filters = [parse_filter(f) for f in raw_filters]
        except FilterError as exc:
            await self.send(session, ["CLOSED", sub_id, f"invalid: {exc}"])
            return
        if sub_id not in session.subs and len(session.subs) >= MAX_SUBS_PER_CONNECTION:
            await self.send(session, ["CLOSED", sub_id, "blocked: too many subscriptions"])
            return
        # registered before the stored read so nothing published meanwhile is missed
        session.subs[sub_id] = filters
        try:
            events = await store.query_events(self.pool, filters, session.pubkey)
        except Exception:
            session.subs.pop(sub_id, None)
            log.exception("query failed")
            await self.send(session, ["CLOSED", sub_id, "error: storage failure"])
            return
        for event in events:
            await self.send(session, ["EVENT", sub_id, event])
        await self.send(session, ["EOSE", sub_id])

    async def ttl_sweeper(self) -> None:
        while True:
            await asyncio.sleep(self.config.ttl_sweep_seconds)
            try:
                async with self.pool.acquire() as conn, conn.transaction():
                    deliveries = await channels.sweep_expired(conn, self.relay_keypair)
                if deliveries:
                    log.info("ttl sweep archived channels", extra={"fields": {"count": len(deliveries)}})
                await self.broadcast(deliveries)
            except asyncio.CancelledError:
                raise
            except Exception:  # a sweep failure must not stop the relay; the next sweep retries
                log.exception("ttl sweep failed")


@contextlib.asynccontextmanager
async def serve(config: RelayConfig) -> AsyncIterator[int]:
    """Run the relay until the block exits; yields the bound port (bind port 0 for an ephemeral one)."""
    config.validate()
    pool = await asyncpg.create_pool(config.database_url, min_size=1, max_size=10)
    try:
        await store.apply_schema(pool)
        relay = Relay(config, pool)
        # websockets cannot parse a POST, so it listens on loopback only and the front listener
        # owns the public port: POSTs go to the HTTP bridge, everything else is pumped through
        server: Server = await ws_serve(
            relay.handle,
            "127.0.0.1",
            0,
            process_request=relay.process_request,
            max_size=_FRAME_LIMIT,
            compression=None,
        )
        inner_port = next(iter(server.sockets)).getsockname()[1]
        front = FrontListener(Bridge(relay), inner_port)
        listener = await asyncio.start_server(
            front.handle,
            config.bind_host,
            config.bind_port,
            ssl=config.tls_context(),  # None: plain ws://; TLS ends here, the inner hop is loopback
            limit=_HEAD_LIMIT,
        )
        sweeper = asyncio.create_task(relay.ttl_sweeper())
        try:
            port = next(iter(listener.sockets)).getsockname()[1]
            log.info("relay listening", extra={"fields": {"port": port, "relay_url": config.relay_url}})
            yield port
        finally:
            sweeper.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await sweeper
            listener.close()
            # websockets closes its sessions first (close frames still travel through the pumps),
            # then whatever the front listener still holds is cancelled
            server.close()
            await server.wait_closed()
            await front.close()
            await listener.wait_closed()
    finally:
        await pool.close()
