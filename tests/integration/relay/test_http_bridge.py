"""The development relay's NIP-98 HTTP bridge (POST /query, /count, /events) with real Postgres and
real websockets: what Block's buzz-acp does at startup (channel discovery over POST /query) and
exits on when it fails. Requests are built byte-for-byte here, signed with the project's helpers."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import time
import uuid
from typing import Any

import pytest
from buzz_operator.relay.client import RelayClient
from buzz_operator.relay.nostr import Keypair, compute_auth_tag, sign_event

pytestmark = pytest.mark.timeout(120)


def _nip98(kp: Keypair, url: str, body: bytes, *, method: str = "POST", created_at: int | None = None,
           payload: str | None = None) -> str:
    tags = [["u", url], ["method", method], ["nonce", uuid.uuid4().hex],
            ["payload", payload if payload is not None else hashlib.sha256(body).hexdigest()]]
    event = sign_event(kp, 27235, "", tags, created_at=created_at)
    return "Nostr " + base64.b64encode(json.dumps(event).encode()).decode()


async def _post(relay: Any, path: str, body: bytes, headers: dict[str, str],
                host: str | None = None) -> tuple[int, Any]:
    reader, writer = await asyncio.open_connection("127.0.0.1", relay.port)
    try:
        head = "".join(f"{k}: {v}\r\n" for k, v in headers.items())
        writer.write((f"POST {path} HTTP/1.1\r\nHost: {host or relay.host}\r\nContent-Type: application/json\r\n"
                      f"Content-Length: {len(body)}\r\nConnection: close\r\n{head}\r\n").encode() + body)
        await writer.drain()
        return _parse_response(await asyncio.wait_for(reader.read(), 10))
    finally:
        writer.close()


def _parse_response(raw: bytes) -> tuple[int, Any]:
    head, _, body = raw.partition(b"\r\n\r\n")
    return int(head.split(b" ", 2)[1]), json.loads(body)


def _member(relay: Any) -> tuple[Keypair, str]:
    kp = Keypair.generate()
    return kp, compute_auth_tag(relay.owner.secret_hex, kp.pubkey_hex)


async def _signed_post(relay: Any, kp: Keypair, path: str, payload: Any, tag: str | None,
                       **nip98: Any) -> tuple[int, Any]:
    body = json.dumps(payload).encode()
    headers = {"Authorization": _nip98(kp, f"http://{relay.host}{path}", body, **nip98)}
    if tag is not None:
        headers["x-auth-tag"] = tag
    return await _post(relay, path, body, headers)


async def test_query_count_and_events_round_trip_for_an_attested_identity(relay) -> None:  # type: ignore[no-untyped-def]
    kp, tag = _member(relay)
    cid = str(uuid.uuid4())
    create = sign_event(kp, 9007, "", [["h", cid], ["name", "bridge-room"]], auth_tag=tag)
    status, answer = await _signed_post(relay, kp, "/events", create, tag)
    assert status == 200, answer
    assert answer["event_id"] == create["id"] and answer["accepted"] is True
    message = sign_event(kp, 9, "over http", [["h", cid]], auth_tag=tag)
    assert (await _signed_post(relay, kp, "/events", message, tag))[0] == 200

    # channel discovery as buzz-acp does it: the relay-signed 39000 metadata of the new channel
    status, events = await _signed_post(relay, kp, "/query", [{"kinds": [39000], "#d": [cid]}], tag)
    assert status == 200, events
    assert [e["pubkey"] for e in events] == [relay.relay_key.pubkey_hex]
    status, events = await _signed_post(relay, kp, "/query", [{"kinds": [9], "#h": [cid]}], tag)
    assert status == 200 and [e["id"] for e in events] == [message["id"]]
    status, counted = await _signed_post(relay, kp, "/count", [{"kinds": [9, 9007], "#h": [cid]}], tag)
    assert (status, counted) == (200, {"count": 2})

    # the owner needs no tag
    status, events = await _signed_post(relay, relay.owner, "/query", [{"ids": [message["id"]]}], None)
    assert status == 200 and len(events) == 1


async def test_an_event_posted_over_http_reaches_a_websocket_subscriber(relay) -> None:  # type: ignore[no-untyped-def]
    kp, tag = _member(relay)
    async with RelayClient(relay.dial_url, kp, tag, host=relay.host) as client:
        cid = str(uuid.uuid4())
        assert (await client.publish(client.sign(9007, "", [["h", cid], ["name", "live-room"]])))[0]
        async with client.subscribe([{"kinds": [9], "#h": [cid], "since": int(time.time()) - 5}]) as sub:
            event = sign_event(kp, 9, "from the bridge", [["h", cid]], auth_tag=tag)
            status, answer = await _signed_post(relay, kp, "/events", event, tag)
            assert status == 200, answer
            delivered = await asyncio.wait_for(anext(sub), 5)
            assert delivered["id"] == event["id"]


async def test_bad_nip98_headers_are_refused_401(relay) -> None:  # type: ignore[no-untyped-def]
    kp, tag = _member(relay)
    filters = [{"kinds": [9]}]
    body = json.dumps(filters).encode()
    url = f"http://{relay.host}/query"

    async def refused(headers: dict[str, str], path: str = "/query") -> str:
        status, answer = await _post(relay, path, body, headers | {"x-auth-tag": tag})
        assert status == 401, answer
        return str(answer["error"])

    assert "missing" in await refused({})
    stale = _nip98(kp, url, body, created_at=int(time.time()) - 120)
    assert "window" in await refused({"Authorization": stale})
    wrong_payload = _nip98(kp, url, body, payload=hashlib.sha256(b"[]").hexdigest())
    assert "payload" in await refused({"Authorization": wrong_payload})
    # forged: a valid header whose signature no longer matches after the signer field is swapped
    forged_event = json.loads(base64.b64decode(_nip98(kp, url, body)[6:]))
    forged_event["pubkey"] = relay.owner.pubkey_hex
    forged = "Nostr " + base64.b64encode(json.dumps(forged_event).encode()).decode()
    assert "signature" in await refused({"Authorization": forged})
    assert "u tag" in await refused({"Authorization": _nip98(kp, f"http://{relay.host}/count", body)})
    assert "u tag" in await refused({"Authorization": _nip98(kp, "http://evil.example:1/query", body)})
    assert "method" in await refused({"Authorization": _nip98(kp, url, body, method="GET")})
    once = _nip98(kp, url, body)
    assert (await _post(relay, "/query", body, {"Authorization": once, "x-auth-tag": tag}))[0] == 200
    assert "replay" in await refused({"Authorization": once})


async def test_unattested_identities_and_unknown_hosts_are_refused(relay) -> None:  # type: ignore[no-untyped-def]
    outsider = Keypair.generate()
    status, answer = await _signed_post(relay, outsider, "/query", [{"kinds": [9]}], None)
    assert status == 403 and answer["error"].startswith("restricted:")
    impostor_tag = compute_auth_tag(Keypair.generate().secret_hex, outsider.pubkey_hex)
    assert (await _signed_post(relay, outsider, "/count", [{"kinds": [9]}], impostor_tag))[0] == 403
    # an event without its own owner tag is refused even when the header tag is valid
    kp, tag = _member(relay)
    status, answer = await _signed_post(relay, kp, "/events", sign_event(kp, 0, "{}", []), tag)
    assert status == 403 and answer["error"].startswith("restricted:")
    # someone else's event cannot ride on this signer's NIP-98 header
    other, other_tag = _member(relay)
    status, answer = await _signed_post(relay, kp, "/events", sign_event(other, 0, "{}", [], auth_tag=other_tag), tag)
    assert status == 403
    body = b"[]"
    status, answer = await _post(relay, "/query", body, {
        "Authorization": _nip98(kp, "http://evil.example:1234/query", body), "x-auth-tag": tag,
    }, host="evil.example:1234")
    assert status == 404


async def test_keep_alive_posts_and_websocket_share_the_port(relay) -> None:  # type: ignore[no-untyped-def]
    kp, tag = _member(relay)
    reader, writer = await asyncio.open_connection("127.0.0.1", relay.port)
    try:
        for _ in range(2):  # two requests on one connection, as reqwest's pool reuses it
            body = json.dumps([{"kinds": [0], "authors": [kp.pubkey_hex]}]).encode()
            auth = _nip98(kp, f"http://{relay.host}/count", body)
            writer.write((f"POST /count HTTP/1.1\r\nHost: {relay.host}\r\nAuthorization: {auth}\r\n"
                          f"x-auth-tag: {tag}\r\nContent-Length: {len(body)}\r\n\r\n").encode() + body)
            await writer.drain()
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 5)
            length = int(next(line.split(b":")[1] for line in head.split(b"\r\n")
                              if line.lower().startswith(b"content-length")))
            assert head.startswith(b"HTTP/1.1 200") and json.loads(await reader.readexactly(length)) == {"count": 0}
    finally:
        writer.close()
    # the websocket side still works alongside, through the same port
    async with RelayClient(relay.dial_url, kp, tag, host=relay.host) as client:
        assert await client.query([{"kinds": [0], "authors": [kp.pubkey_hex]}]) == []
