"""Evidence export (docs/evidence.md#fields, docs/evidence.md#export) and the user's task/DONE helpers against the real dev relay."""

from __future__ import annotations

import asyncio
import json
import time
import uuid

from buzz_operator.relay.client import RelayClient
from buzz_operator.relay.evidence import dumps_evidence, export_evidence, transcript_from_evidence
from buzz_operator.relay.messages import post_task, wait_for_done
from buzz_operator.relay.nostr import Keypair
from buzz_operator.relay.tenant import provision

from tests.support.verifiers import reply_to_thread_reward

MESSAGE_KEYS = {
    "id", "kind", "created_at", "pubkey", "author", "author_role", "content", "tags", "channel_id",
    "reply_to_event_id", "mentioned_pubkeys",
}


def _client(relay, secret_hex: str, auth_tag: str) -> RelayClient:
    return RelayClient(relay.dial_url, Keypair.from_secret(secret_hex), auth_tag, host=relay.host)


async def test_evidence_matches_v1_field_for_field(target, make_request, directory60, relay) -> None:
    req = make_request(task_name="create-channel-invite-users", channel_label="create-channel-invite-users",
                       directory=directory60)
    handle, secrets = await provision(target, req)
    orch = handle.orchestrator
    lead = secrets.seats[orch.seat_id]
    directory = {d.name: d.pubkey for d in handle.directory}
    since = int(time.time()) - 5
    async with _client(relay, secrets.user_secret_hex, secrets.user_auth_tag) as user, \
            _client(relay, lead.secret_hex, lead.auth_tag) as agent:
        done_task = asyncio.create_task(wait_for_done(user, handle.channel_id, orch.pubkey, since))
        task_id = await post_task(user, handle.channel_id, orch.seat_id, orch.pubkey, "make the channel")
        side = str(uuid.uuid4())
        assert (await agent.publish(agent.sign(9007, "", [
            ["h", side], ["name", "fix-pr-1234"], ["visibility", "private"], ["channel_type", "stream"],
            ["ttl", "3600"]])))[0]
        for name, role in (("benchmark-user-07", "member"), ("benchmark-bot-03", "bot")):
            ok, msg = await agent.publish(agent.sign(9000, "", [["h", side], ["p", directory[name]], ["role", role]]))
            assert ok, msg
        reply = agent.sign(9, "working", [["h", handle.channel_id], ["e", task_id, "", "reply"],
                                          ["p", handle.user.pubkey]])
        assert (await agent.publish(reply))[0]
        done = agent.sign(9, "DONE: created", [["h", handle.channel_id]])
        assert (await agent.publish(done))[0]
        completion = await asyncio.wait_for(done_task, 10)
    assert completion["id"] == done["id"]

    evidence = await export_evidence(
        target, handle, secrets, task_event_id=task_id, completion_message_id=completion["id"],
        observe_channel_names=["FIX-PR-1234"],
    )
    assert set(evidence) == {
        "schema_version", "trial", "task_event_id", "completion_message_id", "identities", "directory",
        "scripted_events", "task_name", "observed_channels", "message_count", "truncated", "messages",
    }
    assert evidence["schema_version"] == 1
    assert evidence["trial"] == {"run_id": req.run_id, "trial_id": req.trial_id, "channel_id": handle.channel_id}
    assert evidence["task_event_id"] == task_id
    assert evidence["completion_message_id"] == done["id"]
    assert evidence["identities"] == {
        "user": {"role": "user", "pubkey": handle.user.pubkey},
        "lead-1": {"role": "orchestrator", "pubkey": orch.pubkey},
        "worker-1": {"role": "worker", "pubkey": handle.seats[1].pubkey},
    }
    assert len(evidence["directory"]) == 60
    assert evidence["directory"][0] == {"identity_id": "benchmark-user-01", "name": "benchmark-user-01",
                                        "role": "user", "pubkey": directory["benchmark-user-01"], "about": ""}
    assert evidence["scripted_events"] == []
    assert evidence["task_name"] == "create-channel-invite-users"
    assert (evidence["message_count"], evidence["truncated"]) == (3, False)
    # messages within one second tie on created_at; the sort is stable, so look them up by id
    by_id = {m["id"]: m for m in evidence["messages"]}
    task_msg, reply_msg, done_msg = by_id[task_id], by_id[reply["id"]], by_id[done["id"]]
    assert [m["created_at"] for m in evidence["messages"]] == sorted(m["created_at"] for m in evidence["messages"])
    assert all(set(m) == MESSAGE_KEYS for m in evidence["messages"])
    assert task_msg["content"] == "@lead-1 make the channel"
    assert (task_msg["author"], task_msg["author_role"], task_msg["kind"]) == ("user", "user", 9)
    assert task_msg["mentioned_pubkeys"] == [orch.pubkey]
    assert task_msg["channel_id"] == handle.channel_id and task_msg["reply_to_event_id"] is None
    assert reply_msg["reply_to_event_id"] == task_id
    assert reply_msg["mentioned_pubkeys"] == [handle.user.pubkey]
    assert ["e", task_id, "", "reply"] in reply_msg["tags"]
    assert (done_msg["author"], done_msg["author_role"]) == ("lead-1", "orchestrator")
    [observed] = evidence["observed_channels"]
    members = observed.pop("members")
    assert observed == {
        "channel_id": side, "name": "fix-pr-1234", "channel_type": "stream", "visibility": "private",
        "archived": False, "about": None, "topic": None, "purpose": None, "ttl_seconds": 3600,
    }
    assert {m["pubkey"]: m["role"] for m in members} == {
        orch.pubkey: "owner", directory["benchmark-user-07"]: "member", directory["benchmark-bot-03"]: "bot",
    }
    text = dumps_evidence(evidence)
    assert text.endswith("}\n") and json.loads(text) == evidence
    assert text == json.dumps(evidence, indent=2, sort_keys=True) + "\n"
    transcript = transcript_from_evidence(evidence)
    assert transcript == {"channel_id": handle.channel_id, "message_count": 3, "truncated": False,
                          "messages": evidence["messages"]}


async def test_evidence_truncates_at_1000_messages(target, make_request, relay) -> None:
    handle, secrets = await provision(target, make_request())
    async with _client(relay, secrets.user_secret_hex, secrets.user_auth_tag) as user:
        base = int(time.time()) - 2000
        events = [user.sign(9, f"m{i}", [["h", handle.channel_id]], created_at=base + i) for i in range(1001)]
        results = []
        for start in range(0, len(events), 100):  # bounded bursts: each publish has its own OK timeout
            results += await asyncio.gather(*(user.publish(e) for e in events[start : start + 100]))
    assert all(ok for ok, _ in results)
    evidence = await export_evidence(target, handle, secrets, task_event_id=None, completion_message_id=None)
    assert evidence["truncated"] is True
    assert evidence["message_count"] == 1000
    # the newest 1000, oldest first
    assert [m["content"] for m in evidence["messages"][:2]] == ["m1", "m2"]
    assert evidence["messages"][-1]["content"] == "m1000"
    assert evidence["observed_channels"] == []


async def test_wait_for_done_ignores_non_orchestrator_and_non_prefix(target, make_request, relay) -> None:
    handle, secrets = await provision(target, make_request())
    orch, worker = handle.seats[0], handle.seats[1]
    since = int(time.time()) - 5
    async with _client(relay, secrets.user_secret_hex, secrets.user_auth_tag) as user, \
            _client(relay, secrets.seats[worker.seat_id].secret_hex, secrets.seats[worker.seat_id].auth_tag) as w, \
            _client(relay, secrets.seats[orch.seat_id].secret_hex, secrets.seats[orch.seat_id].auth_tag) as o:
        waiter = asyncio.create_task(wait_for_done(user, handle.channel_id, orch.pubkey, since))
        assert (await w.publish(w.sign(9, "DONE: not me", [["h", handle.channel_id]])))[0]
        assert (await o.publish(o.sign(9, " DONE: leading space", [["h", handle.channel_id]])))[0]
        assert (await o.publish(o.sign(9, "done: lowercase", [["h", handle.channel_id]])))[0]
        final = o.sign(9, "DONE: real", [["h", handle.channel_id]])
        assert (await o.publish(final))[0]
        got = await asyncio.wait_for(waiter, 10)
    assert got["id"] == final["id"]


async def test_a_same_second_answer_reads_after_the_task_and_scores(relay, target, make_request, tmp_path) -> None:
    """docs/evidence.md#order on the development relay, which returns a second's events by id as
    Block's relay does: an answer signed in the task's own second whose id sorts before the
    task's comes back first from the relay, after the task in the exported evidence, and the
    task's own verifier (tasks/reply-to-thread) scores it 1.0."""
    handle, secrets = await provision(target, make_request(task_name="reply-to-thread"))
    orch = handle.seats[0]
    lead = secrets.seats[orch.seat_id]
    second = int(time.time())
    answer_text = "Month 6 revenue: $160,811\nMonth 6 expenses: $84,462\nCumulative operating profit: $374,470"
    async with _client(relay, secrets.user_secret_hex, secrets.user_auth_tag) as user, \
            _client(relay, lead.secret_hex, lead.auth_tag) as o:
        task = user.sign(9, f"@{orch.seat_id} project months 1 through 6", [["h", handle.channel_id],
                                                                            ["p", orch.pubkey]], created_at=second)
        nonce = 0
        while True:  # an answer in the same second whose id sorts before the task's
            answer = o.sign(9, answer_text, [["h", handle.channel_id], ["e", task["id"], "", "reply"],
                                             ["p", handle.user.pubkey], ["nonce", str(nonce)]], created_at=second)
            if answer["id"] < task["id"]:
                break
            nonce += 1
        assert (await user.publish(task))[0]
        assert (await o.publish(answer))[0]
        got = await user.query([{"kinds": [9], "#h": [handle.channel_id]}])
    assert [e["id"] for e in got] == [answer["id"], task["id"]]  # the relay's order: by id

    evidence = await export_evidence(target, handle, secrets, task_event_id=task["id"],
                                     completion_message_id=None)
    assert [m["id"] for m in evidence["messages"]] == [task["id"], answer["id"]]
    assert reply_to_thread_reward(evidence, tmp_path) == 1.0


async def test_export_during_a_storage_failure_is_an_outage_not_a_refusal(target, make_request, relay) -> None:
    """The relay's database failing mid-sweep (the fault tier's Postgres outage) makes the relay
    answer `CLOSED … error: storage failure`. That must surface as RelayUnavailable, which the
    trial retries as infra — not as a plain refusal, which marks a Buzz-native trial broken."""
    import asyncpg
    from buzz_operator.relay.client import RelayError, RelayUnavailable

    handle, secrets = await provision(target, make_request())
    conn = await asyncpg.connect(relay.dsn)
    try:
        # a real server-side failure of the real relay: its events table disappears under it
        await conn.execute("ALTER TABLE relay.events RENAME TO events_away")
        try:
            await export_evidence(target, handle, secrets, task_event_id=None, completion_message_id=None)
        except RelayUnavailable as exc:
            assert "error: storage failure" in str(exc)
        else:
            raise AssertionError("export succeeded while the relay's storage was gone")
    finally:
        await conn.execute("ALTER TABLE relay.events_away RENAME TO events")
        await conn.close()
    evidence = await export_evidence(target, handle, secrets, task_event_id=None, completion_message_id=None)
    assert evidence["trial"]["channel_id"] == handle.channel_id
    # a refusal about the request itself stays a plain RelayError (a verdict, not an outage)
    async with _client(relay, secrets.user_secret_hex, secrets.user_auth_tag) as user:
        try:
            await user.query([{"kinds": ["nine"]}])
        except RelayUnavailable:
            raise AssertionError("an invalid filter was reported as an outage") from None
        except RelayError as exc:
            assert "invalid:" in str(exc)
