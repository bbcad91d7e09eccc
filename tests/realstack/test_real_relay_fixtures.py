"""Block's task fixtures (block/buzz #6448) provisioned on Block's own relay (BUZZ_RELAY_BIN): the
relay must take what the operator does for the five newest tasks exactly as the dev relay does —
twin display names with their `about`, directory identities added to the channel as bot or
member, scripted messages signed by their actors' own connections — and the evidence must read
them back. The trial-level run of the suite is test_real_stack.py."""

from __future__ import annotations

import json
import secrets
import time

import pytest
from buzz_operator.condition.seats import Seat
from buzz_operator.dataset import builtin_dataset_path, load_dataset
from buzz_operator.relay.evidence import export_evidence
from buzz_operator.relay.messages import post_task
from buzz_operator.relay.scripted import publish_scripted
from buzz_operator.relay.tenant import actor_secrets, client_as, provision
from buzz_operator.relay.tenant_models import DirectoryEntry, RelayTarget, TenantRequest

from tests.realstack.stack_fixtures import RELAY_URL
from tests.support.verifiers import reply_to_thread_reward

pytestmark = pytest.mark.realstack
TASKS = {t.name: t for t in load_dataset(builtin_dataset_path())}
SCRIPTED = [name for name, task in TASKS.items() if task.buzz.scripted_messages or task.buzz.directory]


def _request(task_name: str) -> TenantRequest:
    buzz = TASKS[task_name].buzz
    return TenantRequest(
        run_id=f"run-{secrets.token_hex(4)}", trial_id=f"trial-{secrets.token_hex(8)}",
        manifest_sha256=secrets.token_hex(32),
        seats=[Seat("solo-1", "solo", "orchestrator", "solo", "ep", "rev", "buzz-agent", True, 1)],
        channel_label=task_name, task_name=task_name, user_display_name=buzz.user_display_name,
        directory=[DirectoryEntry(e.name, e.role, e.identity_id, e.about, e.channel_member) for e in buzz.directory],
        scripted_actors=sorted({m.actor for m in buzz.scripted_messages if m.actor != "user"}),
    )


@pytest.mark.parametrize("task_name", sorted(SCRIPTED))
async def test_task_fixture_on_blocks_relay(task_name, real_relay) -> None:  # type: ignore[no-untyped-def]
    target = RelayTarget(url=RELAY_URL, owner_secret_hex=real_relay.owner.secret_hex, pg_dsn=real_relay.relay_dsn,
                         connect_url=f"ws://127.0.0.1:{real_relay.port}")
    buzz = TASKS[task_name].buzz
    handle, tenant_secrets = await provision(target, _request(task_name))
    orch = handle.orchestrator
    async with client_as(target, tenant_secrets.user_secret_hex, tenant_secrets.user_auth_tag) as user:
        task_id = await post_task(user, handle.channel_id, orch.seat_id, orch.pubkey, TASKS[task_name].instruction)
        scripted = await publish_scripted(
            handle, buzz.scripted_messages, task_id, user=user, open_as=lambda s, t: client_as(target, s, t),
            actors=actor_secrets(target.owner_secret_hex, handle.scripted_actors))
    lead = tenant_secrets.seats[orch.seat_id]
    async with client_as(target, lead.secret_hex, lead.auth_tag) as agent:
        profiles = await agent.query([{"kinds": [0], "authors": [d.pubkey for d in handle.directory]}]) \
            if handle.directory else []
    wanted = {d.pubkey: {"name": d.name, **({"about": d.about} if d.about else {})} for d in handle.directory}
    assert {e["pubkey"]: json.loads(e["content"]) for e in profiles} == wanted, (profiles, real_relay.log)

    evidence = await export_evidence(target, handle, tenant_secrets, task_event_id=task_id,
                                     completion_message_id=None, scripted_messages=buzz.scripted_messages)
    assert evidence["scripted_events"] == [e.to_dict() for e in scripted]
    # posted within a second or so of the task: Block's relay orders same-second events by id, so
    # only the set is fixed (as in Block's harness, which posts them the same way)
    assert sorted(m["id"] for m in evidence["messages"]) == sorted([task_id, *(e.event_id for e in scripted)])
    by_id = {m["id"]: m for m in evidence["messages"]}
    for event, message in zip(scripted, buzz.scripted_messages, strict=True):
        row = by_id[event.event_id]
        assert row["reply_to_event_id"] == (task_id if message.reply_to_task else None)
        assert (orch.pubkey in row["mentioned_pubkeys"]) == message.mention_orchestrator
        expected_author = handle.user.name if message.actor == "user" else message.actor
        assert row["author"] == expected_author
    assert [(d["identity_id"], d["about"]) for d in evidence["directory"]] == [
        (e.identity_id, e.about or "") for e in buzz.directory]


async def test_a_same_second_answer_reads_after_the_task_on_blocks_relay(real_relay, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """docs/evidence.md#order against Block's relay: an answer signed in the task's own second
    whose id sorts before the task's is returned first by the relay (created_at DESC, id ASC),
    read after the task in the exported evidence, and scored 1.0 by tasks/reply-to-thread."""
    target = RelayTarget(url=RELAY_URL, owner_secret_hex=real_relay.owner.secret_hex, pg_dsn=real_relay.relay_dsn,
                         connect_url=f"ws://127.0.0.1:{real_relay.port}")
    handle, tenant_secrets = await provision(target, _request("reply-to-thread"))
    orch = handle.orchestrator
    lead = tenant_secrets.seats[orch.seat_id]
    second = int(time.time())
    text = "Month 6 revenue: $160,811\nMonth 6 expenses: $84,462\nCumulative operating profit: $374,470"
    async with client_as(target, tenant_secrets.user_secret_hex, tenant_secrets.user_auth_tag) as user, \
            client_as(target, lead.secret_hex, lead.auth_tag) as agent:
        task = user.sign(9, f"@{orch.seat_id} project months 1 through 6",
                         [["h", handle.channel_id], ["p", orch.pubkey]], created_at=second)
        nonce = 0
        while True:
            answer = agent.sign(9, text, [["h", handle.channel_id], ["e", task["id"], "", "reply"],
                                          ["p", handle.user.pubkey], ["nonce", str(nonce)]], created_at=second)
            if answer["id"] < task["id"]:
                break
            nonce += 1
        assert (await user.publish(task))[0], real_relay.log.read_text()[-2000:]
        assert (await agent.publish(answer))[0], real_relay.log.read_text()[-2000:]
        got = await user.query([{"kinds": [9], "#h": [handle.channel_id]}])
    # Block's relay returns newest first and a second's events by id ascending
    assert [e["id"] for e in got] == [answer["id"], task["id"]]
    evidence = await export_evidence(target, handle, tenant_secrets, task_event_id=task["id"],
                                     completion_message_id=None)
    assert [m["id"] for m in evidence["messages"]] == [task["id"], answer["id"]]
    assert reply_to_thread_reward(evidence, tmp_path) == 1.0
