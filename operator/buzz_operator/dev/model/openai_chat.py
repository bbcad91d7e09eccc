"""The OpenAI Chat Completions dialect (`POST {base}/chat/completions`), as buzz-agent's
`provider=openai` speaks it: non-streaming by default, `tools` as functions, tool results as
`role: tool` messages; `stream: true` is answered as server-sent chunks."""

from __future__ import annotations

import json
import time
from typing import Any

from buzz_operator.dev.model.conversation import Reply, ToolCall, Turn, UnsupportedRequest
from buzz_operator.dev.model.usage import tokens


def _text(content: Any, where: str) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for index, part in enumerate(content):
            if not isinstance(part, dict) or part.get("type") != "text":
                kind = part.get("type") if isinstance(part, dict) else type(part).__name__
                raise UnsupportedRequest(f"{where}[{index}]: content part {kind!r} is not supported (text only)")
            parts.append(str(part.get("text", "")))
        return "".join(parts)
    raise UnsupportedRequest(f"{where}: content must be a string or a list of text parts")


def parse(body: dict[str, Any], raw_chars: int) -> Turn:
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise UnsupportedRequest("messages: a non-empty list is required")
    if not isinstance(body.get("model"), str):
        raise UnsupportedRequest("model: a string is required")
    tools = []
    for index, tool in enumerate(body.get("tools") or []):
        function = tool.get("function") if isinstance(tool, dict) else None
        if tool.get("type") != "function" or not isinstance(function, dict) or "name" not in function:
            raise UnsupportedRequest(f"tools[{index}]: only {{type: function, function: {{name, …}}}} is supported")
        tools.append(str(function["name"]))
    prompts = [_text(m.get("content"), f"messages[{i}].content") for i, m in enumerate(messages)
               if isinstance(m, dict) and m.get("role") == "user"]
    if not prompts:
        raise UnsupportedRequest("messages: no `user` message to answer")
    turn = Turn(model=body["model"], prompt=prompts[-1], prompts=prompts, tools=tools, request_chars=raw_chars)
    for index, message in enumerate(messages):
        role = message.get("role") if isinstance(message, dict) else None
        if role == "assistant":
            for call in message.get("tool_calls") or []:
                function = call.get("function") or {}
                try:
                    arguments = json.loads(function.get("arguments") or "{}")
                except json.JSONDecodeError as exc:
                    raise UnsupportedRequest(f"messages[{index}].tool_calls: arguments are not JSON: {exc}") from exc
                turn.calls.append(ToolCall(str(call.get("id")), str(function.get("name")), arguments))
        elif role == "tool":
            turn.results[str(message.get("tool_call_id"))] = _text(message.get("content"),
                                                                   f"messages[{index}].content")
        elif role not in ("user", "system", "developer"):
            raise UnsupportedRequest(f"messages[{index}].role: {role!r} is not supported")
    return turn


def _wire_calls(reply: Reply) -> list[dict[str, Any]]:
    return [{"id": c.call_id, "type": "function",
             "function": {"name": c.name, "arguments": json.dumps(c.arguments)}} for c in reply.calls]


def _usage(turn: Turn, reply: Reply, out_chars: int) -> dict[str, Any]:
    prompt = tokens(turn.request_chars) + reply.extra_input_tokens
    completion = tokens(out_chars) + reply.extra_output_tokens
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion,
            "prompt_tokens_details": {"cached_tokens": 0}}


def respond(turn: Turn, reply: Reply, response_id: str) -> dict[str, Any]:
    calls = _wire_calls(reply)
    message: dict[str, Any] = {"role": "assistant", "content": reply.text or None}
    if calls:
        message["tool_calls"] = calls
    out_chars = len(json.dumps(message))
    return {
        "id": response_id,
        "object": "chat.completion",
        "created": int(time.time()),
        "model": turn.model,
        "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if calls else "stop",
                     "logprobs": None}],
        "usage": _usage(turn, reply, out_chars),
    }


def stream_chunks(turn: Turn, reply: Reply, response_id: str, include_usage: bool) -> list[dict[str, Any]]:
    """The same answer as `chat.completion.chunk` events: one delta, the finish, then usage."""
    whole = respond(turn, reply, response_id)
    choice = whole["choices"][0]
    delta: dict[str, Any] = {"role": "assistant", "content": reply.text or ""}
    if "tool_calls" in choice["message"]:
        delta["tool_calls"] = [{"index": i, **call} for i, call in enumerate(choice["message"]["tool_calls"])]
    base = {"id": response_id, "object": "chat.completion.chunk", "created": whole["created"], "model": turn.model}
    chunks = [
        {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]},
        {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": choice["finish_reason"]}]},
    ]
    if include_usage:
        chunks.append({**base, "choices": [], "usage": whole["usage"]})
    return chunks
