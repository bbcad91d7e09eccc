"""The Anthropic Messages dialect (`POST {base}/v1/messages`), as buzz-agent's
`provider=anthropic` speaks it: a top-level `system`, content blocks, `tool_use` answered by
`tool_result` blocks in the next user message."""

from __future__ import annotations

import json
from typing import Any

from buzz_operator.dev.model.conversation import Reply, ToolCall, Turn, UnsupportedRequest
from buzz_operator.dev.model.usage import tokens


def _blocks(content: Any, where: str) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    if isinstance(content, list) and all(isinstance(b, dict) for b in content):
        return content
    raise UnsupportedRequest(f"{where}: content must be a string or a list of blocks")


def _block_text(block: dict[str, Any], where: str) -> str:
    content = block.get("content", block.get("text", ""))
    if isinstance(content, str):
        return content
    texts = []
    for index, part in enumerate(_blocks(content, where)):
        if part.get("type") != "text":
            raise UnsupportedRequest(f"{where}[{index}]: block {part.get('type')!r} is not supported (text only)")
        texts.append(str(part.get("text", "")))
    return "".join(texts)


def parse(body: dict[str, Any], raw_chars: int) -> Turn:
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise UnsupportedRequest("messages: a non-empty list is required")
    if not isinstance(body.get("model"), str):
        raise UnsupportedRequest("model: a string is required")
    tools = []
    for index, tool in enumerate(body.get("tools") or []):
        if not isinstance(tool, dict) or "name" not in tool:
            raise UnsupportedRequest(f"tools[{index}]: a tool needs a name")
        tools.append(str(tool["name"]))

    prompts: list[str] = []
    turn = Turn(model=body["model"], tools=tools, request_chars=raw_chars, prompt="")
    for index, message in enumerate(messages):
        if not isinstance(message, dict):
            raise UnsupportedRequest(f"messages[{index}]: a message must be an object")
        blocks = _blocks(message.get("content"), f"messages[{index}].content")
        texts = [str(b.get("text", "")) for b in blocks if b.get("type") == "text"]
        if message.get("role") == "user" and texts and not any(b.get("type") == "tool_result" for b in blocks):
            prompts.append("\n".join(texts))
        for number, block in enumerate(blocks):
            where = f"messages[{index}].content[{number}]"
            if block.get("type") == "tool_use":
                turn.calls.append(ToolCall(str(block.get("id")), str(block.get("name")), dict(block.get("input") or {})))
            elif block.get("type") == "tool_result":
                turn.results[str(block.get("tool_use_id"))] = _block_text(block, where)
    if not prompts:
        raise UnsupportedRequest("messages: no user text message to answer")
    turn.prompt, turn.prompts = prompts[-1], prompts
    return turn


def respond(turn: Turn, reply: Reply, response_id: str) -> dict[str, Any]:
    content: list[dict[str, Any]] = []
    if reply.text:
        content.append({"type": "text", "text": reply.text})
    content += [{"type": "tool_use", "id": c.call_id, "name": c.name, "input": c.arguments} for c in reply.calls]
    return {
        "id": response_id,
        "type": "message",
        "role": "assistant",
        "model": turn.model,
        "content": content,
        "stop_reason": "tool_use" if reply.calls else "end_turn",
        "stop_sequence": None,
        "usage": {
            "input_tokens": tokens(turn.request_chars) + reply.extra_input_tokens,
            "output_tokens": tokens(len(json.dumps(content))) + reply.extra_output_tokens,
            "cache_read_input_tokens": 0,
            "cache_creation_input_tokens": 0,
        },
    }
