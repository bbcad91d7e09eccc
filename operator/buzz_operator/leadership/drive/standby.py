"""The liveness endpoint of a replica standing by (docs/leadership.md): kopf serves /healthz only
once it runs, and a standby runs no kopf, yet its kubelet must not restart it for waiting. A
bare HTTP server answers 200 on the same address until the replica leads, then lets kopf have it."""

from __future__ import annotations

import asyncio
from urllib.parse import urlsplit

_ANSWER = b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 8\r\nConnection: close\r\n\r\nstandby\n"


async def _answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), timeout=5)
        writer.write(_ANSWER)
        await writer.drain()
    except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, TimeoutError, ConnectionError):
        pass
    finally:
        writer.close()


async def serve(liveness_url: str | None) -> asyncio.Server | None:
    """Answer on the liveness URL's host and port (None: no endpoint, nothing served)."""
    if not liveness_url:
        return None
    parts = urlsplit(liveness_url)
    return await asyncio.start_server(_answer, parts.hostname or "0.0.0.0", parts.port or 80, reuse_address=True)


async def stop(server: asyncio.Server | None) -> None:
    if server is not None:
        server.close()
        await server.wait_closed()
