"""The agent's shell tool, as buzz-dev-mcp serves it (crates/buzz-dev-mcp/src/shell.rs): each call
is a fresh `bash -c` in the agent's working directory, and the model is handed the same pretty JSON
envelope (exit code, stdout, stderr, truncation notes) the real tool returns.

A child sees what buzz-agent passes its MCP servers after clearing their environment
(crates/buzz-agent/src/mcp.rs PASSTHROUGH_ENV) plus buzz-acp's MCP env — the relay URL, the seat's
key as nsec and its NIP-OA tag — with the stack's bin directory first on PATH, where `buzz` is the
stack's CLI. Model API keys are not among them, as in the real stack.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import signal
import time
from collections.abc import Mapping
from typing import Any

from .compat import AsyncTimeout
from .nostr import Keys, encode_nsec

TOOL_NAME = "dev__shell"  # buzz-agent names a tool `<server>__<tool>`; the server is buzz-dev-mcp's stem
DESCRIPTION = ("Run a shell command (bash). Ephemeral process per call. Output tail-truncated to ~8KB for "
               "the LLM. timeout_ms defaults to 120000 (2 min) if omitted; capped at 600000 (10 min). On PATH: "
               "buzz (Buzz relay CLI — run buzz --help for commands).")
SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "command": {"type": "string"},
        "workdir": {"type": "string"},
        "timeout_ms": {"type": "integer", "description": "Defaults to 120000 ms (2 min); capped at 600000 ms."},
    },
    "required": ["command"],
}
DEFAULT_TIMEOUT_MS = 120_000
MAX_TIMEOUT_MS = 600_000
MAX_BYTES = 50 * 1024  # beyond this (or MAX_LINES) only the tail is shown, as buzz-dev-mcp does
MAX_LINES = 2000
TAIL_BYTES = 8 * 1024

PASSTHROUGH_ENV = (
    "PATH", "HOME", "TERM", "LANG", "LC_ALL", "TMPDIR", "XDG_CONFIG_HOME",
    "SSH_AUTH_SOCK", "SSH_AGENT_PID", "GIT_ASKPASS", "GIT_SSH_COMMAND", "GIT_CONFIG_GLOBAL",
    "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "no_proxy", "all_proxy",
    "SSL_CERT_FILE", "SSL_CERT_DIR",
    "BUZZ_PRIVATE_KEY", "BUZZ_RELAY_URL", "BUZZ_AUTH_TAG", "BUZZ_ACP_DISPLAY_NAME",
)


def child_env(parent: Mapping[str, str], *, bin_dir: str, relay_url: str, keys: Keys,
              auth_tag: str | None) -> dict[str, str]:
    env = {name: parent[name] for name in PASSTHROUGH_ENV if name in parent}
    env["BUZZ_RELAY_URL"] = relay_url
    env["BUZZ_PRIVATE_KEY"] = encode_nsec(keys.secret)
    if auth_tag:
        env["BUZZ_AUTH_TAG"] = auth_tag
    env["PATH"] = os.pathsep.join(p for p in (bin_dir, parent.get("PATH", os.defpath)) if p)
    return env


def _shown(data: bytes) -> tuple[str, bool]:
    text = data.decode("utf-8", errors="replace")
    if len(data) <= MAX_BYTES and data.count(b"\n") <= MAX_LINES:
        return text, False
    tail = data[-TAIL_BYTES:].decode("utf-8", errors="ignore")
    return f"[output truncated: {len(data)} bytes, showing the last {TAIL_BYTES}]\n{tail}", True


def envelope(exit_code: int, stdout: bytes, stderr: bytes, *, timed_out: bool, duration_ms: int,
             notes: list[str]) -> str:
    out, out_cut = _shown(stdout)
    err, err_cut = _shown(stderr)
    return json.dumps({
        "exit_code": exit_code, "stdout": out, "stderr": err, "timed_out": timed_out,
        "duration_ms": duration_ms, "stdout_truncated": out_cut, "stderr_truncated": err_cut,
        "stdout_artifact": None, "stderr_artifact": None, "notes": notes,
    }, indent=2, ensure_ascii=False)


def _prepare(arguments: Mapping[str, Any], cwd: str, env: Mapping[str, str]) -> tuple[list[str], str, int] | str:
    """(argv, working directory, timeout in ms), or why the call is refused (invalid params)."""
    command = arguments.get("command")
    if not isinstance(command, str) or not command:
        return "invalid params: `command` must be a non-empty string"
    workdir = arguments.get("workdir") or cwd
    if not isinstance(workdir, str) or not os.path.isdir(workdir):
        return f"workdir does not exist or is not a directory: {workdir}"
    raw_timeout = arguments.get("timeout_ms")
    timeout_ms = raw_timeout if isinstance(raw_timeout, int) and raw_timeout > 0 else DEFAULT_TIMEOUT_MS
    shell = shutil.which("bash", path=env.get("PATH")) or "sh"
    return [shell, "-c", command], workdir, min(timeout_ms, MAX_TIMEOUT_MS)


async def run(arguments: Mapping[str, Any], *, cwd: str, env: Mapping[str, str]) -> tuple[str, bool]:
    """One shell call: (the text the model reads, whether it is an error result)."""
    prepared = _prepare(arguments, cwd, env)
    if isinstance(prepared, str):
        return prepared, True
    argv, workdir, timeout_ms = prepared
    started = time.monotonic()
    process = await asyncio.create_subprocess_exec(
        *argv, cwd=workdir, env=dict(env), stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, start_new_session=True)
    notes: list[str] = []
    timed_out = False
    try:
        stdout, stderr = await asyncio.wait_for(process.communicate(), timeout_ms / 1000)
    except AsyncTimeout:
        timed_out = True
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)  # the whole group, as buzz-dev-mcp's KillGroup
        stdout, stderr = await process.communicate()
        notes.append(f"timed out after {timeout_ms} ms; process group killed")
    code = process.returncode if process.returncode is not None and not timed_out else 124
    if code < 0:
        notes.append(f"killed by signal {-code}")
        code = -1
    duration_ms = int((time.monotonic() - started) * 1000)
    return envelope(code, stdout, stderr, timed_out=timed_out, duration_ms=duration_ms, notes=notes), False
