"""A Nostr relay session over the stdlib websocket: NIP-42 AUTH, publish with OK, REQ queries
until EOSE, and live subscriptions. One reader task dispatches every relay frame."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
from typing import Any
from urllib.parse import urlsplit

from .compat import AsyncTimeout
from .nostr import Event, Keys, Tags, sign_event
from .websocket import ConnectionClosed, WebSocket

KIND_AUTH = 22242
Filter = dict[str, Any]


class RelayError(RuntimeError):
    """The relay refused AUTH, an event or a query."""


class SubscriptionRefused(RelayError):
    """The relay answered a REQ with CLOSED: retrying on a new connection would not help."""


def websocket_url(url: str) -> str:
    """The CLI may be given the relay's HTTP URL (the harness host view); speak ws to it."""
    parts = urlsplit(url)
    scheme = {"http": "ws", "https": "wss"}.get(parts.scheme.lower(), parts.scheme.lower())
    return parts._replace(scheme=scheme).geturl()


class Subscription:
    def __init__(self, sub_id: str) -> None:
        self.sub_id = sub_id
        self.queue: asyncio.Queue[Event | BaseException] = asyncio.Queue()
        self.eose = asyncio.Event()
        self.closed: str | None = None  # the relay's CLOSED reason

    async def next_event(self) -> Event:
        item = await self.queue.get()
        if isinstance(item, BaseException):
            raise item
        return item


class RelaySession:
    def __init__(self, url: str, keys: Keys, auth_tag: list[str] | None, timeout: float = 15.0) -> None:
        self.url = websocket_url(url)
        parts = urlsplit(self.url)
        # The NIP-42 relay tag names the relay as dialled: scheme + authority, no path.
        self.relay_tag = f"{parts.scheme}://{parts.netloc}"
        self.keys = keys
        self.auth_tag = auth_tag
        self.timeout = timeout
        self._ws: WebSocket | None = None
        self._reader: asyncio.Task[None] | None = None
        self._pending: dict[str, asyncio.Future[Any]] = {}
        self._subs: dict[str, Subscription] = {}
        self._ids = itertools.count(1)
        self._challenge: asyncio.Future[str] | None = None
        self.lost = asyncio.Event()

    async def connect(self) -> None:
        self._ws = await WebSocket.connect(self.url, timeout=self.timeout)
        self._challenge = asyncio.get_running_loop().create_future()
        self._reader = asyncio.create_task(self._read_loop())
        try:
            challenge = await asyncio.wait_for(asyncio.shield(self._challenge), 5.0)
        except AsyncTimeout:
            # A relay that does not demand NIP-42 sends no challenge; carry on unauthenticated.
            return
        auth = self.sign(KIND_AUTH, "", [["relay", self.relay_tag], ["challenge", challenge]])
        ok, message = await self._await_ok(auth["id"], ["AUTH", auth])
        if not ok:
            raise RelayError(f"AUTH refused: {message}")

    async def close(self) -> None:
        # The reader goes first: the closing handshake reads the peer's close frame itself,
        # and a stream allows only one reader at a time.
        if self._reader is not None:
            self._reader.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._reader
        if self._ws is not None:
            await self._ws.close()

    def sign(self, kind: int, content: str, tags: Tags) -> Event:
        return sign_event(self.keys, kind, content, tags, auth_tag=self.auth_tag)

    async def _read_loop(self) -> None:
        assert self._ws is not None
        try:
            while True:
                self._dispatch(await self._ws.recv())
        except (ConnectionClosed, ConnectionError) as exc:
            failure: BaseException = RelayError(f"relay connection lost: {exc}")
        for fut in self._pending.values():
            if not fut.done():
                fut.set_exception(failure)
        for sub in self._subs.values():
            sub.queue.put_nowait(failure)
            sub.eose.set()
        self.lost.set()

    def _dispatch(self, raw: str) -> None:
        try:
            msg = json.loads(raw)
        except ValueError:
            return
        if not isinstance(msg, list) or not msg:
            return
        head = msg[0]
        if head == "AUTH" and len(msg) >= 2 and self._challenge is not None and not self._challenge.done():
            self._challenge.set_result(str(msg[1]))
        elif head == "OK" and len(msg) >= 3:
            fut = self._pending.pop(str(msg[1]), None)
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
                sub.closed = str(msg[2]) if len(msg) > 2 else ""
                sub.queue.put_nowait(SubscriptionRefused(f"subscription closed: {sub.closed}"))
                sub.eose.set()

    async def _await_ok(self, event_id: str, frame: list[Any]) -> Any:
        assert self._ws is not None
        fut: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[event_id] = fut
        await self._ws.send_text(json.dumps(frame))
        try:
            return await asyncio.wait_for(fut, self.timeout)
        finally:
            self._pending.pop(event_id, None)

    async def publish(self, event: Event) -> str:
        """Publish and wait for the relay's OK; returns its message (the CLI prints it)."""
        ok, message = await self._await_ok(event["id"], ["EVENT", event])
        if not ok:
            raise RelayError(f"event rejected: {message}")
        return str(message)

    async def send(self, kind: int, content: str, tags: Tags) -> Event:
        event = self.sign(kind, content, tags)
        await self.publish(event)
        return event

    async def subscribe(self, filters: list[Filter]) -> Subscription:
        assert self._ws is not None
        sub = Subscription(f"q{next(self._ids)}")
        self._subs[sub.sub_id] = sub
        await self._ws.send_text(json.dumps(["REQ", sub.sub_id, *filters]))
        return sub

    async def unsubscribe(self, sub: Subscription) -> None:
        if self._subs.pop(sub.sub_id, None) is not None and self._ws is not None and not self._ws.closed:
            with contextlib.suppress(ConnectionError):
                await self._ws.send_text(json.dumps(["CLOSE", sub.sub_id]))

    async def query(self, filters: list[Filter]) -> list[Event]:
        """Stored events matching `filters`, up to EOSE."""
        sub = await self.subscribe(filters)
        try:
            await asyncio.wait_for(sub.eose.wait(), self.timeout)
            events: list[Event] = []
            while not sub.queue.empty():
                item = sub.queue.get_nowait()
                if isinstance(item, BaseException):
                    raise item
                events.append(item)
            return events
        finally:
            await self.unsubscribe(sub)
