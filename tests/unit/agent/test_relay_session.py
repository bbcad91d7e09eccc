"""The stdlib relay session against an in-process `websockets` relay double: NIP-42 AUTH with
the NIP-OA tag, OK handling, REQ/EOSE queries, CLOSED, and a lost connection."""

from __future__ import annotations

import asyncio
import io
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import coincurve
import pytest
from buzz_operator.dev.agent.bridge import Bridge
from buzz_operator.dev.agent.config import AcpConfig
from buzz_operator.dev.agent.nostr import Keys, event_id, parse_auth_tag
from buzz_operator.dev.agent.session import RelayError, RelaySession, SubscriptionRefused, websocket_url
from buzz_operator.dev.agent.tracing import EnvFilter, Logger
from websockets.asyncio.server import ServerConnection, serve

AUTH_TAG = '["auth","' + "ab" * 32 + '","","' + "cd" * 64 + '"]'
KEYS = Keys.from_text("02" * 32)


class RelayDouble:
    def __init__(self) -> None:
        self.auth_events: list[dict[str, Any]] = []
        self.stored: list[dict[str, Any]] = []
        self.port = 0

    async def handle(self, conn: ServerConnection) -> None:
        await conn.send(json.dumps(["AUTH", "challenge-123"]))
        async for raw in conn:
            msg = json.loads(raw)
            if msg[0] == "AUTH":
                self.auth_events.append(msg[1])
                await conn.send(json.dumps(["OK", msg[1]["id"], True, ""]))
            elif msg[0] == "EVENT":
                event = msg[1]
                if event["content"] == "drop the connection":
                    await conn.close()
                    return
                accepted = event["content"] != "reject me"
                if accepted:
                    self.stored.append(event)
                await conn.send(json.dumps(["OK", event["id"], accepted, "" if accepted else "blocked: nope"]))
            elif msg[0] == "REQ":
                sub, flt = msg[1], msg[2]
                if flt.get("kinds") == [666] or flt.get("#h") == ["forbidden"]:
                    await conn.send(json.dumps(["CLOSED", sub, "unsupported: kind 666"]))
                    continue
                for event in self.stored:
                    if event["kind"] in flt.get("kinds", [event["kind"]]):
                        await conn.send(json.dumps(["EVENT", sub, event]))
                await conn.send(json.dumps(["EOSE", sub]))


@pytest.fixture
async def relay() -> AsyncIterator[RelayDouble]:
    double = RelayDouble()
    async with serve(double.handle, "127.0.0.1", 0) as server:
        double.port = server.sockets[0].getsockname()[1]
        yield double


async def _session(relay: RelayDouble) -> RelaySession:
    session = RelaySession(f"ws://127.0.0.1:{relay.port}", KEYS, parse_auth_tag(AUTH_TAG), timeout=5)
    await session.connect()
    return session


async def test_nip42_auth_carries_relay_challenge_and_nip_oa(relay: RelayDouble) -> None:
    session = await _session(relay)
    (auth,) = relay.auth_events
    assert auth["kind"] == 22242 and auth["pubkey"] == KEYS.pubkey
    assert auth["tags"] == [["relay", f"ws://127.0.0.1:{relay.port}"], ["challenge", "challenge-123"],
                            json.loads(AUTH_TAG)]
    assert auth["id"] == event_id(auth["pubkey"], auth["created_at"], 22242, auth["tags"], auth["content"])
    assert coincurve.PublicKeyXOnly(bytes.fromhex(KEYS.pubkey)).verify(
        bytes.fromhex(auth["sig"]), bytes.fromhex(auth["id"]))
    await session.close()


async def test_publish_query_and_rejections(relay: RelayDouble) -> None:
    session = await _session(relay)
    sent = await session.send(9, "hello", [["h", "c1"]])
    assert relay.stored == [sent] and sent["tags"][-1][0] == "auth"
    with pytest.raises(RelayError, match="blocked: nope"):
        await session.send(9, "reject me", [["h", "c1"]])
    assert await session.query([{"kinds": [9]}]) == [sent]
    assert await session.query([{"kinds": [1]}]) == []
    with pytest.raises(SubscriptionRefused, match="unsupported: kind 666"):
        await session.query([{"kinds": [666]}])
    await session.close()


async def test_lost_connection_fails_what_is_pending(relay: RelayDouble) -> None:
    session = await _session(relay)
    with pytest.raises(RelayError, match="connection lost"):
        await session.send(9, "drop the connection", [])
    assert session.lost.is_set()
    await session.close()


def test_http_urls_are_spoken_to_as_websockets() -> None:
    assert websocket_url("http://localhost:3600") == "ws://localhost:3600"
    assert websocket_url("https://relay.example/x") == "wss://relay.example/x"
    assert websocket_url("ws://localhost:3600") == "ws://localhost:3600"


async def test_bridge_gives_up_on_a_refused_channel_instead_of_announcing_readiness(
        relay: RelayDouble, tmp_path: Path) -> None:
    env = {"BUZZ_RELAY_URL": f"ws://127.0.0.1:{relay.port}", "BUZZ_PRIVATE_KEY": "02" * 32,
           "BUZZ_AUTH_TAG": AUTH_TAG, "BUZZ_ACP_CHANNELS": "forbidden", "BUZZ_AGENT_MODEL": "standin/oracle"}
    out = io.StringIO()
    bridge = Bridge(AcpConfig.from_env(env), Logger(EnvFilter("buzz_acp=info"), out))

    async def never(turn: object) -> None:
        raise AssertionError("no turn expected")

    with pytest.raises(SubscriptionRefused, match="relay refused channel forbidden"):
        await asyncio.wait_for(bridge.serve(never), 10)
    assert "subscribed to channel" not in out.getvalue()
    await bridge.relay.close()
