"""The committed fixture JSON documents the evidence format; it must be what the cases build."""

from __future__ import annotations

import json

from tests.unit.tasks.evidence_builder import Case
from tests.unit.tasks.fixture_files import CASE_MODULES, expected_files, fixtures_dir

MESSAGE_KEYS = {
    "id",
    "kind",
    "created_at",
    "pubkey",
    "author",
    "author_role",
    "content",
    "tags",
    "channel_id",
    "reply_to_event_id",
    "mentioned_pubkeys",
}
TOP_LEVEL_KEYS = {
    "schema_version",
    "trial",
    "task_event_id",
    "completion_message_id",
    "identities",
    "directory",
    "scripted_events",
    "task_name",
    "observed_channels",
    "message_count",
    "truncated",
    "messages",
}
DIRECTORY_KEYS = {"identity_id", "name", "role", "pubkey", "about"}
SCRIPTED_EVENT_KEYS = {"label", "event_id", "actor", "reply_to_event_id"}


def test_committed_fixtures_match_the_cases() -> None:
    stale = [
        str(path) for path, text in expected_files().items() if not path.is_file() or path.read_text() != text
    ]
    assert not stale, "regenerate with `.venv/bin/python -m tests.unit.tasks.fixture_files`: " + ", ".join(
        stale
    )


def test_no_orphan_fixture_files() -> None:
    expected = set(expected_files())
    committed = {path for module in CASE_MODULES for path in fixtures_dir(module.TASK).iterdir()}
    assert committed == expected


def test_fixtures_have_the_v1_shape() -> None:
    for module in CASE_MODULES:
        case: Case
        for case in module.CASES:
            evidence = json.loads((fixtures_dir(module.TASK) / f"{case.name}.json").read_text())
            assert set(evidence) == TOP_LEVEL_KEYS, case.name
            assert evidence["schema_version"] == 1
            assert evidence["task_name"] == module.TASK
            assert evidence["message_count"] == len(evidence["messages"])
            for message in evidence["messages"]:
                assert set(message) == MESSAGE_KEYS, case.name
                h_tags = [tag[1] for tag in message["tags"] if tag[0] == "h"]
                assert message["channel_id"] == (h_tags[0] if h_tags else None)
                assert message["mentioned_pubkeys"] == [tag[1] for tag in message["tags"] if tag[0] == "p"]
            created = [m["created_at"] for m in evidence["messages"]]
            assert created == sorted(created)
            for row in evidence["directory"]:
                assert set(row) == DIRECTORY_KEYS, case.name
            for event in evidence["scripted_events"]:
                assert set(event) == SCRIPTED_EVENT_KEYS, case.name
                assert event["actor"] == "user" or event["actor"] in {
                    row["identity_id"] for row in evidence["directory"]
                }, case.name
