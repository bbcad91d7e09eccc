"""The request bodies the stand-in sends are buzz-agent's (llm.rs openai_body / anthropic_body), and
the usage it reads from a response is what buzz-agent reads: the scripted model's own parsers take
the bodies as they take the real agent's, and the counts come back unchanged."""

from __future__ import annotations

import json

import pytest
from buzz_operator.dev.agent.endpoint import EndpointSettings
from buzz_operator.dev.agent.llm import (
    AssistantItem,
    ToolCall,
    ToolResultItem,
    ToolSpec,
    Usage,
    UserItem,
    anthropic_body,
    openai_body,
    parse_anthropic,
    parse_openai,
)
from buzz_operator.dev.model import anthropic_messages, openai_chat

SHELL = ToolSpec("dev__shell", "run", {"type": "object", "properties": {"command": {"type": "string"}}})
HISTORY = [
    UserItem("[Buzz event: @mention]\nEvent ID: " + "e" * 64),
    AssistantItem("", (ToolCall("call_read_0_x", "dev__shell", {"command": "cat -- /etc/x"}),)),
    ToolResultItem("call_read_0_x", '{"exit_code": 0, "stdout": "hi"}'),
]


def _settings(provider: str = "openai") -> EndpointSettings:
    return EndpointSettings(provider=provider, model="scripted/oracle", base_url="http://model:8091/v1",
                            api_key="k", anthropic_version="2023-06-01", max_output_tokens=100, max_rounds=0,
                            timeout_s=5.0)


def test_chat_completions_body_is_buzz_agents() -> None:
    body = openai_body(_settings(), "persona", HISTORY, [SHELL], "medium")
    assert body["model"] == "scripted/oracle" and body["stream"] is False
    assert body["max_completion_tokens"] == 100 and body["reasoning_effort"] == "medium"
    assert body["tool_choice"] == "auto"
    assert body["tools"] == [{"type": "function", "function": {"name": "dev__shell", "description": "run",
                                                               "parameters": SHELL.schema}}]
    system, user, assistant, tool = body["messages"]
    assert system == {"role": "system", "content": "persona"} and user["role"] == "user"
    assert assistant["content"] == "" and assistant["tool_calls"][0]["function"]["arguments"] == (
        '{"command": "cat -- /etc/x"}')
    assert tool == {"role": "tool", "tool_call_id": "call_read_0_x", "content": '{"exit_code": 0, "stdout": "hi"}'}
    turn = openai_chat.parse(body, len(json.dumps(body)))
    assert turn.tools == ["dev__shell"] and turn.calls[0].arguments == {"command": "cat -- /etc/x"}
    assert turn.result("call_read_0_x") == '{"exit_code": 0, "stdout": "hi"}'


def test_messages_body_is_buzz_agents() -> None:
    history = [*HISTORY, ToolResultItem("call_read_0_y", "second", is_error=True)]
    body = anthropic_body(_settings("anthropic"), "persona", history, [SHELL])
    assert body["system"] == "persona" and body["max_tokens"] == 100
    assert body["tools"] == [{"name": "dev__shell", "description": "run", "input_schema": SHELL.schema}]
    _, assistant, results = body["messages"]
    assert assistant == {"role": "assistant", "content": [
        {"type": "tool_use", "id": "call_read_0_x", "name": "dev__shell", "input": {"command": "cat -- /etc/x"}}]}
    # both results in one user message, as Anthropic requires of the answers to one assistant turn
    assert [b["tool_use_id"] for b in results["content"]] == ["call_read_0_x", "call_read_0_y"]
    assert results["content"][1]["is_error"] is True
    turn = anthropic_messages.parse(body, 10)
    assert turn.result("call_read_0_y") == "second" and turn.prompt.startswith("[Buzz event")


@pytest.mark.parametrize(("usage", "expected"), [
    ({"prompt_tokens": 120, "completion_tokens": 7, "prompt_tokens_details": {"cached_tokens": 100}},
     Usage(120, 7, 100)),
    # Databricks spells the cache split flat beside an already inclusive prompt_tokens: never summed
    ({"prompt_tokens": 120, "completion_tokens": 7, "cache_read_input_tokens": 90}, Usage(120, 7, 90)),
    ({"prompt_tokens": 5, "completion_tokens": 1}, Usage(5, 1, 0)),
])
def test_chat_usage_is_read_as_buzz_agent_reads_it(usage: dict[str, object], expected: Usage) -> None:
    reply = parse_openai({"choices": [{"message": {"role": "assistant", "content": "Done."},
                                       "finish_reason": "stop"}], "usage": usage})
    assert reply.usage == expected and reply.text == "Done." and reply.calls == ()


def test_messages_usage_adds_the_cache_fields_back_into_input() -> None:
    reply = parse_anthropic({"content": [{"type": "text", "text": "ok"},
                                         {"type": "tool_use", "id": "t1", "name": "dev__shell", "input": {"command": "ls"}}],
                             "stop_reason": "tool_use",
                             "usage": {"input_tokens": 10, "output_tokens": 3, "cache_read_input_tokens": 50,
                                       "cache_creation_input_tokens": 5}})
    assert reply.usage == Usage(65, 3, 50)
    assert reply.calls == (ToolCall("t1", "dev__shell", {"command": "ls"}),)


def test_malformed_arguments_become_a_call_that_reports_them() -> None:
    reply = parse_openai({"choices": [{"message": {"tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "dev__shell", "arguments": "{not json"}}]}}]})
    assert reply.usage is None  # no usage reported: nothing is billed, nothing invented
    assert reply.calls[0].bad_arguments is not None and "not JSON" in reply.calls[0].bad_arguments
