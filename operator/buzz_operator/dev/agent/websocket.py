"""A minimal RFC 6455 websocket client over asyncio streams (stdlib only).

Enough for a Nostr client: the opening handshake with a chosen Host header (the relay is
Host-header tenant-bound, so the agent must present the canonical authority even when it dials
a forwarder), masked client frames, text messages reassembled from fragments, ping/pong and the
closing handshake.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import hashlib
import os
import ssl
import struct
from urllib.parse import urlsplit

from .compat import AsyncTimeout

_GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
OP_CONT, OP_TEXT, OP_BINARY, OP_CLOSE, OP_PING, OP_PONG = 0x0, 0x1, 0x2, 0x8, 0x9, 0xA
MAX_MESSAGE = 64 * 1024 * 1024


class WebSocketError(ConnectionError):
    """Handshake refused or protocol violation."""


class ConnectionClosed(ConnectionError):
    """The peer closed the connection (close frame or EOF)."""

    def __init__(self, code: int = 1006, reason: str = "") -> None:
        super().__init__(f"websocket closed ({code}) {reason}".strip())
        self.code = code
        self.reason = reason


def accept_key(client_key: str) -> str:
    return base64.b64encode(hashlib.sha1((client_key + _GUID).encode()).digest()).decode()


def encode_frame(opcode: int, payload: bytes, fin: bool = True, mask: bytes | None = None) -> bytes:
    """One frame; clients must mask (RFC 6455 §5.3), so a mask is drawn unless given (tests)."""
    mask_key = os.urandom(4) if mask is None else mask
    head = bytearray([(0x80 if fin else 0) | opcode])
    length = len(payload)
    if length < 126:
        head.append(0x80 | length)
    elif length < 1 << 16:
        head.append(0x80 | 126)
        head += struct.pack("!H", length)
    else:
        head.append(0x80 | 127)
        head += struct.pack("!Q", length)
    head += mask_key
    return bytes(head) + _apply_mask(payload, mask_key)


def _apply_mask(payload: bytes, mask: bytes) -> bytes:
    # XOR through one big integer: orders of magnitude faster than a byte loop in pure Python.
    if not payload:
        return b""
    repeated = (mask * (len(payload) // 4 + 1))[: len(payload)]
    value = int.from_bytes(payload, "big") ^ int.from_bytes(repeated, "big")
    return value.to_bytes(len(payload), "big")


def split_url(url: str) -> tuple[bool, str, int, str, str]:
    """(tls, host, port, path, authority) of a ws/wss/http/https URL; authority keeps the URL's
    own spelling (`localhost:3600`) because that is what the relay resolves the tenant from."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    if scheme not in ("ws", "wss", "http", "https"):
        raise WebSocketError(f"unsupported relay URL scheme: {url}")
    tls = scheme in ("wss", "https")
    host = parts.hostname or ""
    if not host:
        raise WebSocketError(f"relay URL has no host: {url}")
    port = parts.port or (443 if tls else 80)
    path = parts.path or "/"
    if parts.query:
        path += "?" + parts.query
    return tls, host, port, path, parts.netloc


class WebSocket:
    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._reader = reader
        self._writer = writer
        self._send_lock = asyncio.Lock()
        self.closed = False

    @classmethod
    async def connect(cls, url: str, host_header: str | None = None, dial: tuple[str, int] | None = None,
                      timeout: float = 10.0) -> WebSocket:  # noqa: ASYNC109 -- asyncio.timeout needs 3.11
        """Open `url`; `host_header` overrides the Host sent, `dial` overrides where TCP goes."""
        tls, host, port, path, authority = split_url(url)
        dial_host, dial_port = dial if dial is not None else (host, port)
        context = ssl.create_default_context() if tls else None
        reader, writer = await asyncio.wait_for(
            asyncio.open_connection(dial_host, dial_port, ssl=context,
                                    server_hostname=host if tls else None, limit=MAX_MESSAGE),
            timeout)
        key = base64.b64encode(os.urandom(16)).decode()
        request = (
            f"GET {path} HTTP/1.1\r\nHost: {host_header or authority}\r\nUpgrade: websocket\r\n"
            f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n"
        )
        writer.write(request.encode("latin-1"))
        try:
            await writer.drain()
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), timeout)
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError) as exc:
            writer.close()
            raise WebSocketError(f"handshake failed: {exc}") from exc
        lines = head.decode("latin-1").split("\r\n")
        status = lines[0].split(" ", 2)
        headers = {}
        for line in lines[1:]:
            name, sep, value = line.partition(":")
            if sep:
                headers[name.strip().lower()] = value.strip()
        if len(status) < 2 or status[1] != "101":
            writer.close()
            raise WebSocketError(f"handshake refused: {lines[0]}")
        if headers.get("sec-websocket-accept") != accept_key(key):
            writer.close()
            raise WebSocketError("handshake: bad Sec-WebSocket-Accept")
        return cls(reader, writer)

    async def _send_frame(self, opcode: int, payload: bytes, fin: bool = True) -> None:
        async with self._send_lock:
            self._writer.write(encode_frame(opcode, payload, fin))
            await self._writer.drain()

    async def send_text(self, text: str) -> None:
        if self.closed:
            raise ConnectionClosed(1006, "send on closed websocket")
        await self._send_frame(OP_TEXT, text.encode("utf-8"))

    async def send_fragmented(self, text: str, pieces: int) -> None:
        """Send one text message as several frames (exercises servers; used by tests)."""
        data = text.encode("utf-8")
        step = max(1, -(-len(data) // pieces))
        chunks = [data[i:i + step] for i in range(0, len(data), step)] or [b""]
        async with self._send_lock:
            for index, chunk in enumerate(chunks):
                opcode = OP_TEXT if index == 0 else OP_CONT
                self._writer.write(encode_frame(opcode, chunk, fin=index == len(chunks) - 1))
            await self._writer.drain()

    async def ping(self, payload: bytes = b"") -> None:
        await self._send_frame(OP_PING, payload)

    async def _read_frame(self) -> tuple[bool, int, bytes]:
        try:
            b0, b1 = await self._reader.readexactly(2)
            length = b1 & 0x7F
            if length == 126:
                (length,) = struct.unpack("!H", await self._reader.readexactly(2))
            elif length == 127:
                (length,) = struct.unpack("!Q", await self._reader.readexactly(8))
            if length > MAX_MESSAGE:
                raise WebSocketError("frame too large")
            mask = await self._reader.readexactly(4) if b1 & 0x80 else None
            payload = await self._reader.readexactly(length)
        except (asyncio.IncompleteReadError, ConnectionError) as exc:
            self.closed = True
            raise ConnectionClosed(1006, "connection lost") from exc
        if mask is not None:
            payload = _apply_mask(payload, mask)
        return bool(b0 & 0x80), b0 & 0x0F, payload

    async def recv(self) -> str:
        """The next complete text (or binary, decoded) message; answers pings on the way."""
        parts = []
        while True:
            fin, opcode, payload = await self._read_frame()
            if opcode == OP_PING:
                await self._send_frame(OP_PONG, payload)
                continue
            if opcode == OP_PONG:
                continue
            if opcode == OP_CLOSE:
                code = struct.unpack("!H", payload[:2])[0] if len(payload) >= 2 else 1005
                reason = payload[2:].decode("utf-8", "replace")
                if not self.closed:
                    self.closed = True
                    with contextlib.suppress(ConnectionError):
                        await self._send_frame(OP_CLOSE, payload[:2])
                self._writer.close()
                raise ConnectionClosed(code, reason)
            if opcode in (OP_TEXT, OP_BINARY) and parts:
                raise WebSocketError("new data frame inside a fragmented message")
            if opcode == OP_CONT and not parts:
                raise WebSocketError("continuation frame without a start")
            parts.append(payload)
            if fin:
                return b"".join(parts).decode("utf-8", "replace")

    async def close(self, code: int = 1000) -> None:
        if not self.closed:
            self.closed = True
            try:
                await self._send_frame(OP_CLOSE, struct.pack("!H", code))
                # Give the peer a moment to answer so it sees a clean close, never wait long.
                await asyncio.wait_for(self._drain_until_close(), 2.0)
            except (AsyncTimeout, ConnectionError, WebSocketError):
                pass
        self._writer.close()

    async def _drain_until_close(self) -> None:
        while True:
            _, opcode, _ = await self._read_frame()
            if opcode == OP_CLOSE:
                return
