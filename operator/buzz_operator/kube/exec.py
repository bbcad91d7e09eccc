"""Run a shell script in a pod's container over the exec websocket: stdin in, stdout, stderr
and the exit code out, bounded by a timeout.

Two constraints of the API shape this:
- The v4 channel protocol, which the operator speaks because every release serves it, cannot
  close stdin (the close signal arrived with v5 in 1.29), so a command must never read stdin to
  EOF. Whatever is sent is prefixed by its length and read with `head -c N`, which stops at
  exactly N bytes.
- exec has no environment parameter, and a command line is visible in the API server's
  request log and in /proc/*/cmdline. So variables (seat keys, model API keys) travel on stdin
  as `export` lines the shell evals: they exist only in the shell's and its children's memory.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import shlex
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass

import aiohttp

from buzz_operator.kube.client import Kube

STDIN, STDOUT, STDERR, ERROR = 0, 1, 2, 3
CHUNK = 64 * 1024
DEFAULT_OUTPUT_LIMIT = 256 * 1024 * 1024
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


class ExecError(RuntimeError):
    """The exec stream itself failed (not the command): no status, refused upgrade, lost pod."""


@dataclass(frozen=True, repr=False)
class ExecResult:
    exit_code: int
    stdout: bytes
    stderr: bytes

    def __repr__(self) -> str:  # output may be large; say how large instead
        return f"ExecResult(exit_code={self.exit_code}, stdout={len(self.stdout)}B, stderr={len(self.stderr)}B)"

    @property
    def ok(self) -> bool:
        return self.exit_code == 0

    def text(self) -> str:
        return self.stdout.decode("utf-8", errors="replace")

    def last_line(self) -> str:
        lines = self.text().strip().splitlines()
        return lines[-1].strip() if lines else ""


def env_prelude(env: Mapping[str, str]) -> bytes:
    """`export NAME='value'` lines, quoted so eval reproduces each value byte for byte."""
    lines = []
    for name, value in env.items():
        if not _NAME.fullmatch(name):
            raise ValueError(f"not an environment variable name: {name!r}")
        lines.append(f"export {name}={shlex.quote(value)}\n")
    return "".join(lines).encode()


def wrap(script: str, prelude: bytes, payload: bytes | None) -> tuple[list[str], bytes]:
    """The argv to exec and the bytes to send: the env prelude, then the payload (if any),
    which the script reads as `$BUZZ_STDIN_BYTES` bytes (`head -c "$BUZZ_STDIN_BYTES"`)."""
    data = prelude + (payload or b"")
    parts = []
    if prelude:
        parts.append(f'eval "$(head -c {len(prelude)})" || exit 125')
    parts.append(f"BUZZ_STDIN_BYTES={len(payload or b'')}")
    parts.append(script)
    return ["sh", "-c", "\n".join(parts)], data


def exit_code_of(status: bytes) -> int:
    try:
        document = json.loads(status)
    except ValueError as exc:
        raise ExecError(f"malformed exec status: {status[:200]!r}") from exc
    if document.get("status") == "Success":
        return 0
    for cause in (document.get("details") or {}).get("causes") or []:
        if cause.get("reason") == "ExitCode":
            return int(cause["message"])
    raise ExecError(f"exec failed: {document.get('message') or document}")


async def _send(ws: aiohttp.ClientWebSocketResponse, data: bytes) -> None:
    for start in range(0, len(data), CHUNK):
        await ws.send_bytes(bytes([STDIN]) + data[start : start + CHUNK])


async def run(
    kube: Kube,
    namespace: str,
    pod: str,
    container: str,
    script: str,
    *,
    env: Mapping[str, str] | None = None,
    stdin: bytes | None = None,
    timeout_s: float,
    output_limit: int = DEFAULT_OUTPUT_LIMIT,
) -> ExecResult:
    """Run `script` with `sh -c` in the container; TimeoutError after `timeout_s` seconds.

    A timeout abandons the stream, not the process: scripts that must stop bound themselves
    (`timeout N cmd`), as the verifier step does.
    """
    argv, data = wrap(script, env_prelude(env or {}), stdin)
    async with asyncio.timeout(timeout_s):
        return await _run(kube, namespace, pod, container, argv, data, output_limit)


async def _run(
    kube: Kube, namespace: str, pod: str, container: str, argv: list[str], data: bytes, limit: int
) -> ExecResult:
    out, err = bytearray(), bytearray()
    status: bytes | None = None
    try:
        request = await kube.core_ws.connect_get_namespaced_pod_exec(
            pod, namespace, container=container, command=argv,
            stdin=True, stdout=True, stderr=True, tty=False, _preload_content=False,
        )
        async with request as ws:
            sender = asyncio.create_task(_send(ws, data))
            try:
                async for message in ws:
                    if message.type not in (aiohttp.WSMsgType.BINARY, aiohttp.WSMsgType.TEXT):
                        break
                    frame = message.data if isinstance(message.data, bytes) else message.data.encode()
                    if not frame:
                        continue
                    channel, body = frame[0], frame[1:]
                    if channel == STDOUT and len(out) < limit:
                        out += body[: limit - len(out)]
                    elif channel == STDERR and len(err) < limit:
                        err += body[: limit - len(err)]
                    elif channel == ERROR and body:
                        status = bytes(body)
            finally:
                # the command may exit before reading all of stdin; that is its business
                sender.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await sender
    except aiohttp.ClientError as exc:
        raise ExecError(f"exec stream to {namespace}/{pod}/{container} failed: {exc}") from exc
    if status is None:
        raise ExecError(f"exec stream to {namespace}/{pod}/{container} ended without a status")
    return ExecResult(exit_code_of(status), bytes(out), bytes(err))


async def follow(kube: Kube, namespace: str, pod: str, container: str, script: str) -> AsyncIterator[bytes]:
    """Run `script` (no stdin) and yield its stdout as it arrives — a watch on something the
    container writes, e.g. `tail -F` of a log. Ends when the command does; ExecError when the
    stream fails. The caller bounds it (cancel, `asyncio.timeout`)."""
    try:
        request = await kube.core_ws.connect_get_namespaced_pod_exec(
            pod, namespace, container=container, command=["sh", "-c", script],
            stdin=False, stdout=True, stderr=False, tty=False, _preload_content=False,
        )
        async with request as ws:
            async for message in ws:
                if message.type not in (aiohttp.WSMsgType.BINARY, aiohttp.WSMsgType.TEXT):
                    break
                frame = message.data if isinstance(message.data, bytes) else message.data.encode()
                if len(frame) > 1 and frame[0] == STDOUT:
                    yield frame[1:]
    except aiohttp.ClientError as exc:
        raise ExecError(f"exec stream to {namespace}/{pod}/{container} failed: {exc}") from exc
