"""The HTTP bridge of the development relay: `POST /query`, `/count` and `/events` with NIP-98
auth, on the relay's one port, as Block's relay serves them (`crates/buzz-relay/src/api/bridge.rs`).

Block's buzz-acp does channel discovery with `POST /query` at startup and exits when it fails,
but the `websockets` library only parses GET upgrade requests. So a front TCP listener owns the
port: it reads each request head, answers POSTs itself with a small HTTP/1.1 handler, and pumps
anything else byte-for-byte to the websockets server bound on loopback. TLS, when configured, is
terminated here, so the inner server always speaks plain ws://."""

from __future__ import annotations

import asyncio
import base64
import binascii
import contextlib
import hashlib
import json
import logging
import time
from collections.abc import Callable
from http import HTTPStatus
from typing import Any, Protocol
from urllib.parse import urlsplit

import asyncpg

from buzz_operator.dev.relay import channels
from buzz_operator.dev.relay.config import RelayConfig
from buzz_operator.dev.relay.filters import FilterError, parse_filter
from buzz_operator.dev.relay.store import query_events
from buzz_operator.relay.hosts import normalize_host, relay_url_authority
from buzz_operator.relay.nostr import verify_event


class Relay(Protocol):
    """What the bridge asks of the relay it fronts (server.Relay), named here so that the
    server imports the bridge and never the other way round."""

    config: RelayConfig
    pool: asyncpg.Pool
    authority: str

    def _admitted(self, event: dict[str, Any], *, for_auth: bool = False) -> bool: ...

    async def accept_event(self, event: Any, size: int, *, signer: str | None
                           ) -> tuple[bool, str, list[channels.Delivery]]: ...

    async def broadcast(self, deliveries: list[channels.Delivery]) -> None: ...

log = logging.getLogger("buzz_operator.dev.relay.bridge")

KIND_HTTP_AUTH = 27235
NIP98_WINDOW_S = 60  # Block's buzz-auth verify_nip98_event: created_at within ±60 s
_HEAD_LIMIT = 64 * 1024
_BODY_LIMIT = 4 * 1024 * 1024  # same as the websocket frame limit
_IDLE_TIMEOUT_S = 30.0  # a keep-alive connection that sends nothing is closed
_PUMP_CHUNK = 64 * 1024
BRIDGE_PATHS = ("/query", "/count", "/events")


class BridgeError(Exception):
    """An HTTP refusal: status plus the `{"error": …}` text Block's relay answers with."""

    def __init__(self, status: HTTPStatus, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


class Nip98Guard:
    """Verifies `Authorization: Nostr <base64 event>` for one relay authority and remembers the
    ids it accepted, so a captured header cannot be replayed within its validity window (Block's
    relay keeps the same seen-set, in Redis)."""

    def __init__(self, relay_url: str, authority: str, clock: Callable[[], float] = time.time) -> None:
        self.scheme = "https" if relay_url.strip().startswith("wss://") else "http"
        self.authority = authority
        self.clock = clock
        self.seen: dict[str, float] = {}

    def verify(self, header: str | None, method: str, path: str, body: bytes) -> str:
        """The signer's pubkey, or BridgeError 401 naming what is wrong."""
        if header is None or not header.startswith("Nostr "):
            raise BridgeError(HTTPStatus.UNAUTHORIZED, "missing Nostr auth")
        try:
            event = json.loads(base64.b64decode(header[len("Nostr "):].strip(), validate=True).decode("utf-8"))
        except (binascii.Error, UnicodeDecodeError, json.JSONDecodeError):
            raise BridgeError(HTTPStatus.UNAUTHORIZED, "invalid NIP-98 event encoding") from None
        if not verify_event(event):
            raise BridgeError(HTTPStatus.UNAUTHORIZED, "NIP-98: bad event id or signature")
        if event["kind"] != KIND_HTTP_AUTH:
            raise BridgeError(HTTPStatus.UNAUTHORIZED, f"NIP-98: event must be kind {KIND_HTTP_AUTH}")
        now = self.clock()
        if abs(now - event["created_at"]) > NIP98_WINDOW_S:
            raise BridgeError(HTTPStatus.UNAUTHORIZED, "NIP-98: created_at outside the 60 s window")
        tags = {t[0]: t[1] for t in reversed(event["tags"]) if len(t) >= 2}  # first occurrence wins
        if not self._url_matches(tags.get("u", ""), path):
            raise BridgeError(HTTPStatus.UNAUTHORIZED, "NIP-98: u tag does not name this relay and path")
        if tags.get("method", "").upper() != method.upper():
            raise BridgeError(HTTPStatus.UNAUTHORIZED, "NIP-98: method tag does not match")
        # a POST's body must be bound to the signature, or a stolen header authorises any body
        payload = tags.get("payload")
        if payload is None:
            raise BridgeError(HTTPStatus.UNAUTHORIZED, "NIP-98: missing payload tag")
        if payload.lower() != hashlib.sha256(body).hexdigest():
            raise BridgeError(HTTPStatus.UNAUTHORIZED, "NIP-98: payload hash does not match the body")
        self._forget_expired(now)
        if event["id"] in self.seen:
            raise BridgeError(HTTPStatus.UNAUTHORIZED, "NIP-98: replay detected")
        self.seen[event["id"]] = now + 2 * NIP98_WINDOW_S
        return str(event["pubkey"])

    def _url_matches(self, url: str, path: str) -> bool:
        # the authority comes from this relay's tenant, never from the request: a header signed
        # for another host must not open this one (Block: nip98_expected_url)
        try:
            parts = urlsplit(url)
            authority = relay_url_authority(url)
        except ValueError:
            return False
        return (
            parts.scheme == self.scheme
            and authority == self.authority
            and (parts.path.rstrip("/") or "/") == path
            and not parts.query
        )

    def _forget_expired(self, now: float) -> None:
        for eid in [eid for eid, until in self.seen.items() if until < now]:
            del self.seen[eid]


class Bridge:
    """Answers the three bridge routes for one Relay, with the websocket path's admission rules."""

    def __init__(self, relay: Relay) -> None:
        self.relay = relay
        self.guard = Nip98Guard(relay.config.relay_url, relay.authority)

    async def answer(self, path: str, headers: dict[str, str], body: bytes) -> tuple[HTTPStatus, Any]:
        if normalize_host(headers.get("host", "")) != self.relay.authority:
            log.info("bridge: unknown host refused", extra={"fields": {"host": headers.get("host", "")[:200]}})
            return HTTPStatus.NOT_FOUND, {"error": "unknown relay host"}
        if path not in BRIDGE_PATHS:
            return HTTPStatus.NOT_FOUND, {"error": f"no route for POST {path[:100]}"}
        try:
            pubkey = self.guard.verify(headers.get("authorization"), "POST", path, body)
            try:
                payload = json.loads(body)
            except (json.JSONDecodeError, UnicodeDecodeError):
                raise BridgeError(HTTPStatus.BAD_REQUEST, "body is not JSON") from None
            if path == "/events":
                return await self._submit(pubkey, payload, len(body))
            return await self._read(path, pubkey, headers.get("x-auth-tag"), payload)
        except BridgeError as exc:
            log.info("bridge refused", extra={"fields": {"path": path, "status": int(exc.status), "reason": exc.message}})
            return exc.status, {"error": exc.message}

    async def _read(self, path: str, pubkey: str, auth_tag: str | None, payload: Any) -> tuple[HTTPStatus, Any]:
        if not self._reader_admitted(pubkey, auth_tag):
            raise BridgeError(HTTPStatus.FORBIDDEN, "restricted: pubkey is not attested by the relay owner")
        raw_filters = payload if isinstance(payload, list) else [payload]
        try:
            filters = [parse_filter(f) for f in raw_filters]
        except FilterError as exc:
            raise BridgeError(HTTPStatus.BAD_REQUEST, f"invalid filters: {exc}") from None
        try:
            # scoped to the signer exactly like a REQ: private channels only for their members
            events = await query_events(self.relay.pool, filters, pubkey)
        except Exception:
            log.exception("bridge query failed")
            raise BridgeError(HTTPStatus.SERVICE_UNAVAILABLE, "error: storage failure, retryable: try again") from None
        if path == "/count":
            return HTTPStatus.OK, {"count": len(events)}
        return HTTPStatus.OK, events

    def _reader_admitted(self, pubkey: str, auth_tag: str | None) -> bool:
        # the same rule as a NIP-42 AUTH: owner, or an owner NIP-OA tag for this key (from the
        # x-auth-tag header, as buzz-acp sends it); tag conditions restrict publishing, not reads
        tags: list[Any] = []
        if auth_tag is not None:
            with contextlib.suppress(json.JSONDecodeError):
                parsed = json.loads(auth_tag)
                if isinstance(parsed, list):
                    tags = [parsed]
        return self.relay._admitted({"pubkey": pubkey, "tags": tags}, for_auth=True)

    async def _submit(self, pubkey: str, event: Any, size: int) -> tuple[HTTPStatus, Any]:
        if isinstance(event, dict) and event.get("pubkey") != pubkey:
            # the request is authorised by its signer; it must not carry someone else's event
            raise BridgeError(HTTPStatus.FORBIDDEN, "restricted: event pubkey differs from the NIP-98 signer")
        ok, message, deliveries = await self.relay.accept_event(event, size, signer=pubkey)
        eid = event.get("id", "") if isinstance(event, dict) else ""
        if ok:
            await self.relay.broadcast(deliveries)
            return HTTPStatus.OK, {"event_id": eid, "accepted": True, "message": message}
        if message.startswith(("restricted:", "auth-required:")):
            raise BridgeError(HTTPStatus.FORBIDDEN, message)
        if message.startswith("error:"):
            raise BridgeError(HTTPStatus.SERVICE_UNAVAILABLE, message)  # buzz-acp retries 503
        raise BridgeError(HTTPStatus.BAD_REQUEST, message)


# -- the front listener ---------------------------------------------------------------------------


def _parse_head(head: bytes) -> tuple[str, str, str, dict[str, str]]:
    """Request line and headers (names lowercased; a repeated header keeps its last value)."""
    lines = head.decode("latin-1").split("\r\n")
    parts = lines[0].split(" ")
    if len(parts) != 3:
        raise ValueError("malformed request line")
    headers: dict[str, str] = {}
    for line in lines[1:]:
        if not line:
            continue
        name, sep, value = line.partition(":")
        if not sep:
            raise ValueError("malformed header line")
        headers[name.strip().lower()] = value.strip()
    return parts[0], parts[1], parts[2], headers


async def _respond(writer: asyncio.StreamWriter, status: HTTPStatus, payload: Any, *, keep_alive: bool) -> None:
    body = json.dumps(payload, separators=(",", ":")).encode()
    head = (
        f"HTTP/1.1 {int(status)} {status.phrase}\r\n"
        "Content-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\n"
        f"Connection: {'keep-alive' if keep_alive else 'close'}\r\n\r\n"
    )
    writer.write(head.encode() + body)
    await writer.drain()


async def _pump(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, *, half_close: bool) -> None:
    """Copy until EOF. Client→server half-closes so websockets sees the EOF and finishes its
    closing handshake; server→client closes outright, since the server is done with the socket."""
    try:
        while data := await reader.read(_PUMP_CHUNK):
            writer.write(data)
            await writer.drain()
    except (ConnectionError, OSError):
        pass
    finally:
        with contextlib.suppress(Exception):
            if half_close and writer.can_write_eof():
                writer.write_eof()
            else:
                writer.close()


class FrontListener:
    """Owns the public port. POST → Bridge; everything else (websocket upgrades, GET
    /_readiness, garbage the websockets server already knows how to refuse) → inner server."""

    def __init__(self, bridge: Bridge, inner_port: int) -> None:
        self.bridge = bridge
        self.inner_port = inner_port
        self.tasks: set[asyncio.Task[None]] = set()

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        if task is not None:
            self.tasks.add(task)
        try:
            await self._serve(reader, writer)
        except (ConnectionError, OSError, asyncio.IncompleteReadError, TimeoutError):
            pass
        except asyncio.CancelledError:
            raise
        except Exception:  # one bad connection must never take the listener down
            log.exception("front listener connection failed")
        finally:
            if task is not None:
                self.tasks.discard(task)
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while True:  # one iteration per keep-alive POST; a non-POST hands the connection over
            first = b""
            try:
                async with asyncio.timeout(_IDLE_TIMEOUT_S):
                    first = await reader.readexactly(1)
                if not first.isalpha():
                    # not HTTP (a TLS ClientHello to a plain relay, say), which waits for an answer
                    # rather than sending a head: websockets refuses it at once, as it always did
                    await self._proxy(first, reader, writer)
                    return
                async with asyncio.timeout(_IDLE_TIMEOUT_S):
                    head = first + await reader.readuntil(b"\r\n\r\n")
            except asyncio.LimitOverrunError:
                await _respond(writer, HTTPStatus.REQUEST_HEADER_FIELDS_TOO_LARGE, {"error": "request head too large"},
                               keep_alive=False)
                return
            except asyncio.IncompleteReadError as exc:
                if exc.partial:
                    await self._proxy(first + exc.partial, reader, writer)  # let websockets refuse it
                return
            try:
                method, target, _version, headers = _parse_head(head)
            except ValueError:
                await self._proxy(head, reader, writer)
                return
            if method != "POST":
                await self._proxy(head, reader, writer)
                return
            if not await self._post(target, headers, reader, writer):
                return

    async def _post(
        self, target: str, headers: dict[str, str], reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> bool:
        """Answer one POST; True when the connection stays open for another request."""
        if "transfer-encoding" in headers:
            # buzz-acp always sends Content-Length; chunked bodies are not worth parsing here
            await _respond(writer, HTTPStatus.LENGTH_REQUIRED, {"error": "Content-Length required"}, keep_alive=False)
            return False
        try:
            length = int(headers.get("content-length", "0"))
        except ValueError:
            length = -1
        if length < 0:
            await _respond(writer, HTTPStatus.BAD_REQUEST, {"error": "bad Content-Length"}, keep_alive=False)
            return False
        if length > _BODY_LIMIT:
            await _respond(writer, HTTPStatus.REQUEST_ENTITY_TOO_LARGE, {"error": "body too large"}, keep_alive=False)
            return False
        async with asyncio.timeout(_IDLE_TIMEOUT_S):
            body = await reader.readexactly(length)
        keep_alive = headers.get("connection", "").lower() != "close"
        try:
            status, payload = await self.bridge.answer(target.split("?", 1)[0], headers, body)
        except Exception:  # a bug costs one request an answer of 500, never the connection silently
            log.exception("bridge request failed")
            status, payload = HTTPStatus.INTERNAL_SERVER_ERROR, {"error": "internal server error"}
        await _respond(writer, status, payload, keep_alive=keep_alive)
        return keep_alive

    async def _proxy(self, head: bytes, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.inner_port)
        try:
            up_writer.write(head)
            # bytes the client sent after the head (a pipelined first frame) are still buffered
            # in `reader` and go out with the first read of the pump
            await asyncio.gather(_pump(reader, up_writer, half_close=True), _pump(up_reader, writer, half_close=False))
        finally:
            up_writer.close()
            with contextlib.suppress(Exception):
                await up_writer.wait_closed()

    async def close(self) -> None:
        for task in list(self.tasks):
            task.cancel()
        for task in list(self.tasks):
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
