"""Pure evidence construction (docs/evidence.md#fields): normalisation of odd raw messages, order, truncation,
and the channel views' row shapes (docs/relay-protocol.md#cli)."""

from __future__ import annotations

import json

from buzz_operator.relay.channel_views import channel_summary
from buzz_operator.relay.evidence import build_evidence, dumps_evidence, transcript_from_evidence
from buzz_operator.relay.tenant_models import DirectoryIdentity, SeatIdentity, TenantHandle, UserIdentity

USER, LEAD, WORKER, STRANGER = "a" * 64, "b" * 64, "c" * 64, "d" * 64
HANDLE = TenantHandle(
    run_id="run", trial_id="trial", manifest_sha256="e" * 64, channel_id="chan", channel_name="t-trial",
    relay_url="ws://localhost:3600",
    seats=(SeatIdentity("lead-1", "orchestrator", "lead", LEAD, "ep"),
           SeatIdentity("worker-1", "worker", "critic", WORKER, "ep")),
    user=UserIdentity("John Vincent Doe", USER, "task-user:user-mention"),
    directory=(DirectoryIdentity("benchmark-bot-01", "bot", "f" * 64),),
    task_name="user-mention",
)


def test_messages_are_normalised_and_sorted_with_nones_last() -> None:
    raw = [
        {"id": "late", "pubkey": LEAD, "created_at": 20, "kind": 9, "content": "DONE: x",
         "tags": [["h", "chan"], ["e", "root", "", "reply"], ["p", USER], ["p", WORKER]]},
        {"id": 5, "pubkey": None, "created_at": None, "kind": "9", "content": None, "tags": "nope"},
        {"id": "early", "pubkey": STRANGER, "created_at": 10, "kind": 9, "content": "hi",
         "tags": [["h", "chan"], ["h", "other"], ["e", "x", "", "root"], [], ["p", 7], "bad", ["e", "y", "", "reply"]]},
        "not a dict",
    ]
    evidence = build_evidence(HANDLE, raw, task_event_id="root", completion_message_id="late")
    assert [m["id"] for m in evidence["messages"]] == ["early", "late", ""]
    early, late, broken = evidence["messages"]
    assert early["tags"] == [["h", "chan"], ["h", "other"], ["e", "x", "", "root"], ["e", "y", "", "reply"]]
    assert (early["author"], early["author_role"]) == ("unknown", "unknown")
    assert early["channel_id"] == "chan" and early["reply_to_event_id"] == "y"
    assert late["mentioned_pubkeys"] == [USER, WORKER]
    assert (late["author"], late["author_role"]) == ("lead-1", "orchestrator")
    assert broken == {
        "id": "", "kind": None, "created_at": None, "pubkey": "", "author": "unknown", "author_role": "unknown",
        "content": "", "tags": [], "channel_id": None, "reply_to_event_id": None, "mentioned_pubkeys": [],
    }
    assert evidence["identities"] == {
        "John Vincent Doe": {"role": "user", "pubkey": USER},
        "lead-1": {"role": "orchestrator", "pubkey": LEAD},
        "worker-1": {"role": "worker", "pubkey": WORKER},
    }
    # a row stored before identity ids existed reads its name as its identity id
    assert evidence["directory"] == [
        {"identity_id": "benchmark-bot-01", "name": "benchmark-bot-01", "role": "bot", "pubkey": "f" * 64, "about": ""}
    ]
    assert evidence["scripted_events"] == []
    assert (evidence["message_count"], evidence["truncated"], evidence["task_name"]) == (3, False, "user-mention")


def test_directory_rows_scripted_events_and_directory_authors() -> None:
    """Block's evidence v1 additions (block/buzz #6448): directory rows carry identity_id and about,
    scripted events are listed, and a directory identity's own message names it as author."""
    twins = (DirectoryIdentity("Taylor Morgan Lee", "user", "1" * 64, "taylor-release-captain", "Routing ORCHID-72"),
             DirectoryIdentity("Taylor Morgan Lee", "user", "2" * 64, "taylor-observer", "Routing COBALT-19"),
             DirectoryIdentity("Ledger Scout", "bot", "3" * 64))
    handle = TenantHandle(**{**HANDLE.__dict__, "directory": twins, "scripted_actors": ("Ledger Scout",)})
    report = {"id": "r1", "pubkey": "3" * 64, "created_at": 11, "kind": 9, "content": "North is 17",
              "tags": [["h", "chan"], ["e", "root", "", "reply"], ["p", LEAD]]}
    scripted = [{"label": "ledger-report", "event_id": "r1", "actor": "Ledger Scout", "reply_to_event_id": "root"}]
    evidence = build_evidence(handle, [report], task_event_id="root", completion_message_id=None,
                              scripted_events=scripted)
    assert [(d["identity_id"], d["name"], d["about"]) for d in evidence["directory"]] == [
        ("taylor-release-captain", "Taylor Morgan Lee", "Routing ORCHID-72"),
        ("taylor-observer", "Taylor Morgan Lee", "Routing COBALT-19"),
        ("Ledger Scout", "Ledger Scout", ""),
    ]
    assert evidence["scripted_events"] == scripted
    assert (evidence["messages"][0]["author"], evidence["messages"][0]["author_role"]) == ("Ledger Scout", "bot")
    assert "Ledger Scout" not in evidence["identities"]  # identities stay the trial's user and seats


def test_truncated_counts_raw_messages_against_the_limit() -> None:
    raw = [{"id": str(i), "created_at": i, "kind": 9, "pubkey": USER, "content": "", "tags": []} for i in range(5)]
    assert build_evidence(HANDLE, raw, task_event_id=None, completion_message_id=None,
                          transcript_limit=5)["truncated"] is True
    assert build_evidence(HANDLE, raw, task_event_id=None, completion_message_id=None,
                          transcript_limit=6)["truncated"] is False


def test_serialisation_and_transcript() -> None:
    evidence = build_evidence(HANDLE, [], task_event_id=None, completion_message_id=None)
    text = dumps_evidence(evidence)
    assert text == json.dumps(evidence, indent=2, sort_keys=True) + "\n"
    assert text.startswith('{\n  "completion_message_id": null,')
    assert transcript_from_evidence(evidence) == {"channel_id": "chan", "message_count": 0, "truncated": False,
                                                  "messages": []}


def test_channel_summary_reads_39000_tags() -> None:
    event = {"created_at": 1, "tags": [["d", "c1"], ["name", "fix-pr-1234"], ["t", "stream"], ["private"],
                                       ["about", "a"], ["ttl", "3600"], ["archived", "true"]]}
    assert channel_summary("c1", event) == {
        "channel_id": "c1", "name": "fix-pr-1234", "channel_type": "stream", "visibility": "private",
        "archived": True, "about": "a", "topic": None, "purpose": None, "ttl_seconds": 3600,
    }
    open_event = {"created_at": 1, "tags": [["d", "c2"], ["name", "x"], ["t", "forum"], ["public"]]}
    summary = channel_summary("c2", open_event)
    assert (summary["visibility"], summary["archived"], summary["ttl_seconds"]) == ("open", False, None)
