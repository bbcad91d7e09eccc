"""`python -m buzz_operator.dev.relay` as a real process: JSON logs, readiness, SIGTERM shutdown,
and configuration errors that name the variable."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys

from buzz_operator.relay.nostr import Keypair

from tests.support.ports import free_port


async def _status(port: int, path: str) -> int:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(f"GET {path} HTTP/1.1\r\nHost: localhost:{port}\r\n\r\n".encode())
    await writer.drain()
    line = await reader.readline()
    writer.close()
    return int(line.split()[1])


async def test_process_serves_and_stops_cleanly_on_sigterm(db_dsn: str) -> None:
    port = free_port()
    env = {
        **os.environ,
        "RELAY_URL": f"ws://localhost:{port}",
        "RELAY_OWNER_PUBKEY": Keypair.generate().pubkey_hex,
        "BUZZ_RELAY_PRIVATE_KEY": Keypair.generate().secret_hex,
        "DATABASE_URL": db_dsn,
        "BUZZ_BIND": f"127.0.0.1:{port}",
    }
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "buzz_operator.dev.relay", env=env,
        stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE,
    )
    assert proc.stderr is not None
    try:
        async with asyncio.timeout(30):
            while True:
                line = json.loads(await proc.stderr.readline())
                if line["msg"] == "relay listening":
                    break
        assert line["port"] == port and line["level"] == "info"
        assert await _status(port, "/_readiness") == 200
        proc.send_signal(signal.SIGTERM)
        async with asyncio.timeout(30):
            rest = (await proc.stderr.read()).decode()
            code = await proc.wait()
        assert code == 0
        messages = [json.loads(x)["msg"] for x in rest.splitlines() if x.strip()]
        assert "shutting down" in messages
        assert db_dsn.split("@")[0] not in rest  # the DSN's credentials are never logged
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()


async def test_bad_configuration_names_the_variable() -> None:
    env = {**os.environ, "RELAY_URL": "ws://localhost:3600", "RELAY_OWNER_PUBKEY": "XYZ",
           "BUZZ_RELAY_PRIVATE_KEY": Keypair.generate().secret_hex, "DATABASE_URL": "postgresql://x/y"}
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "buzz_operator.dev.relay", env=env,
        stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE,
    )
    _, err = await proc.communicate()
    assert proc.returncode == 2
    line = json.loads(err.decode().strip().splitlines()[-1])
    assert line["level"] == "error" and "RELAY_OWNER_PUBKEY" in line["msg"]
