"""The prompt the stand-in renders for a turn is buzz-acp's (queue.rs format_prompt): the scripted
model's own reader (buzz_operator.dev.model.event) takes every field it needs back out of it."""

from __future__ import annotations

import json

from buzz_operator.dev.agent.event_prompt import ChannelInfo, Profile, lookup, render, thread_of
from buzz_operator.dev.agent.nostr import encode_npub
from buzz_operator.dev.model.event import instruction_of, last_event

CHANNEL = "3f2b8c1e-4d5a-4b6c-8d7e-9f0a1b2c3d4e"
USER, AGENT, ROOT = "a" * 64, "b" * 64, "c" * 64


def _event(content: str, tags: list[list[str]], **extra: object) -> dict[str, object]:
    return {"id": "e" * 64, "pubkey": USER, "created_at": 1_796_126_400, "kind": 9, "content": content,
            "tags": tags, **extra}


def test_npub_is_nip19() -> None:
    # NIP-19's own example
    assert encode_npub("3bf0c63fcb93463407af97a5e5ee64fa883d107ef9e558472c4eb9aaaefa459d") == (
        "npub180cvv07tjdrrgpa0j7j7tmnyl2yr6yr7l8j4s3evf6u64th6gkwsyjh6w6")


def test_a_top_level_mention_renders_as_buzz_acp_does_and_reads_back() -> None:
    event = _event("@solo-1 What is the total?\nSecond line.", [["h", CHANNEL], ["p", AGENT]])
    profiles = {USER: Profile("benchmark-user"), AGENT: Profile("solo-1", is_agent=True)}
    prompt = render(CHANNEL, ChannelInfo("trial-1234", "the task room"), event, profiles)

    assert prompt.startswith("[Context]\nScope: channel\nChannel: trial-1234 (#" + CHANNEL + ")\n"
                             "Description: the task room\nHint: ")
    assert f"IMPORTANT: This is a new top-level message. For ordinary replies in this turn, use `--reply-to {'e' * 64}`" in prompt
    block = prompt[prompt.index("[Buzz event: @mention]\n"):].splitlines()
    assert block[1:6] == [f"Event ID: {'e' * 64}", f"Channel: trial-1234 (#{CHANNEL})", "Kind: 9",
                          f"From: benchmark-user (npub: {encode_npub(USER)}, hex: {USER})",
                          "Time: 2026-12-01T12:00:00+00:00"]
    assert f'Tags: [["h","{CHANNEL}"],["p","{AGENT}"]]' in block
    assert block[-1] == f"Parsed: mentions=[solo-1 ({AGENT})]"

    read = last_event(prompt)
    assert (read.event_id, read.channel_id, read.sender, read.root_id) == ("e" * 64, CHANNEL, USER, None)
    assert instruction_of(read.content) == "What is the total?\nSecond line."


def test_a_thread_reply_names_its_root_and_an_unknown_sender_by_npub() -> None:
    event = _event("@solo-1 and now?", [["h", CHANNEL], ["e", ROOT, "", "root"], ["e", "d" * 64, "", "reply"]])
    prompt = render(CHANNEL, None, event, {})
    assert f"Scope: thread\nChannel: {CHANNEL}\nThread root: {ROOT}\nParent: {'d' * 64}" in prompt
    assert f"use `--reply-to {ROOT}` on `buzz messages send`" in prompt  # human-facing: anchored at the root
    assert f"From: {encode_npub(USER)} (hex: {USER})" in prompt
    assert f"Parsed: parent={'d' * 64}, root={ROOT}" in prompt
    assert last_event(prompt).root_id == ROOT
    assert thread_of(_event("x", [["e", ROOT, "", "reply"]])) == (ROOT, ROOT)  # a direct reply to a root


def test_an_agent_to_agent_turn_gets_no_reply_anchor() -> None:
    profiles = {USER: Profile("lead-1", is_agent=True), AGENT: Profile("worker-1", is_agent=True)}
    prompt = render(CHANNEL, None, _event("@worker-1 compute", [["h", CHANNEL], ["p", AGENT]]), profiles)
    assert "IMPORTANT" not in prompt


def test_profiles_are_read_as_buzz_acp_reads_kind_0() -> None:
    events = [
        {"pubkey": USER, "created_at": 1, "content": json.dumps({"name": "old"}), "tags": []},
        {"pubkey": USER, "created_at": 2, "content": json.dumps({"name": "n", "display_name": "Shown"}),
         "tags": [["auth", "o", "", "s"]]},
        {"pubkey": AGENT, "created_at": 1, "content": "not json", "tags": []},
    ]
    assert lookup(events) == {USER: Profile("Shown", None, is_agent=True)}
