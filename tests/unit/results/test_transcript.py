"""The channel as a thread: replies indented under their parent, mentions resolved to names."""

from __future__ import annotations

import json
from pathlib import Path

from buzz_operator.results import render_thread, thread

from tests.unit.results.sweep_builder import TrialPlan, evidence


def test_thread_nests_replies_and_names_mentions() -> None:
    document = evidence(TrialPlan("reply-to-thread", 1), "s")
    lines = thread(document)
    assert [(line.depth, line.author) for line in lines] == [
        (0, "user"),
        (1, "lead-1"),
        (2, "worker-1"),
        (1, "lead-1"),
    ]
    assert lines[1].mentions == ("worker-1",) and lines[1].content == "@worker-1 can you take this?"
    assert lines[0].when == "+00:00:00" and lines[2].when == "+00:00:10"


def test_render_is_readable_text() -> None:
    text = render_thread(evidence(TrialPlan("reply-to-thread", 1), "s"))
    assert text.splitlines()[:3] == [
        "# reply-to-thread 5c4feb67-fc30-4637-88c4-5a71c9b3c579",
        "[+00:00:00] user (user) → @lead-1",
        "  @lead-1 please write hello.txt",
    ]
    assert "        ↳ [+00:00:10] worker-1 (worker) → @lead-1" in text.splitlines()


def test_transcript_json_without_identities_still_names_authors() -> None:
    document = evidence(TrialPlan("t", 1), "s")
    transcript = {"channel_id": "c", "messages": document["messages"], "message_count": 4, "truncated": True}
    text = render_thread(transcript)
    assert "@worker-1 can you take this?" in text and text.rstrip().endswith(
        "(transcript truncated at the export limit)"
    )


def test_orphan_replies_and_unknown_pubkeys() -> None:
    document = {
        "messages": [
            {"id": "x", "author": "unknown", "pubkey": "ee" * 32, "content": "hi " + "ff" * 32,
             "reply_to_event_id": "gone", "mentioned_pubkeys": ["ff" * 32], "created_at": None},
        ]
    }  # fmt: skip
    (line,) = thread(document)
    assert line.depth == 0 and line.when == "--:--:--" and line.mentions == ("ffffffff…",)
    assert line.content == "hi " + "ff" * 32


def test_real_demo_bundle_if_present() -> None:
    # the shape the operator writes: transcript.json from a live demo bundle, when one is on this machine
    for path in sorted(Path("/var/lib/buzz-operator/bundles").glob("*/*/agent/buzz/buzz-evidence.json"))[:3]:
        text = render_thread(json.loads(path.read_text()))
        assert text.startswith("# ") and "(user)" in text


def test_npub_mentions_in_text_become_names() -> None:
    from buzz_operator.relay.bech32 import encode_npub

    known, stranger = encode_npub("dd" * 32), encode_npub("ab" * 32)
    broken = known[:-1] + ("q" if known[-1] != "q" else "p")  # checksum no longer matches
    document = evidence(TrialPlan("t", 1), "s")
    document["messages"][0]["content"] = f"ask nostr:{known}, not {stranger}; also {broken}"
    line = thread(document)[0]
    assert line.content == f"ask @John Vincent Doe, not {stranger}; also {broken}"
