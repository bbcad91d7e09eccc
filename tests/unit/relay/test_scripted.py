"""Scripted messages (relay/scripted.py): content templating, tags as `buzz messages send` writes
them, and recognising messages already in the channel so a restarted run posts none twice."""

from __future__ import annotations

import pytest
from buzz_operator.dataset import ScriptedMessage
from buzz_operator.relay.client import RelayError
from buzz_operator.relay.scripted import content_of, find_posted, tags_of
from buzz_operator.relay.tenant_models import DirectoryIdentity, SeatIdentity, TenantHandle, UserIdentity

USER, LEAD, SCOUT = "a" * 64, "b" * 64, "c" * 64
HANDLE = TenantHandle(
    run_id="run", trial_id="trial", manifest_sha256="e" * 64, channel_id="chan", channel_name="t",
    relay_url="ws://localhost:3600", seats=(SeatIdentity("solo-1", "orchestrator", "lead", LEAD, "ep"),),
    user=UserIdentity("Nora Isabel Grant", USER, "task-user:interleaved-agent-reports"),
    directory=(DirectoryIdentity("Ledger Scout", "bot", SCOUT, "Ledger Scout"),),
    scripted_actors=("Ledger Scout",),
)
REPORT = ScriptedMessage(label="ledger-report", actor="Ledger Scout", content="@{orchestrator} North is 17 ({user})",
                         reply_to_task=True)
BETA = ScriptedMessage(label="beta-request", actor="user", content="@{orchestrator} BETA request")
QUIET = ScriptedMessage(label="quiet", actor="user", content="fyi", mention_orchestrator=False)


def test_content_and_tags_follow_the_cli() -> None:
    assert content_of(REPORT, HANDLE) == "@solo-1 North is 17 (Nora Isabel Grant)"
    assert tags_of(REPORT, HANDLE, "task") == [["h", "chan"], ["e", "task", "", "reply"], ["p", LEAD]]
    assert tags_of(BETA, HANDLE, "task") == [["h", "chan"], ["p", LEAD]]
    assert tags_of(QUIET, HANDLE, "task") == [["h", "chan"]]


def test_posted_messages_are_found_by_author_and_content() -> None:
    events = [
        {"id": "r1", "pubkey": SCOUT, "content": "@solo-1 North is 17 (Nora Isabel Grant)"},
        {"id": "x", "pubkey": USER, "content": "@solo-1 North is 17 (Nora Isabel Grant)"},  # same text, other author
    ]
    report, beta = find_posted(HANDLE, [REPORT, BETA], events, "task")
    assert report is not None and report.to_dict() == {
        "label": "ledger-report", "event_id": "r1", "actor": "Ledger Scout", "reply_to_event_id": "task"}
    assert beta is None


def test_an_actor_outside_the_tenant_is_an_error() -> None:
    stranger = ScriptedMessage(label="s", actor="Nobody", content="hi")
    with pytest.raises(RelayError, match="'Nobody' is not an identity of this tenant"):
        find_posted(HANDLE, [stranger], [], "task")
