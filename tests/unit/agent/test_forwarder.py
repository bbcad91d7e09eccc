"""relay-forwarder: a transparent TCP pump with bind retries, half-close and per-connection isolation."""

from __future__ import annotations

import asyncio
import os
import socket
import struct
import subprocess
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import pytest
from buzz_operator.relay import forwarder
from buzz_operator.relay.forwarder import Forwarder, main, split_address

Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]
OPERATOR_DIR = Path(forwarder.__file__).resolve().parents[2]


async def _echo(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    while data := await reader.read(65536):
        writer.write(data)
        await writer.drain()
    writer.close()


async def _start(handler: Handler, port: int = 0) -> asyncio.AbstractServer:
    return await asyncio.start_server(handler, "127.0.0.1", port)


def _port(server: asyncio.AbstractServer) -> int:
    return int(server.sockets[0].getsockname()[1])


def _serving(fwd: Forwarder) -> Forwarder:
    fwd.bind()
    fwd.start()
    return fwd


@pytest.fixture
async def echo_forwarder() -> AsyncIterator[tuple[Forwarder, asyncio.AbstractServer]]:
    target = await _start(_echo)
    fwd = _serving(Forwarder("127.0.0.1:0", f"127.0.0.1:{_port(target)}"))
    yield fwd, target
    fwd.close()
    target.close()


async def _exchange(port: int, payload: bytes) -> bytes:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(payload)
    await writer.drain()
    received = await reader.readexactly(len(payload))
    writer.close()
    return received


async def test_bytes_flow_both_ways(echo_forwarder: tuple[Forwarder, asyncio.AbstractServer]) -> None:
    fwd, _ = echo_forwarder
    payload = os.urandom(1_000_000)
    assert await asyncio.wait_for(_exchange(fwd.port, payload), 20) == payload


async def test_target_may_be_a_host_name() -> None:
    target = await _start(_echo)
    fwd = _serving(Forwarder("127.0.0.1:0", f"localhost:{_port(target)}"))
    assert await asyncio.wait_for(_exchange(fwd.port, b"by name"), 10) == b"by name"
    fwd.close()
    target.close()


async def test_fifty_concurrent_clients(echo_forwarder: tuple[Forwarder, asyncio.AbstractServer]) -> None:
    fwd, _ = echo_forwarder
    payloads = [os.urandom(20_000) + str(i).encode() for i in range(50)]
    results = await asyncio.wait_for(asyncio.gather(*(_exchange(fwd.port, p) for p in payloads)), 30)
    assert results == payloads


async def test_half_close_keeps_the_reply_direction_open() -> None:
    async def count_then_reply(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        data = await reader.read()  # until the client's EOF arrives through the forwarder
        writer.write(f"got {len(data)} bytes".encode())
        await writer.drain()
        writer.close()

    target = await _start(count_then_reply)
    fwd = _serving(Forwarder("127.0.0.1:0", f"127.0.0.1:{_port(target)}"))
    reader, writer = await asyncio.open_connection("127.0.0.1", fwd.port)
    writer.write(b"x" * 70_000)
    writer.write_eof()
    assert await asyncio.wait_for(reader.read(), 10) == b"got 70000 bytes"
    writer.close()
    fwd.close()
    target.close()


async def test_upstream_failure_closes_only_that_client() -> None:
    victims: list[asyncio.StreamWriter] = []

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        first = await reader.read(5)
        if first == b"reset":
            sock = writer.get_extra_info("socket")
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            victims.append(writer)
            writer.transport.abort()  # RST, not a clean FIN
            return
        writer.write(first)
        await _echo(reader, writer)

    target = await _start(handler)
    target_port = _port(target)
    fwd = _serving(Forwarder("127.0.0.1:0", f"127.0.0.1:{target_port}"))

    survivor_r, survivor_w = await asyncio.open_connection("127.0.0.1", fwd.port)
    survivor_w.write(b"hello")
    assert await survivor_r.readexactly(5) == b"hello"

    victim_r, victim_w = await asyncio.open_connection("127.0.0.1", fwd.port)
    victim_w.write(b"reset")
    assert await asyncio.wait_for(victim_r.read(), 10) == b""  # closed, not hung
    assert victims

    survivor_w.write(b"still here")
    assert await survivor_r.readexactly(10) == b"still here"

    # the target goes away entirely: new clients are closed at once, the forwarder lives on
    target.close()
    await target.wait_closed()
    survivor_w.close()
    lonely_r, lonely_w = await asyncio.open_connection("127.0.0.1", fwd.port)
    assert await asyncio.wait_for(lonely_r.read(), 10) == b""
    lonely_w.close()

    # and serves again once the target is back
    target = await _start(_echo, target_port)
    assert await _exchange(fwd.port, b"back again") == b"back again"
    fwd.close()
    target.close()


async def test_bind_retries_while_the_port_is_held() -> None:
    holder = socket.socket()
    holder.bind(("127.0.0.1", 0))
    holder.listen()
    port = holder.getsockname()[1]
    fwd = Forwarder(f"127.0.0.1:{port}", "127.0.0.1:9")
    binding = asyncio.create_task(asyncio.to_thread(fwd.bind, attempts=6, backoff=0.05))
    await asyncio.sleep(0.08)
    assert not binding.done()
    holder.close()
    await asyncio.wait_for(binding, 10)
    assert fwd.port == port
    fwd.close()


async def test_bind_gives_up_after_the_last_attempt() -> None:
    holder = socket.socket()
    holder.bind(("127.0.0.1", 0))
    holder.listen()
    fwd = Forwarder(f"127.0.0.1:{holder.getsockname()[1]}", "127.0.0.1:9")
    with pytest.raises(OSError):
        fwd.bind(attempts=2, backoff=0.01)
    holder.close()


def test_cli_reports_addr_in_use_then_forwards_once_released() -> None:
    holder = socket.socket()
    holder.bind(("127.0.0.1", 0))
    holder.listen()
    port = holder.getsockname()[1]
    proc = subprocess.Popen(
        [sys.executable, "-m", "buzz_operator.relay.forwarder", f"127.0.0.1:{port}", "localhost:9"],
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONPATH": str(OPERATOR_DIR)},
    )
    try:
        first_err = proc.stderr.readline()
        assert "AddrInUse" in first_err
        holder.close()
        assert proc.stdout.readline().strip() == f"forwarding 127.0.0.1:{port} -> localhost:9"
    finally:
        holder.close()
        proc.terminate()
        proc.wait(10)


@pytest.mark.parametrize("argv", [[], ["127.0.0.1:1"], ["a", "b", "c"], ["no-port", "127.0.0.1:1"],
                                  ["127.0.0.1:1", "host:99999"]])
def test_wrong_arguments_exit_2(argv: list[str]) -> None:
    assert main(argv) == 2


def test_split_address() -> None:
    assert split_address("127.0.0.1:3600") == ("127.0.0.1", 3600)
    assert split_address("relay.buzz.svc:80") == ("relay.buzz.svc", 80)
    assert split_address("[::1]:3600") == ("::1", 3600)


def test_the_command_starts_without_asyncio() -> None:
    """The sidecar runs under a 100m CPU limit: importing asyncio (~110 ms of CPU) made it listen
    over a second after it started, after the agents first dialled (bench/trial.py)."""
    probe = "import sys, buzz_operator.relay.forwarder; print(sorted(m for m in sys.modules if m.startswith('asyncio')))"
    ran = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True,
                         env={**os.environ, "PYTHONPATH": str(OPERATOR_DIR)})
    assert ran.stdout.strip() == "[]"


async def test_close_stops_serving_and_every_connection_leaves(
        echo_forwarder: tuple[Forwarder, asyncio.AbstractServer]) -> None:
    fwd, _ = echo_forwarder
    assert await asyncio.wait_for(_exchange(fwd.port, b"one"), 10) == b"one"
    for _ in range(100):  # the connection's threads end just after the client closes
        if fwd.active == 0:
            break
        await asyncio.sleep(0.02)
    assert fwd.active == 0
    port, serving = fwd.port, fwd.start()  # a second acceptor on the listener, to see close() end it
    fwd.close()
    await asyncio.to_thread(serving.join, 5)
    assert not serving.is_alive()
    with pytest.raises(OSError):
        await asyncio.wait_for(asyncio.open_connection("127.0.0.1", port), 5)
