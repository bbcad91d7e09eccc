"""Client retry policy (docs/relay-protocol.md#auth) on relay rejections the dev relay never produces (it has no rate
limiter), so a scripted websockets server plays the relay here — a deliberate fake for an error
path a real server cannot be made to hit."""

from __future__ import annotations

import json

from buzz_operator.relay.client import RelayClient
from buzz_operator.relay.nostr import Keypair
from websockets.asyncio.server import ServerConnection, serve


async def _scripted_relay(replies: list[tuple[bool, str]], seen: list[str]):
    async def handler(ws: ServerConnection) -> None:
        await ws.send(json.dumps(["AUTH", "c"]))
        async for raw in ws:
            msg = json.loads(raw)
            if msg[0] == "AUTH":
                await ws.send(json.dumps(["OK", msg[1]["id"], True, ""]))
            elif msg[0] == "EVENT":
                seen.append(msg[1]["id"])
                ok, text = replies.pop(0) if replies else (True, "")
                await ws.send(json.dumps(["OK", msg[1]["id"], ok, text]))

    return serve(handler, "127.0.0.1", 0)


async def test_rate_limited_publish_is_retried_then_accepted() -> None:
    seen: list[str] = []
    async with await _scripted_relay([(False, "rate-limited: slow down, retry in 0s")], seen) as server:
        port = next(iter(server.sockets)).getsockname()[1]
        async with RelayClient(f"ws://127.0.0.1:{port}", Keypair.generate()) as client:
            event = client.sign(9, "hi", [["h", "c"]])
            assert await client.publish(event) == (True, "")
    assert seen == [event["id"], event["id"]]


async def test_definitive_rejection_is_not_retried() -> None:
    seen: list[str] = []
    async with await _scripted_relay([(False, "invalid: nope")], seen) as server:
        port = next(iter(server.sockets)).getsockname()[1]
        async with RelayClient(f"ws://127.0.0.1:{port}", Keypair.generate()) as client:
            event = client.sign(9, "hi", [["h", "c"]])
            assert await client.publish(event) == (False, "invalid: nope")
    assert seen == [event["id"]]
