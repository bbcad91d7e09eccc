"""A standby's liveness endpoint (leadership/drive/standby.py): a real socket, answered 200 until the
replica leads, then closed so kopf can take the address."""

from __future__ import annotations

import asyncio
import socket

from buzz_operator.leadership.drive import standby


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


async def _get(port: int) -> bytes:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
    await writer.drain()
    answer = await reader.read()
    writer.close()
    return answer


async def test_the_standby_answers_liveness_until_it_stops() -> None:
    port = _free_port()
    server = await standby.serve(f"http://127.0.0.1:{port}/healthz")
    assert (await _get(port)).startswith(b"HTTP/1.1 200 OK")
    await standby.stop(server)
    # the address is free again for kopf's own endpoint
    again = await asyncio.start_server(lambda r, w: None, "127.0.0.1", port, reuse_address=True)
    again.close()
    await again.wait_closed()


async def test_no_liveness_url_serves_nothing() -> None:
    assert await standby.serve("") is None
    await standby.stop(None)
