"""Protocol behaviour of the development relay with real websockets and Postgres: tenancy, auth,
admission, privacy, bad input, readiness, live delivery across a relay restart."""

from __future__ import annotations

import asyncio
import json
import time
import uuid

import asyncpg
import pytest
from buzz_operator.dev.relay import RelayConfig, serve
from buzz_operator.relay.client import RelayClient, RelayError
from buzz_operator.relay.nostr import Keypair, compute_auth_tag, sign_event
from buzz_operator.relay.tenant import healthcheck
from buzz_operator.relay.tenant_models import ProvisioningError, RelayTarget
from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus

from tests.support.ports import free_port


def _member(relay) -> tuple[Keypair, str]:
    kp = Keypair.generate()
    return kp, compute_auth_tag(relay.owner.secret_hex, kp.pubkey_hex)


def _client(relay, kp: Keypair, tag: str | None) -> RelayClient:
    return RelayClient(relay.dial_url, kp, tag, host=relay.host)


async def _raw(relay, host: str | None = None):
    return connect(f"ws://{host or relay.host}/", host="127.0.0.1", port=relay.port, proxy=None)


async def _recv(ws) -> list:
    return json.loads(await asyncio.wait_for(ws.recv(), 5))


async def _http_get(port: int, path: str, host: str) -> int:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(f"GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n".encode())
    await writer.drain()
    line = await reader.readline()
    writer.close()
    return int(line.split()[1])


async def _private_channel(client: RelayClient) -> str:
    cid = str(uuid.uuid4())
    ok, msg = await client.publish(client.sign(9007, "", [["h", cid], ["name", "secret-room"],
                                                          ["visibility", "private"], ["channel_type", "stream"]]))
    assert ok, msg
    return cid


async def test_unknown_host_gets_404_and_loopback_host_is_normalised(relay) -> None:
    with pytest.raises(InvalidStatus) as info:
        async with await _raw(relay, host="evil.example:1234"):
            pass
    assert info.value.response.status_code == 404
    # 127.0.0.1:<port> normalises to localhost:<port> (docs/relay-protocol.md#tenancy), so dialling it directly is the same tenant
    kp, tag = _member(relay)
    async with RelayClient(relay.dial_url, kp, tag) as client:
        assert await client.query([{"kinds": [0], "authors": [kp.pubkey_hex]}]) == []


async def test_unauthenticated_req_and_event_are_refused(relay) -> None:
    kp, tag = _member(relay)
    async with await _raw(relay) as ws:
        challenge = await _recv(ws)
        assert challenge[0] == "AUTH"
        await ws.send(json.dumps(["REQ", "s1", {"kinds": [9]}]))
        closed = await _recv(ws)
        assert closed[:2] == ["CLOSED", "s1"] and closed[2].startswith("auth-required:")
        event = sign_event(kp, 0, "{}", [], auth_tag=tag)
        await ws.send(json.dumps(["EVENT", event]))
        ok = await _recv(ws)
        assert ok[:3] == ["OK", event["id"], False] and ok[3].startswith("auth-required:")


async def test_auth_with_non_owner_tag_is_refused(relay) -> None:
    kp = Keypair.generate()
    impostor = Keypair.generate()
    with pytest.raises(RelayError, match="restricted:"):
        async with _client(relay, kp, compute_auth_tag(impostor.secret_hex, kp.pubkey_hex)):
            pass
    with pytest.raises(RelayError, match="restricted:"):
        async with _client(relay, kp, None):
            pass


async def test_forged_signature_and_non_owner_event_tag_are_refused(relay) -> None:
    kp, tag = _member(relay)
    async with _client(relay, kp, tag) as client:
        event = client.sign(0, json.dumps({"name": "x"}))
        forged = {**event, "content": json.dumps({"name": "y"})}  # id no longer matches
        ok, msg = await client.publish(forged)
        assert not ok and msg.startswith("invalid:")
        bad_sig = {**event, "sig": "0" * 128}
        ok, msg = await client.publish(bad_sig)
        assert not ok and msg.startswith("invalid:")
        # authenticated connection, but the event is by another key — attested by a non-owner, or
        # even by the owner: as Block's relay, a connection publishes as its own identity only
        other = Keypair.generate()
        foreign = sign_event(other, 0, "{}", [], auth_tag=compute_auth_tag(Keypair.generate().secret_hex,
                                                                           other.pubkey_hex))
        ok, msg = await client.publish(foreign)
        assert (ok, msg) == (False, "invalid: event pubkey does not match authenticated identity")
        attested = sign_event(other, 0, "{}", [], auth_tag=compute_auth_tag(relay.owner.secret_hex, other.pubkey_hex))
        ok, msg = await client.publish(attested)
        assert (ok, msg) == (False, "invalid: event pubkey does not match authenticated identity")
        untagged = sign_event(kp, 0, "{}", [])
        ok, msg = await client.publish(untagged)
        assert not ok and msg.startswith("restricted:")
        assert await client.publish(event) == (True, "")


async def test_non_member_cannot_read_private_channel_or_its_state(relay) -> None:
    owner_kp, owner_tag = _member(relay)
    outsider_kp, outsider_tag = _member(relay)
    async with _client(relay, owner_kp, owner_tag) as owner, _client(relay, outsider_kp, outsider_tag) as outsider:
        cid = await _private_channel(owner)
        assert (await owner.publish(owner.sign(9, "psst", [["h", cid]])))[0]
        filters = [{"#h": [cid]}, {"kinds": [39000, 39001, 39002], "#d": [cid]}]
        assert len(await owner.query(filters)) == 5  # 9007, message, 39000-39002
        assert await outsider.query(filters) == []
        ok, msg = await outsider.publish(outsider.sign(9, "let me in", [["h", cid]]))
        assert not ok and msg.startswith("restricted:")
        ok, msg = await outsider.publish(outsider.sign(9000, "", [["h", cid], ["p", outsider_kp.pubkey_hex]]))
        assert not ok and msg.startswith("restricted:")
        # once added, the member reads history and state
        assert (await owner.publish(owner.sign(9000, "", [["h", cid], ["p", outsider_kp.pubkey_hex]])))[0]
        contents = [e["content"] for e in await outsider.query([{"kinds": [9], "#h": [cid]}])]
        assert contents == ["psst"]


async def test_bad_input_is_answered_and_relay_keeps_serving(relay) -> None:
    kp, tag = _member(relay)
    async with await _raw(relay) as ws:
        challenge = (await _recv(ws))[1]
        auth = sign_event(kp, 22242, "", [["relay", relay.relay_url], ["challenge", challenge]], auth_tag=tag)
        await ws.send(json.dumps(["AUTH", auth]))
        assert (await _recv(ws))[:3] == ["OK", auth["id"], True]
        await ws.send("{not json")
        notice = await _recv(ws)
        assert notice[0] == "NOTICE" and notice[1].startswith("invalid:")
        await ws.send(json.dumps({"EVENT": 1}))
        assert (await _recv(ws))[0] == "NOTICE"
        big = sign_event(kp, 9, "x" * (300 * 1024), [["h", str(uuid.uuid4())]], auth_tag=tag)
        await ws.send(json.dumps(["EVENT", big]))
        reply = await _recv(ws)
        assert reply[:3] == ["OK", big["id"], False] and reply[3].startswith("invalid:")
        for event, expect in (
            (sign_event(kp, 12345, "", [], auth_tag=tag), "invalid: unsupported kind"),
            (sign_event(kp, 9, "hi", [["h", str(uuid.uuid4())]], auth_tag=tag), "invalid: channel"),
            (sign_event(kp, 9, "hi", [], auth_tag=tag), "invalid: channel events need an h tag"),
            ({"id": "zz", "kind": 9}, "invalid:"),
        ):
            await ws.send(json.dumps(["EVENT", event]))
            reply = await _recv(ws)
            assert reply[0] == "OK" and reply[2] is False and reply[3].startswith(expect), reply
        await ws.send(json.dumps(["REQ", "s", {"kinds": "nine"}]))
        reply = await _recv(ws)
        assert reply[:2] == ["CLOSED", "s"] and reply[2].startswith("invalid:")
        await ws.send(json.dumps(["REQ", "ok", {"kinds": [0], "authors": [kp.pubkey_hex]}]))
        assert (await _recv(ws)) == ["EOSE", "ok"]


async def test_limit_returns_newest_in_order_and_live_delivery(relay) -> None:
    kp, tag = _member(relay)
    async with _client(relay, kp, tag) as client:
        cid = str(uuid.uuid4())
        assert (await client.publish(client.sign(9007, "", [["h", cid], ["name", "open-room"]])))[0]
        base = int(time.time()) - 100
        for i in range(5):
            assert (await client.publish(client.sign(9, f"m{i}", [["h", cid]], created_at=base + i)))[0]
        got = await client.query([{"kinds": [9], "#h": [cid], "limit": 3}])
        assert [e["content"] for e in got] == ["m2", "m3", "m4"]
        async with client.subscribe([{"kinds": [9], "#h": [cid], "since": base + 4}]) as sub:
            first = await asyncio.wait_for(anext(sub), 5)
            assert first["content"] == "m4"
            assert (await client.publish(client.sign(9, "live", [["h", cid]])))[0]
            second = await asyncio.wait_for(anext(sub), 5)
            assert second["content"] == "live"


async def test_nip50_search_finds_profiles_by_a_piece_of_their_name(relay) -> None:
    """What `buzz users get --name` sends: kind 0 with `search`, every term a case-insensitive
    substring; LIKE's own wildcards in the query are taken literally. (The names carry this run's
    mark: the module's database is shared.)"""
    run = uuid.uuid4().hex[:8]
    names = {f"benchmark-user-07-{run}": Keypair.generate(), f"benchmark-user-70-{run}": Keypair.generate(),
             f"benchmark_bot_03-{run}": Keypair.generate()}
    for name, kp in names.items():
        async with _client(relay, kp, compute_auth_tag(relay.owner.secret_hex, kp.pubkey_hex)) as client:
            assert (await client.publish(client.sign(0, json.dumps({"name": name}), [])))[0]
    kp, tag = _member(relay)
    async with _client(relay, kp, tag) as client:
        found = await client.query([{"kinds": [0], "search": f"BENCHMARK-user-07-{run}", "limit": 100}])
        assert [e["pubkey"] for e in found] == [names[f"benchmark-user-07-{run}"].pubkey_hex]
        assert len(await client.query([{"kinds": [0], "search": f"benchmark-user {run}"}])) == 2
        assert [e["pubkey"] for e in await client.query([{"kinds": [0], "search": f"k_b {run}"}])] == [
            names[f"benchmark_bot_03-{run}"].pubkey_hex]
        assert await client.query([{"kinds": [0], "search": f"bench%07 {run}"}]) == []


async def test_ttl_channel_is_archived_after_deadline(relay) -> None:
    kp, tag = _member(relay)
    async with _client(relay, kp, tag) as client:
        cid = str(uuid.uuid4())
        assert (await client.publish(client.sign(9007, "", [["h", cid], ["name", "short"], ["ttl", "1"]])))[0]
        meta = await client.query([{"kinds": [39000], "#d": [cid]}])
        assert ["ttl", "1"] in meta[-1]["tags"] and ["archived", "true"] not in meta[-1]["tags"]
        async with client.subscribe([{"kinds": [39000], "#d": [cid]}]) as sub:
            async with asyncio.timeout(10):
                async for event in sub:
                    if ["archived", "true"] in event["tags"]:
                        break


async def test_readiness_follows_postgres(pg_dsn: str, db_dsn: str) -> None:
    """The relay gets its own database; closing that database to connections (and terminating
    its sessions) is Postgres going away for this relay only."""
    name = f"relay_ready_{uuid.uuid4().hex[:8]}"
    admin = await asyncpg.connect(pg_dsn)
    await admin.execute(f'CREATE DATABASE "{name}"')
    port = free_port()
    owner = Keypair.generate()
    config = RelayConfig(f"ws://localhost:{port}", owner.pubkey_hex, Keypair.generate().secret_hex,
                         db_dsn.rsplit("/", 1)[0] + f"/{name}", "127.0.0.1", port)
    target = RelayTarget(url=config.relay_url, owner_secret_hex=owner.secret_hex, pg_dsn=db_dsn,
                         connect_url=f"ws://127.0.0.1:{port}")
    try:
        async with serve(config):
            assert await _http_get(port, "/_readiness", "10.0.0.1:9999") == 200
            await healthcheck(target)
            await admin.execute(f'ALTER DATABASE "{name}" ALLOW_CONNECTIONS false')
            await admin.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1", name)
            assert await _http_get(port, "/_readiness", "10.0.0.1:9999") == 503
            with pytest.raises(ProvisioningError, match="HTTP 503"):
                await healthcheck(target)
            await admin.execute(f'ALTER DATABASE "{name}" ALLOW_CONNECTIONS true')
            assert await _http_get(port, "/_readiness", "10.0.0.1:9999") == 200
    finally:
        await admin.execute(f'ALTER DATABASE "{name}" ALLOW_CONNECTIONS true')
        await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        await admin.close()


async def test_subscription_survives_relay_restart(db_dsn: str) -> None:
    port = free_port()
    owner = Keypair.generate()
    config = RelayConfig(f"ws://localhost:{port}", owner.pubkey_hex, Keypair.generate().secret_hex,
                         db_dsn, "127.0.0.1", port)
    kp = Keypair.generate()
    tag = compute_auth_tag(owner.secret_hex, kp.pubkey_hex)
    client = RelayClient(f"ws://127.0.0.1:{port}", kp, tag, host=f"localhost:{port}")
    async with serve(config):
        await client.connect()
        cid = str(uuid.uuid4())
        assert (await client.publish(client.sign(9007, "", [["h", cid], ["name", "restart"]])))[0]
        sub = await client.subscribe([{"kinds": [9], "#h": [cid]}]).__aenter__()
        assert client.disconnects == 0
    try:
        async with serve(config):  # same port, same database: the relay came back
            publisher = RelayClient(f"ws://127.0.0.1:{port}", kp, tag, host=f"localhost:{port}")
            async with publisher:
                ok, msg = await publisher.publish(publisher.sign(9, "after restart", [["h", cid]]))
                assert ok, msg
            event = await asyncio.wait_for(anext(sub), 15)
            assert event["content"] == "after restart"
            # and the original connection publishes again once reconnected
            assert (await client.publish(client.sign(9, "me too", [["h", cid]])))[0]
            # counted, so a run that ended without DONE can tell the relay went away under it
            assert client.disconnects == 1
    finally:
        await client.close()


async def test_membership_archive_and_delete_rules(relay) -> None:
    owner_kp, owner_tag = _member(relay)
    member_kp, member_tag = _member(relay)
    third_kp, _ = _member(relay)
    async with _client(relay, owner_kp, owner_tag) as owner, _client(relay, member_kp, member_tag) as member:
        cid = await _private_channel(owner)
        for pk in (member_kp.pubkey_hex, third_kp.pubkey_hex):
            assert (await owner.publish(owner.sign(9000, "", [["h", cid], ["p", pk]])))[0]
        ok, msg = await owner.publish(owner.sign(9000, "", [["h", cid], ["p", third_kp.pubkey_hex], ["role", "king"]]))
        assert not ok and msg.startswith("invalid: role")
        # a plain member may not remove others, but may leave
        ok, msg = await member.publish(member.sign(9001, "", [["h", cid], ["p", third_kp.pubkey_hex]]))
        assert not ok and msg.startswith("restricted:")
        assert (await member.publish(member.sign(9001, "", [["h", cid], ["p", member_kp.pubkey_hex]])))[0]
        state = await owner.query([{"kinds": [39002], "#d": [cid]}])
        assert {t[1] for t in state[-1]["tags"] if t[0] == "p"} == {owner_kp.pubkey_hex, third_kp.pubkey_hex}
        admins = await owner.query([{"kinds": [39001], "#d": [cid]}])
        assert [t for t in admins[-1]["tags"] if t[0] == "p"] == [["p", owner_kp.pubkey_hex, "owner"]]
        # archive, unarchive, then delete (owner only)
        assert (await owner.publish(owner.sign(9002, "", [["h", cid], ["archived", "true"]])))[0]
        assert (await owner.publish(owner.sign(9002, "", [["h", cid], ["archived", "false"], ["about", "back"]])))[0]
        meta = (await owner.query([{"kinds": [39000], "#d": [cid]}]))[-1]["tags"]
        assert ["archived", "true"] not in meta and ["about", "back"] in meta
        assert (await owner.publish(owner.sign(9, "still here", [["h", cid]])))[0]
        assert (await owner.publish(owner.sign(9008, "", [["h", cid]])))[0]
        ok, msg = await owner.publish(owner.sign(9, "gone", [["h", cid]]))
        assert not ok and "does not exist" in msg


async def test_tag_conditions_bind_published_events_not_auth(relay) -> None:
    kp = Keypair.generate()
    tag = compute_auth_tag(relay.owner.secret_hex, kp.pubkey_hex, "kind=0")
    async with _client(relay, kp, tag) as client:  # AUTH is kind 22242, yet admitted
        assert (await client.publish(client.sign(0, json.dumps({"name": "profile-only"}))))[0]
        ok, msg = await client.publish(client.sign(9007, "", [["h", str(uuid.uuid4())], ["name", "x"]]))
        assert not ok and msg.startswith("restricted:")
