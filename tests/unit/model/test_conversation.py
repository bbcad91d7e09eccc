"""What the scripted model reads of a request in either dialect: every prompt of the session
(buzz-agent sends a session's whole history, so a later turn's request holds the earlier turns and
a steered event is one more user message), every tool call and result, and every Buzz event block
in buzz-acp's renderings — one event, a batch, a steer, a cancel-and-merge re-prompt."""

from __future__ import annotations

import json

import pytest
from buzz_operator.dev.agent.event_prompt import ChannelInfo, Profile, event_block, render_batch
from buzz_operator.dev.model import anthropic_messages, openai_chat
from buzz_operator.dev.model.event import NoEvent, delivered, events_in, last_event

from .prompts import CHANNEL, USER, buzz_prompt

pytestmark = pytest.mark.unit
ALPHA, BETA, GAMMA = "a1" * 32, "b2" * 32, "c3" * 32


def _event(ident: str, content: str, root: str | None = None) -> dict:
    tags = [["h", CHANNEL], ["p", "d" * 64]] + ([["e", root, "", "reply"]] if root else [])
    return {"id": ident, "pubkey": USER, "created_at": 1_796_126_400, "kind": 9, "content": content, "tags": tags}


def test_a_batch_is_read_back_event_by_event() -> None:
    events = [_event(ALPHA, "@solo-1 first"), _event(BETA, "@solo-1 two\n\nparagraphs\n- and a list"),
              _event(GAMMA, "@solo-1 third", root=ALPHA)]
    prompt = render_batch(CHANNEL, ChannelInfo("room"), events, {USER: Profile("Priya")}, ["@mention"] * 3)
    assert "[Buzz events — 3 events]\n\n--- Event 1 (@mention) ---\nEvent ID: " + ALPHA in prompt
    read = events_in(prompt)
    assert [(e.event_id, e.content, e.root_id, e.sender) for e in read] == [
        (ALPHA, "@solo-1 first", None, USER), (BETA, "@solo-1 two\n\nparagraphs\n- and a list", None, USER),
        (GAMMA, "@solo-1 third", ALPHA, USER)]
    assert last_event(prompt).event_id == GAMMA  # the batch's scope
    assert prompt.startswith("[Context]\nScope: thread\n")  # the context comes from the last event


def test_a_steer_and_a_cancel_merge_re_prompt_are_read_as_buzz_acp_frames_them() -> None:
    steer = ("[New message — arrived while you were working]\n\n[Buzz event: @mention]\n"
             + event_block(CHANNEL, None, _event(BETA, "@solo-1 BETA"), {}) + "\n\nNote: A new message arrived …")
    merged = ("[Context]\nScope: channel\n[What you were working on]\n\n--- Event 1 (@mention) ---\n"
              + event_block(CHANNEL, None, _event(ALPHA, "@solo-1 ALPHA"), {})
              + "\n[New messages — arrived while you were working — 2 events]\n\n--- Event 1 (@mention) ---\n"
              + event_block(CHANNEL, None, _event(BETA, "@solo-1 BETA"), {}) + "\n\n--- Event 2 (@mention) ---\n"
              + event_block(CHANNEL, None, _event(GAMMA, "@solo-1 GAMMA"), {}) + "\nNote: A new message …")
    assert [e.event_id for e in events_in(steer)] == [BETA] and events_in(steer)[0].content == "@solo-1 BETA"
    assert [e.content for e in events_in(merged)] == ["@solo-1 ALPHA", "@solo-1 BETA", "@solo-1 GAMMA"]
    # a session sees the same event more than once: the first delivery keeps its place
    assert [e.event_id for e in delivered([steer, merged])] == [BETA, ALPHA, GAMMA]
    with pytest.raises(NoEvent, match="no `Event ID:` block"):
        delivered(["[Context]\nnothing delivered"])


def test_openai_requests_carry_the_whole_session() -> None:
    first, second = buzz_prompt("@lead one", event_id=ALPHA), buzz_prompt("@lead two", event_id=BETA)
    body = {"model": "x/oracle", "tools": [{"type": "function", "function": {"name": "dev__shell"}}], "messages": [
        {"role": "system", "content": "sys"},
        {"role": "user", "content": first},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "dev__shell", "arguments": '{"command": "true"}'}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "out-1"},
        {"role": "assistant", "content": "Done."},
        {"role": "user", "content": [{"type": "text", "text": second}]},
    ]}
    turn = openai_chat.parse(body, len(json.dumps(body)))
    assert turn.prompts == [first, second] and turn.prompt == second
    assert [c.call_id for c in turn.calls] == ["c1"] and turn.results == {"c1": "out-1"}
    assert [e.event_id for e in delivered(turn.prompts)] == [ALPHA, BETA]


def test_anthropic_requests_carry_the_whole_session_and_a_steer_after_tool_results() -> None:
    first, steer = buzz_prompt("@lead one", event_id=ALPHA), buzz_prompt("@lead two", event_id=BETA)
    body = {"model": "x/oracle", "max_tokens": 10, "tools": [{"name": "dev__shell", "input_schema": {}}],
            "messages": [
                {"role": "user", "content": [{"type": "text", "text": first}]},
                {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "dev__shell",
                                                   "input": {"command": "true"}}]},
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1",
                                              "content": [{"type": "text", "text": "out-1"}]}]},
                {"role": "user", "content": [{"type": "text", "text": steer, "cache_control": {"type": "ephemeral"}}]},
            ]}
    turn = anthropic_messages.parse(body, 100)
    assert turn.prompts == [first, steer] and turn.results == {"t1": "out-1"}
    assert [c.call_id for c in turn.calls] == ["t1"]
