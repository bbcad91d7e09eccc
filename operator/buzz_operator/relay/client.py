"""Async Nostr relay client over one reused websocket (NIP-01 + NIP-42 + NIP-OA, docs/relay-protocol.md#auth, docs/relay-protocol.md#auth).

One connection serves many publishes, queries and live subscriptions. If the socket drops, the
client reconnects with backoff, authenticates again and re-sends every live subscription, so a
long `wait_for_done` survives a relay restart. Publishes rejected as `rate-limited`/retryable are
retried with the seed CLI's policy (docs/relay-protocol.md#auth).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import logging
import ssl
from collections.abc import AsyncIterator
from types import TracebackType
from typing import Any
from urllib.parse import urlsplit

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake

from buzz_operator.relay.nostr import Keypair, auth_event, sign_event
from buzz_operator.relay.retry import MAX_ATTEMPTS, is_retryable, retry_delay

log = logging.getLogger(__name__)

_RECONNECT_DELAYS = (0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0)


class RelayError(RuntimeError):
    """The relay refused something (AUTH, a query) or could not be reached."""


class RelayUnavailable(RelayError):
    """The relay answered with a server-side failure (NIP-01's `error:` prefix, e.g. its
    database is down). Unlike `invalid:` or `restricted:` this says nothing about the request,
    so callers treat it as an outage to retry, not as a verdict on the trial."""


def refusal(prefix: str, message: str) -> RelayError:
    """The error for a relay's CLOSED / OK-false / AUTH refusal `message`."""
    kind = RelayUnavailable if message.startswith("error:") else RelayError
    return kind(f"{prefix}: {message}")


class Subscription:
    """A live REQ: yields stored events, then new ones as they land. Survives reconnects
    (re-sent by the client; duplicates already yielded are skipped by event id)."""

    def __init__(self, client: RelayClient, sub_id: str, filters: list[dict[str, Any]]) -> None:
        self._client = client
        self.sub_id = sub_id
        self.filters = filters
        self.queue: asyncio.Queue[dict[str, Any] | BaseException] = asyncio.Queue()
        self.eose = asyncio.Event()
        self._seen: set[str] = set()
        self.closed = False

    def __aiter__(self) -> Subscription:
        return self

    async def __anext__(self) -> dict[str, Any]:
        while True:
            if self.closed and self.queue.empty():
                raise StopAsyncIteration
            item = await self.queue.get()
            if isinstance(item, BaseException):
                raise item
            if item.get("id") in self._seen:
                continue
            self._seen.add(str(item.get("id")))
            return item

    async def close(self) -> None:
        if not self.closed:
            self.closed = True
            await self._client._unsubscribe(self)

    async def __aenter__(self) -> Subscription:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()


class RelayClient:
    """`url` is what we dial; `host` (optional) is the authority presented as the Host header and
    in the NIP-42 `relay` tag, so a pod can dial `127.0.0.1:<port>` via a forwarder and still
    be the `localhost:3600` tenant (docs/relay-protocol.md#tenancy). For wss://, `tls` is the client context (default: the
    public roots) and `server_name` the name the certificate must be for (default: the host)."""

    def __init__(
        self,
        url: str,
        keypair: Keypair,
        auth_tag: str | None = None,
        host: str | None = None,
        *,
        timeout: float = 10.0,
        tls: ssl.SSLContext | None = None,
        server_name: str | None = None,
    ) -> None:
        parts = urlsplit(url)
        if parts.scheme not in ("ws", "wss") or not parts.hostname:
            raise ValueError(f"url: expected ws:// or wss:// with a host, got {url!r}")
        self.keypair = keypair
        self.auth_tag = auth_tag
        self.timeout = timeout
        # websockets refuses an ssl argument for ws://, so TLS settings exist only for wss://
        self._tls: dict[str, Any] = {}
        if parts.scheme == "wss":
            self._tls = {"ssl": tls or True, **({"server_hostname": server_name} if server_name else {})}
        self._dial_host = parts.hostname
        self._dial_port = parts.port or (443 if parts.scheme == "wss" else 80)
        authority = host or parts.netloc
        self.relay_url = f"{parts.scheme}://{authority}"
        self._uri = f"{parts.scheme}://{authority}{parts.path or '/'}"
        self._ws: ClientConnection | None = None
        self._reader: asyncio.Task[None] | None = None
        self._reconnect_task: asyncio.Task[None] | None = None
        self._connected = asyncio.Event()
        self._closing = False
        self._connect_lock = asyncio.Lock()
        # connections lost since this client opened: a caller judging a run that ended badly
        # asks whether the relay went away under it (an outage, not the team's doing)
        self.disconnects = 0
        self._pending_ok: dict[str, asyncio.Future[tuple[bool, str]]] = {}
        self._subs: dict[str, Subscription] = {}
        self._ids = itertools.count(1)

    # -- lifecycle -----------------------------------------------------------------------------
    async def __aenter__(self) -> RelayClient:
        await self.connect()
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.close()

    async def connect(self) -> None:
        self._closing = False  # a closed client may be opened again
        await self._connect()

    async def _connect(self) -> None:
        async with self._connect_lock:
            if self._connected.is_set():
                return
            self._ws = await self._open_authenticated()
            self._connected.set()
            self._reader = asyncio.create_task(self._read_loop(self._ws))
            for sub in list(self._subs.values()):
                await self._ws.send(json.dumps(["REQ", sub.sub_id, *sub.filters]))

    async def close(self) -> None:
        self._closing = True
        self._connected.clear()
        for sub in list(self._subs.values()):
            sub.closed = True
            sub.queue.put_nowait(StopAsyncIteration())
        self._subs.clear()
        if self._reconnect_task is not None:
            self._reconnect_task.cancel()
        if self._reader is not None:
            self._reader.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._reader
        if self._ws is not None:
            await self._ws.close()
        self._fail_pending(RelayError("client closed"))

    async def _open_authenticated(self) -> ClientConnection:
        ws = await connect(
            self._uri,
            host=self._dial_host,
            port=self._dial_port,
            proxy=None,
            open_timeout=self.timeout,
            max_size=2**23,
            compression=None,
            **self._tls,
        )
        try:
            # A Buzz relay sends its NIP-42 challenge first; answer it before anything else so no
            # REQ/EVENT races ahead of authentication. A relay that sends none is left unauthenticated.
            try:
                first = json.loads(await asyncio.wait_for(ws.recv(), self.timeout))
            except TimeoutError:
                return ws
            except ValueError as exc:
                raise RelayError("relay sent a non-JSON first frame") from exc
            if not (isinstance(first, list) and len(first) >= 2 and first[0] == "AUTH"):
                raise RelayError(f"expected an AUTH challenge first, got {str(first)[:200]}")
            event = auth_event(self.keypair, self.relay_url, str(first[1]), self.auth_tag)
            await ws.send(json.dumps(["AUTH", event]))
            while True:
                reply = json.loads(await asyncio.wait_for(ws.recv(), self.timeout))
                if isinstance(reply, list) and reply[:2] == ["OK", event["id"]]:
                    if reply[2] is not True:
                        raise refusal("AUTH refused", str(reply[3]) if len(reply) > 3 else "")
                    return ws
                if isinstance(reply, list) and reply and reply[0] == "NOTICE":
                    log.info("relay notice during auth: %s", reply[1:])
        except BaseException:
            await ws.close()
            raise

    async def _read_loop(self, ws: ClientConnection) -> None:
        try:
            async for raw in ws:
                self._dispatch(raw)
        except ConnectionClosed:
            pass
        if self._closing:
            return
        self.disconnects += 1
        self._connected.clear()
        self._fail_pending(ConnectionError("relay connection lost"))
        self._reconnect_task = asyncio.create_task(self._reconnect())

    async def _reconnect(self) -> None:
        attempt = 0
        while not self._closing:
            delay = _RECONNECT_DELAYS[min(attempt, len(_RECONNECT_DELAYS) - 1)]
            await asyncio.sleep(delay)
            attempt += 1
            try:
                await self._connect()
                log.info("relay reconnected after %d attempt(s)", attempt)
                return
            except (OSError, RelayError, TimeoutError, ConnectionClosed, InvalidHandshake) as exc:
                # e.g. a restarting relay refusing the upgrade (503/404) or AUTH: keep trying
                log.warning("relay reconnect attempt %d failed: %s", attempt, exc)

    def _fail_pending(self, exc: BaseException) -> None:
        for fut in self._pending_ok.values():
            if not fut.done():
                fut.set_exception(exc)
        self._pending_ok.clear()

    def _dispatch(self, raw: str | bytes) -> None:
        try:
            msg = json.loads(raw)
        except (json.JSONDecodeError, UnicodeDecodeError):
            log.warning("relay sent a non-JSON frame")
            return
        if not isinstance(msg, list) or not msg:
            return
        head = msg[0]
        if head == "OK" and len(msg) >= 3:
            fut = self._pending_ok.pop(str(msg[1]), None)
            if fut is not None and not fut.done():
                fut.set_result((msg[2] is True, str(msg[3]) if len(msg) > 3 else ""))
        elif head == "EVENT" and len(msg) >= 3 and isinstance(msg[2], dict):
            sub = self._subs.get(str(msg[1]))
            if sub is not None:
                sub.queue.put_nowait(msg[2])
        elif head == "EOSE" and len(msg) >= 2:
            sub = self._subs.get(str(msg[1]))
            if sub is not None:
                sub.eose.set()
        elif head == "CLOSED" and len(msg) >= 2:
            sub = self._subs.pop(str(msg[1]), None)
            if sub is not None:
                sub.closed = True
                sub.eose.set()
                sub.queue.put_nowait(refusal("subscription closed", str(msg[2]) if len(msg) > 2 else ""))
        elif head == "NOTICE":
            log.info("relay notice: %s", msg[1:])

    async def _send(self, frame: list[Any]) -> None:
        if not self._connected.is_set():
            if self._closing:
                raise RelayError("client closed")
            if self._ws is None:  # used without `async with`: connect on first use
                await self._connect()
            else:  # a reconnect is under way
                await asyncio.wait_for(self._connected.wait(), self.timeout * 3)
        assert self._ws is not None
        await self._ws.send(json.dumps(frame))

    # -- operations ----------------------------------------------------------------------------
    def sign(self, kind: int, content: str, tags: list[list[str]] | None = None,
             created_at: int | None = None) -> dict[str, Any]:
        """Sign as this client's identity, carrying its NIP-OA auth tag (docs/relay-protocol.md#auth)."""
        return sign_event(self.keypair, kind, content, tags or [], created_at, auth_tag=self.auth_tag)

    async def publish(self, event: dict[str, Any]) -> tuple[bool, str]:
        """Send an EVENT and wait for its OK. Transient rejections and lost connections are
        retried (docs/relay-protocol.md#auth); a definitive rejection is returned as `(False, message)`."""
        message = ""
        for attempt in range(1, MAX_ATTEMPTS + 1):
            fut: asyncio.Future[tuple[bool, str]] = asyncio.get_running_loop().create_future()
            self._pending_ok[event["id"]] = fut
            try:
                await self._send(["EVENT", event])
                ok, message = await asyncio.wait_for(fut, self.timeout)
            except (ConnectionError, ConnectionClosed) as exc:
                ok, message = False, f"error: {exc}"
                retry = True
            else:
                if ok:
                    return True, message
                retry = is_retryable(message)
            finally:
                self._pending_ok.pop(event["id"], None)
            if not retry or attempt == MAX_ATTEMPTS:
                return False, message
            await asyncio.sleep(retry_delay(attempt, message))
        return False, message

    # the shared contract names a per-call timeout, hence the noqa
    async def query(
        self, filters: list[dict[str, Any]], timeout: float | None = None  # noqa: ASYNC109
    ) -> list[dict[str, Any]]:
        """REQ → events until EOSE → CLOSE."""
        sub = await self._subscribe(filters)
        try:
            # frames are dispatched in arrival order, so once EOSE is seen every stored event
            # is already queued: wait once, then drain (no per-event task switching)
            async with asyncio.timeout(timeout or self.timeout):
                await sub.eose.wait()
            events: dict[str, dict[str, Any]] = {}  # by id: a REQ re-sent after a reconnect repeats
            while not sub.queue.empty():
                item = sub.queue.get_nowait()
                if isinstance(item, RelayError):
                    raise item
                if isinstance(item, dict):
                    events.setdefault(str(item.get("id")), item)
            return list(events.values())
        finally:
            await sub.close()

    def subscribe(self, filters: list[dict[str, Any]]) -> _SubscriptionOpener:
        """Live subscription: `async with client.subscribe(f) as sub: async for ev in sub`.
        Also usable directly as an async iterator."""
        return _SubscriptionOpener(self, filters)

    async def _subscribe(self, filters: list[dict[str, Any]]) -> Subscription:
        if self._ws is None and not self._closing:
            await self._connect()  # before registering, so connect() does not send this REQ too
        sub = Subscription(self, f"s{next(self._ids)}", filters)
        self._subs[sub.sub_id] = sub
        await self._send(["REQ", sub.sub_id, *filters])
        return sub

    async def _unsubscribe(self, sub: Subscription) -> None:
        if self._subs.pop(sub.sub_id, None) is not None and self._connected.is_set():
            with contextlib.suppress(ConnectionClosed, RelayError, TimeoutError):
                await self._send(["CLOSE", sub.sub_id])


class _SubscriptionOpener:
    """Lets `subscribe()` be used with `async with` (closes on exit) or `async for`."""

    def __init__(self, client: RelayClient, filters: list[dict[str, Any]]) -> None:
        self._client = client
        self._filters = filters
        self._sub: Subscription | None = None

    async def __aenter__(self) -> Subscription:
        self._sub = await self._client._subscribe(self._filters)
        return self._sub

    async def __aexit__(self, *exc: object) -> None:
        if self._sub is not None:
            await self._sub.close()

    def __aiter__(self) -> AsyncIterator[dict[str, Any]]:
        return self._iterate()

    async def _iterate(self) -> AsyncIterator[dict[str, Any]]:
        async with self as sub:
            async for event in sub:
                yield event
