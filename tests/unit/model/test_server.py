"""The scripted model over real HTTP on loopback: routes, refusals naming what was unsupported,
streaming, and no API key in its log."""

from __future__ import annotations

import json
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator

import pytest
from buzz_operator.dev.model.server import serve

from .prompts import buzz_prompt

pytestmark = pytest.mark.unit

SHELL = {"type": "function", "function": {"name": "dev__shell", "parameters": {}}}
TASK = "@lead What is the total for 3 licenses at $10 for 2 months?"


@pytest.fixture
def base() -> Iterator[str]:
    server = serve("127.0.0.1", 0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def _post(url: str, body: dict, key: str = "sk-test-secret") -> tuple[int, bytes]:
    request = urllib.request.Request(url, json.dumps(body).encode(), method="POST",
                                     headers={"Content-Type": "application/json", "Authorization": f"Bearer {key}"})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


def _chat(model: str = "standin/oracle", **extra) -> dict:
    return {"model": model, "messages": [{"role": "user", "content": buzz_prompt(TASK)}], "tools": [SHELL], **extra}


def test_chat_completions_answers_with_a_tool_call_and_usage(base: str, capsys) -> None:
    status, raw = _post(f"{base}/v1/chat/completions", _chat())
    assert status == 200
    body = json.loads(raw)
    assert body["object"] == "chat.completion"
    assert body["choices"][0]["finish_reason"] == "tool_calls"
    assert body["usage"]["prompt_tokens"] > 0 and body["usage"]["completion_tokens"] > 0
    assert "sk-test-secret" not in capsys.readouterr().out


def test_streaming_is_served_as_chunks_with_usage(base: str) -> None:
    status, raw = _post(f"{base}/v1/chat/completions", _chat(stream=True, stream_options={"include_usage": True}))
    assert status == 200
    events = [line[len("data: "):] for line in raw.decode().splitlines() if line.startswith("data: ")]
    assert events[-1] == "[DONE]"
    chunks = [json.loads(e) for e in events[:-1]]
    assert chunks[0]["choices"][0]["delta"]["tool_calls"][0]["index"] == 0
    assert chunks[-1]["usage"]["total_tokens"] > 0


def test_anthropic_route(base: str) -> None:
    body = {"model": "x/oracle", "max_tokens": 10, "tools": [{"name": "dev__shell", "input_schema": {}}],
            "messages": [{"role": "user", "content": buzz_prompt(TASK)}]}
    status, raw = _post(f"{base}/v1/messages", body)
    assert status == 200 and json.loads(raw)["stop_reason"] == "tool_use"


@pytest.mark.parametrize(("path", "body", "fragment"), [
    ("/v1/responses", _chat(), "Responses API is not supported"),
    ("/v1/embeddings", _chat(), "unknown route"),
    ("/v1/chat/completions", _chat("gpt-5"), "model: 'gpt-5' names no scripted policy"),
    ("/v1/chat/completions", {"model": "x/oracle", "messages": []}, "messages: a non-empty list is required"),
    ("/v1/chat/completions", {"model": "x/oracle", "messages": [{"role": "user", "content": "hi"}],
                              "tools": [SHELL]}, "no `Event ID:` block"),
])
def test_unsupported_requests_get_a_4xx_naming_what(base: str, path: str, body: dict, fragment: str) -> None:
    status, raw = _post(f"{base}{path}", body)
    assert 400 <= status < 500
    assert fragment in json.loads(raw)["error"]["message"]
