"""Block's task fixtures (block/buzz #6448) against the real dev relay and Postgres: named directory
identities with `about` and channel membership, scripted messages signed by their actors, and
the evidence that records them."""

from __future__ import annotations

import json

from buzz_operator.dataset import ScriptedMessage
from buzz_operator.relay.client import RelayClient
from buzz_operator.relay.evidence import export_evidence
from buzz_operator.relay.messages import post_task
from buzz_operator.relay.nostr import Keypair
from buzz_operator.relay.scripted import publish_scripted
from buzz_operator.relay.tenant import actor_secrets, client_as, provision
from buzz_operator.relay.tenant_models import DirectoryEntry

TWINS = [
    DirectoryEntry("Taylor Morgan Lee", "user", "taylor-release-captain", "Release captain. Routing code ORCHID-72.",
                   channel_member=True),
    DirectoryEntry("Taylor Morgan Lee", "user", "taylor-observer", "Compliance observer. Routing code COBALT-19.",
                   channel_member=True),
]
REPORTERS = [DirectoryEntry("Ledger Scout", "bot", channel_member=True),
             DirectoryEntry("Risk Sentinel", "bot", channel_member=True)]
REPORTS = [
    ScriptedMessage(label="ledger-report", actor="Ledger Scout", content="@{orchestrator} North is 17.",
                    reply_to_task=True),
    ScriptedMessage(label="risk-report", actor="Risk Sentinel", content="@{orchestrator} Reserve is 11.",
                    reply_to_task=True),
    ScriptedMessage(label="beta-request", actor="user", content="@{orchestrator} BETA request"),
]


def _client(relay, secret_hex: str, auth_tag: str) -> RelayClient:
    return RelayClient(relay.dial_url, Keypair.from_secret(secret_hex), auth_tag, host=relay.host)


async def test_twins_share_a_name_but_not_a_key_and_carry_their_about(target, make_request, relay) -> None:
    handle, secrets = await provision(target, make_request(task_name="ambiguous-user-mention", directory=TWINS))
    captain, observer = handle.directory
    assert captain.name == observer.name and captain.pubkey != observer.pubkey
    assert (captain.identity_id, observer.identity_id) == ("taylor-release-captain", "taylor-observer")
    lead = secrets.seats[handle.orchestrator.seat_id]
    async with _client(relay, lead.secret_hex, lead.auth_tag) as agent:
        profiles = await agent.query([{"kinds": [0], "authors": [captain.pubkey, observer.pubkey]}])
        members = await agent.query([{"kinds": [39002], "#d": [handle.channel_id]}])
    abouts = {e["pubkey"]: json.loads(e["content"]) for e in profiles}
    assert abouts[captain.pubkey] == {"name": "Taylor Morgan Lee", "about": "Release captain. Routing code ORCHID-72."}
    roles = {t[1]: t[3] for t in members[-1]["tags"] if t[0] == "p"}
    assert roles[captain.pubkey] == roles[observer.pubkey] == "member"

    # a second trial of the task reuses the identities and republishes nothing
    again, _ = await provision(target, make_request(task_name="ambiguous-user-mention", directory=TWINS))
    assert again.directory == handle.directory


async def test_scripted_messages_are_signed_by_their_actors_once(target, make_request, relay) -> None:
    req = make_request(task_name="interleaved-agent-reports", directory=REPORTERS,
                       scripted_actors=["Ledger Scout", "Risk Sentinel"])
    handle, secrets = await provision(target, req)
    assert "secret" not in handle.to_json() and secrets.actors.keys() == {"Ledger Scout", "Risk Sentinel"}
    assert all(a.secret_hex not in handle.to_json() for a in secrets.actors.values())
    orch = handle.orchestrator
    async with client_as(target, secrets.user_secret_hex, secrets.user_auth_tag) as user:
        task_id = await post_task(user, handle.channel_id, orch.seat_id, orch.pubkey, "Wait for the reports.")

        async def publish() -> list:
            return await publish_scripted(
                handle, REPORTS, task_id, user=user, open_as=lambda s, t: client_as(target, s, t),
                actors=actor_secrets(target.owner_secret_hex, handle.scripted_actors))

        first = await publish()
        second = await publish()  # a restarted run step finds them and posts nothing
        events = await user.query([{"kinds": [9], "#h": [handle.channel_id]}])
    assert first == second
    assert [e.label for e in first] == ["ledger-report", "risk-report", "beta-request"]
    by_id = {e["id"]: e for e in events}
    assert len(events) == 4  # the task and three scripted messages, none twice
    pubkeys = {d.stable_id: d.pubkey for d in handle.directory}
    ledger, risk, beta = (by_id[e.event_id] for e in first)
    assert (ledger["pubkey"], risk["pubkey"], beta["pubkey"]) == (pubkeys["Ledger Scout"], pubkeys["Risk Sentinel"],
                                                                  handle.user.pubkey)
    assert ledger["content"] == f"@{orch.seat_id} North is 17."
    assert ["e", task_id, "", "reply"] in ledger["tags"] and ["p", orch.pubkey] in ledger["tags"]
    assert not any(t[0] == "e" for t in beta["tags"])

    evidence = await export_evidence(target, handle, secrets, task_event_id=task_id, completion_message_id=None,
                                     scripted_messages=REPORTS)
    assert evidence["scripted_events"] == [e.to_dict() for e in first]
    assert evidence["scripted_events"][0]["reply_to_event_id"] == task_id
    assert evidence["scripted_events"][2]["reply_to_event_id"] is None
    authors = {m["id"]: (m["author"], m["author_role"]) for m in evidence["messages"]}
    assert authors[first[0].event_id] == ("Ledger Scout", "bot")
    assert [d["identity_id"] for d in evidence["directory"]] == ["Ledger Scout", "Risk Sentinel"]
    dumped = json.dumps(evidence)
    assert not any(s in dumped for s in secrets.secret_strings())
