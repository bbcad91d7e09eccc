"""The stdlib RFC 6455 client against a real `websockets` server in-process."""

from __future__ import annotations

import asyncio
import ssl
import subprocess
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from buzz_operator.dev.agent.websocket import (
    OP_TEXT,
    ConnectionClosed,
    WebSocket,
    WebSocketError,
    accept_key,
    encode_frame,
)
from websockets.asyncio.server import ServerConnection, serve


async def _handler(conn: ServerConnection) -> None:
    conn_host = conn.request.headers.get("Host") if conn.request else None
    async for message in conn:
        if message == "host?":
            await conn.send(str(conn_host))
        elif message == "fragments please":
            await conn.send(["frag", "mented ", "reply"])  # one message, three frames
        elif message == "ping me":
            pong = await conn.ping(b"are-you-there")
            await asyncio.wait_for(pong, 5)
            await conn.send("got pong")
        elif message == "close 4001":
            await conn.close(4001, "bye")
        else:
            await conn.send(message)


@pytest.fixture
async def server_url() -> AsyncIterator[str]:
    async with serve(_handler, "127.0.0.1", 0, max_size=2**24) as server:
        port = server.sockets[0].getsockname()[1]
        yield f"ws://127.0.0.1:{port}/"


async def test_round_trip_and_large_messages(server_url: str) -> None:
    ws = await WebSocket.connect(server_url)
    for size in (0, 5, 125, 126, 65535, 65536, 200_000):
        text = "x" * size
        await ws.send_text(text)
        assert await ws.recv() == text
    await ws.send_text("ünïcödé ✓")
    assert await ws.recv() == "ünïcödé ✓"
    await ws.close()


async def test_host_header_is_the_chosen_authority(server_url: str) -> None:
    ws = await WebSocket.connect(server_url, host_header="localhost:3600")
    await ws.send_text("host?")
    assert await ws.recv() == "localhost:3600"
    await ws.close()
    default = await WebSocket.connect(server_url)
    await default.send_text("host?")
    assert await default.recv() == server_url.split("/")[2]
    await default.close()


async def test_fragmented_messages_both_ways(server_url: str) -> None:
    ws = await WebSocket.connect(server_url)
    await ws.send_text("fragments please")
    assert await ws.recv() == "fragmented reply"
    await ws.send_fragmented("sent in several frames", pieces=4)
    assert await ws.recv() == "sent in several frames"
    await ws.close()


async def test_answers_server_ping(server_url: str) -> None:
    ws = await WebSocket.connect(server_url)
    await ws.send_text("ping me")
    assert await ws.recv() == "got pong"
    await ws.close()


async def test_server_close_surfaces_code_and_reason(server_url: str) -> None:
    ws = await WebSocket.connect(server_url)
    await ws.send_text("close 4001")
    with pytest.raises(ConnectionClosed) as info:
        await ws.recv()
    assert info.value.code == 4001
    assert info.value.reason == "bye"
    assert ws.closed


async def test_handshake_refused_by_plain_http_server() -> None:
    async def http(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        writer.write(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n")
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(http, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    with pytest.raises(WebSocketError, match="404"):
        await WebSocket.connect(f"ws://127.0.0.1:{port}/")
    server.close()
    await server.wait_closed()


def test_frame_encoding_is_masked_with_rfc_lengths() -> None:
    mask = b"\x01\x02\x03\x04"
    frame = encode_frame(OP_TEXT, b"Hello", mask=mask)
    assert frame[0] == 0x81 and frame[1] == 0x80 | 5 and frame[2:6] == mask
    assert bytes(b ^ mask[i % 4] for i, b in enumerate(frame[6:])) == b"Hello"
    assert encode_frame(OP_TEXT, b"a" * 300, mask=mask)[1:4] == bytes([0x80 | 126, 1, 44])
    assert encode_frame(OP_TEXT, b"a" * 70000, mask=mask)[1] == 0x80 | 127
    # RFC 6455 §1.3 worked example
    assert accept_key("dGhlIHNhbXBsZSBub25jZQ==") == "s3pPLMBiTxaQ9kYGzzhZRbK+xOo="


@pytest.fixture
def localhost_cert(tmp_path: Path) -> tuple[Path, Path]:
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key),
                    "-out", str(cert), "-days", "1", "-subj", "/CN=localhost",
                    "-addext", "subjectAltName=DNS:localhost"], check=True, capture_output=True)
    return cert, key


async def test_wss_trusts_the_bundle_named_by_ssl_cert_file(
        localhost_cert: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    # the runtime points SSL_CERT_FILE at /opt/buzz/ca-certificates.crt (docs/corridor.md#agent-environment)
    cert, key = localhost_cert
    server_tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server_tls.load_cert_chain(cert, key)
    async with serve(_handler, "127.0.0.1", 0, ssl=server_tls) as server:
        url = f"wss://localhost:{server.sockets[0].getsockname()[1]}/"
        with pytest.raises(ssl.SSLCertVerificationError):
            await WebSocket.connect(url)
        monkeypatch.setenv("SSL_CERT_FILE", str(cert))
        ws = await WebSocket.connect(url)
        await ws.send_text("over tls")
        assert await ws.recv() == "over tls"
        await ws.close()
