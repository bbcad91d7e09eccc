"""The two wire formats buzz-agent speaks to a model endpoint, built and read the way it does
(crates/buzz-agent/src/llm.rs `openai_body`/`parse_openai`, `anthropic_body`/`parse_anthropic`),
and the POST itself. Standard library only: this runs on a task image's python3.

A conversation is kept in a dialect-neutral history (user prompts, assistant replies with their
tool calls, tool results), so a session's history is the same whichever dialect carries it.
"""

from __future__ import annotations

import asyncio
import json
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from typing import Any, Union

from .endpoint import EndpointSettings

RETRIES = 4  # attempts for a refused connection, 429 or 5xx; other 4xx are final at once
RETRY_BASE_S = 0.5
MAX_ERROR_CHARS = 2000


class EndpointError(RuntimeError):
    """The endpoint refused the request or could not be reached; the text names both."""


@dataclass(frozen=True)
class ToolCall:
    call_id: str
    name: str
    arguments: dict[str, Any]
    bad_arguments: str | None = None  # set when the model's arguments were not a JSON object


@dataclass(frozen=True)
class UserItem:
    text: str


@dataclass(frozen=True)
class AssistantItem:
    text: str
    calls: tuple[ToolCall, ...] = ()


@dataclass(frozen=True)
class ToolResultItem:
    call_id: str
    text: str
    is_error: bool = False


HistoryItem = Union[UserItem, AssistantItem, ToolResultItem]  # noqa: UP007 -- 3.9 (compat.py)


@dataclass(frozen=True)
class Usage:
    """One response's counts as buzz-agent reads them: input includes the cached part."""

    input_tokens: int
    output_tokens: int
    cached_tokens: int = 0


@dataclass(frozen=True)
class Reply:
    text: str
    calls: tuple[ToolCall, ...] = ()
    usage: Usage | None = None
    stop: str = ""


@dataclass(frozen=True)
class ToolSpec:
    name: str
    description: str
    schema: dict[str, Any] = field(default_factory=dict)


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


# -- OpenAI Chat Completions ------------------------------------------------------------------
def openai_body(settings: EndpointSettings, system: str, history: list[HistoryItem], tools: list[ToolSpec],
                effort: str | None) -> dict[str, Any]:
    messages: list[dict[str, Any]] = [{"role": "system", "content": system}]
    for item in history:
        if isinstance(item, UserItem):
            messages.append({"role": "user", "content": item.text})
        elif isinstance(item, AssistantItem):
            message: dict[str, Any] = {"role": "assistant", "content": item.text}
            if item.calls:
                message["tool_calls"] = [{"id": c.call_id, "type": "function",
                                          "function": {"name": c.name, "arguments": json.dumps(c.arguments)}}
                                         for c in item.calls]
            messages.append(message)
        else:
            messages.append({"role": "tool", "tool_call_id": item.call_id, "content": item.text})
    body: dict[str, Any] = {"model": settings.model, "stream": False,
                            "max_completion_tokens": settings.max_output_tokens, "messages": messages}
    if effort:
        body["reasoning_effort"] = effort
    if tools:
        body["tools"] = [{"type": "function", "function": {"name": t.name, "description": t.description,
                                                           "parameters": t.schema}} for t in tools]
        body["tool_choice"] = "auto"
    return body


def _openai_call(raw: dict[str, Any]) -> ToolCall:
    function = raw.get("function") or {}
    text = function.get("arguments") or "{}"
    try:
        arguments = json.loads(text) if isinstance(text, str) else text
    except ValueError as exc:
        return ToolCall(str(raw.get("id")), str(function.get("name")), {}, f"arguments are not JSON: {exc}")
    if not isinstance(arguments, dict):
        return ToolCall(str(raw.get("id")), str(function.get("name")), {}, "arguments are not a JSON object")
    return ToolCall(str(raw.get("id")), str(function.get("name")), arguments)


def parse_openai(body: dict[str, Any]) -> Reply:
    choices = body.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise EndpointError(f"the response has no choices: {json.dumps(body)[:MAX_ERROR_CHARS]}")
    message = choices[0].get("message") or {}
    content = message.get("content")
    if isinstance(content, list):
        content = "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    calls = tuple(_openai_call(c) for c in message.get("tool_calls") or [] if isinstance(c, dict))
    usage = body.get("usage")
    counted = None
    if isinstance(usage, dict) and "prompt_tokens" in usage:
        # prompt_tokens already includes the cached part; the cache split has two spellings
        details = usage.get("prompt_tokens_details") or {}
        cached = usage.get("cache_read_input_tokens", details.get("cached_tokens") if isinstance(details, dict) else 0)
        counted = Usage(_int(usage.get("prompt_tokens")), _int(usage.get("completion_tokens")), _int(cached))
    return Reply(content or "", calls, counted, str(choices[0].get("finish_reason") or ""))


# -- Anthropic Messages -----------------------------------------------------------------------
def anthropic_body(settings: EndpointSettings, system: str, history: list[HistoryItem],
                   tools: list[ToolSpec]) -> dict[str, Any]:
    messages: list[dict[str, Any]] = []
    pending: list[dict[str, Any]] = []

    def flush() -> None:
        if pending:
            messages.append({"role": "user", "content": list(pending)})
            pending.clear()

    for item in history:
        if isinstance(item, ToolResultItem):
            pending.append({"type": "tool_result", "tool_use_id": item.call_id,
                            "content": [{"type": "text", "text": item.text}], "is_error": item.is_error})
            continue
        flush()
        if isinstance(item, UserItem):
            messages.append({"role": "user", "content": [{"type": "text", "text": item.text}]})
        else:
            content: list[dict[str, Any]] = [{"type": "text", "text": item.text}] if item.text else []
            content += [{"type": "tool_use", "id": c.call_id, "name": c.name, "input": c.arguments}
                        for c in item.calls]
            if content:  # Anthropic rejects an empty assistant turn; buzz-agent skips it too
                messages.append({"role": "assistant", "content": content})
    flush()
    body: dict[str, Any] = {"model": settings.model, "max_tokens": settings.max_output_tokens,
                            "system": system, "messages": messages}
    if tools:
        body["tools"] = [{"name": t.name, "description": t.description, "input_schema": t.schema} for t in tools]
    return body


def parse_anthropic(body: dict[str, Any]) -> Reply:
    blocks = body.get("content")
    if not isinstance(blocks, list):
        raise EndpointError(f"the response has no content: {json.dumps(body)[:MAX_ERROR_CHARS]}")
    text = "".join(str(b.get("text", "")) for b in blocks if isinstance(b, dict) and b.get("type") == "text")
    calls = []
    for block in blocks:
        if isinstance(block, dict) and block.get("type") == "tool_use":
            arguments = block.get("input")
            calls.append(ToolCall(str(block.get("id")), str(block.get("name")), arguments)
                         if isinstance(arguments, dict) else
                         ToolCall(str(block.get("id")), str(block.get("name")), {}, "input is not a JSON object"))
    usage = body.get("usage")
    counted = None
    if isinstance(usage, dict) and "input_tokens" in usage:
        # input_tokens excludes the cache fields here, unlike OpenAI's prompt_tokens
        cached = _int(usage.get("cache_read_input_tokens"))
        counted = Usage(_int(usage.get("input_tokens")) + cached + _int(usage.get("cache_creation_input_tokens")),
                        _int(usage.get("output_tokens")), cached)
    return Reply(text, tuple(calls), counted, str(body.get("stop_reason") or ""))


# -- the POST ---------------------------------------------------------------------------------
def _error_message(raw: bytes) -> str:
    """The endpoint's own words: `error.message` in both dialects, else the body's start."""
    text = raw.decode("utf-8", errors="replace")
    try:
        body = json.loads(text)
    except ValueError:
        return text[:MAX_ERROR_CHARS]
    error = body.get("error") if isinstance(body, dict) else None
    if isinstance(error, dict) and isinstance(error.get("message"), str):
        return error["message"][:MAX_ERROR_CHARS]
    if isinstance(error, str):
        return error[:MAX_ERROR_CHARS]
    return text[:MAX_ERROR_CHARS]


def _post_once(settings: EndpointSettings, body: dict[str, Any]) -> dict[str, Any]:
    headers = {"Content-Type": "application/json", "Accept": "application/json"}
    if settings.provider == "anthropic":
        headers.update({"x-api-key": settings.api_key, "anthropic-version": settings.anthropic_version})
    else:
        headers["Authorization"] = f"Bearer {settings.api_key}"
    request = urllib.request.Request(settings.url, json.dumps(body).encode("utf-8"), headers, method="POST")
    with urllib.request.urlopen(request, timeout=settings.timeout_s) as response:
        answer = json.loads(response.read())
    if not isinstance(answer, dict):
        raise EndpointError(f"{settings.url} answered with a JSON {type(answer).__name__}, not an object")
    return answer


class _Retryable(Exception):
    pass


def _post(settings: EndpointSettings, body: dict[str, Any]) -> dict[str, Any]:
    try:
        return _post_once(settings, body)
    except urllib.error.HTTPError as exc:
        message = f"{settings.url} answered {exc.code}: {_error_message(exc.read())}"
        if exc.code == 429 or exc.code >= 500:
            raise _Retryable(message) from exc
        raise EndpointError(message) from exc
    except ValueError as exc:  # a 200 whose body is not JSON
        raise EndpointError(f"{settings.url} answered with a body that is not JSON: {exc}") from exc
    except (urllib.error.URLError, OSError) as exc:
        raise _Retryable(f"{settings.url} unreachable: {getattr(exc, 'reason', exc)}") from exc


async def complete(settings: EndpointSettings, body: dict[str, Any]) -> dict[str, Any]:
    """POST `body` and return the decoded answer; blocking I/O runs off the event loop so the
    relay session keeps reading while the model thinks."""
    for attempt in range(1, RETRIES + 1):
        try:
            return await asyncio.to_thread(_post, settings, body)
        except _Retryable as exc:
            if attempt == RETRIES:
                raise EndpointError(f"{exc} (after {RETRIES} attempts)") from exc
            await asyncio.sleep(RETRY_BASE_S * 2 ** (attempt - 1))
    raise AssertionError("unreachable")
