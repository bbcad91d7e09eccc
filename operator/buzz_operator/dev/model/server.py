"""The HTTP server of the scripted model: routes, errors, and one log line per request.

Standard library only (http.server), so it runs from the operator image, from a zipapp beside
the stand-in stack, or in a test process. Every request it cannot answer faithfully gets a 4xx
whose message names what was unsupported; nothing falls back to a default answer.
"""

from __future__ import annotations

import itertools
import json
import sys
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from buzz_operator.dev.model import anthropic_messages, openai_chat
from buzz_operator.dev.model.conversation import Turn, UnsupportedRequest
from buzz_operator.dev.model.event import NoEvent, delivered
from buzz_operator.dev.model.script import POLICIES, answer

MAX_BODY_BYTES = 16 * 1024 * 1024
_ids = itertools.count(1)
_ids_lock = threading.Lock()


def _next_id(prefix: str) -> str:
    with _ids_lock:
        return f"{prefix}-scripted-{next(_ids):06d}"


class _Refusal(Exception):
    def __init__(self, status: int, kind: str, message: str) -> None:
        super().__init__(message)
        self.status, self.kind, self.message = status, kind, message


def _dialect(path: str) -> str:
    route = path.split("?", 1)[0].rstrip("/")
    if route.endswith("/v1/messages"):
        return "anthropic"
    if route.endswith("/chat/completions"):
        return "openai"
    if route.endswith("/responses"):
        raise _Refusal(404, "not_found_error", f"POST {route}: the OpenAI Responses API is not supported by "
                       "the scripted model; use Chat Completions (OPENAI_COMPAT_API=chat)")
    raise _Refusal(404, "not_found_error", f"POST {route}: unknown route; the scripted model serves "
                   "{base}/chat/completions (OpenAI) and {base}/v1/messages (Anthropic)")


def _error_body(dialect: str, kind: str, message: str) -> dict[str, Any]:
    if dialect == "anthropic":
        return {"type": "error", "error": {"type": kind, "message": message}}
    return {"error": {"message": message, "type": kind, "param": None, "code": None}}


class Handler(BaseHTTPRequestHandler):
    server_version = "buzz-scripted-model/1"
    protocol_version = "HTTP/1.1"
    answerer: Callable[[Turn], Any] = staticmethod(answer)

    def log_message(self, format: str, *args: Any) -> None:
        """Access lines go through `_log` (JSON, no headers: an API key never reaches a log)."""

    def _log(self, **fields: Any) -> None:
        sys.stdout.write(json.dumps({"path": self.path, **fields}, sort_keys=True) + "\n")
        sys.stdout.flush()

    def _send_json(self, status: int, body: dict[str, Any]) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        route = self.path.split("?", 1)[0].rstrip("/")
        if route in ("/healthz", "/readyz"):
            self._send_json(200, {"ok": True})
        elif route.endswith("/models"):
            self._send_json(200, {"object": "list", "data": [
                {"id": f"scripted/{name}", "object": "model", "owned_by": "buzz-operator"} for name in sorted(POLICIES)]})
        else:
            self._send_json(404, _error_body("openai", "not_found_error", f"GET {route}: unknown route"))

    def do_POST(self) -> None:
        dialect = "openai"
        try:
            dialect = _dialect(self.path)
            length = int(self.headers.get("Content-Length") or 0)
            if length <= 0 or length > MAX_BODY_BYTES:
                raise _Refusal(400, "invalid_request_error", f"body: Content-Length {length} is outside 1..{MAX_BODY_BYTES}")
            raw = self.rfile.read(length)
            try:
                body = json.loads(raw)
            except json.JSONDecodeError as exc:
                raise _Refusal(400, "invalid_request_error", f"body: not JSON ({exc})") from exc
            if not isinstance(body, dict):
                raise _Refusal(400, "invalid_request_error", "body: a JSON object is required")
            self._answer(dialect, body, len(raw))
        except _Refusal as refusal:
            self._log(dialect=dialect, status=refusal.status, error=refusal.message)
            self._send_json(refusal.status, _error_body(dialect, refusal.kind, refusal.message))
        except (UnsupportedRequest, NoEvent) as exc:
            self._log(dialect=dialect, status=400, error=str(exc))
            self._send_json(400, _error_body(dialect, "invalid_request_error", str(exc)))

    def _answer(self, dialect: str, body: dict[str, Any], raw_chars: int) -> None:
        module = anthropic_messages if dialect == "anthropic" else openai_chat
        if dialect == "anthropic" and body.get("stream"):
            raise UnsupportedRequest("stream: streaming is not supported in the Anthropic dialect")
        turn = module.parse(body, raw_chars)
        reply = self.answerer(turn)
        response_id = _next_id("msg" if dialect == "anthropic" else "chatcmpl")
        result = module.respond(turn, reply, response_id)
        usage = result["usage"]
        # the channel names the trial, so a test can set each trial's receipts against what was billed for it
        channels = sorted({e.channel_id for e in delivered(turn.prompts)})
        self._log(dialect=dialect, status=200, model=turn.model, calls=[c.call_id for c in reply.calls],
                  usage=usage, stream=bool(body.get("stream")), channels=channels)
        if dialect == "openai" and body.get("stream"):
            include = bool((body.get("stream_options") or {}).get("include_usage"))
            self._stream(openai_chat.stream_chunks(turn, reply, response_id, include))
        else:
            self._send_json(200, result)

    def _stream(self, chunks: list[dict[str, Any]]) -> None:
        payload = "".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n"
        data = payload.encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def serve(host: str, port: int) -> ThreadingHTTPServer:
    server = ThreadingHTTPServer((host, port), Handler)
    server.daemon_threads = True
    return server
