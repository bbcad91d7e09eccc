"""The shell tool the endpoint's calls run through: real `bash -c` children, buzz-dev-mcp's
envelope, its environment rules (the seat's Buzz identity in, model API keys out, the stack first
on PATH), and a timeout that takes the whole process group down."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from buzz_operator.dev.agent import shell
from buzz_operator.dev.agent.nostr import Keys, encode_nsec

SECRET = "03" * 32
AUTH_TAG = '["auth","' + "ab" * 32 + '","","' + "cd" * 64 + '"]'

pytestmark = pytest.mark.timeout(60)


def _env(tmp_path: Path) -> dict[str, str]:
    parent = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "OPENAI_COMPAT_API_KEY": "sk-secret",
              "NOSTR_PRIVATE_KEY": SECRET, "BUZZ_PRIVATE_KEY": SECRET, "UNRELATED": "x"}
    return shell.child_env(parent, bin_dir=str(tmp_path / "bin"), relay_url="ws://localhost:3600",
                           keys=Keys.from_text(SECRET), auth_tag=AUTH_TAG)


def test_children_get_the_mcp_environment_and_nothing_else(tmp_path: Path) -> None:
    env = _env(tmp_path)
    assert env["PATH"].split(os.pathsep)[0] == str(tmp_path / "bin")
    assert env["BUZZ_PRIVATE_KEY"] == encode_nsec(bytes.fromhex(SECRET))  # buzz-acp hands MCP the nsec
    assert env["BUZZ_RELAY_URL"] == "ws://localhost:3600" and env["BUZZ_AUTH_TAG"] == AUTH_TAG
    assert env["HOME"] == str(tmp_path)
    assert not {"OPENAI_COMPAT_API_KEY", "NOSTR_PRIVATE_KEY", "UNRELATED"} & set(env)


async def test_a_call_answers_with_buzz_dev_mcps_envelope(tmp_path: Path) -> None:
    (tmp_path / "bin").mkdir()
    text, is_error = await shell.run({"command": 'echo "$PWD"; echo oops >&2; exit 3'}, cwd=str(tmp_path),
                                     env=_env(tmp_path))
    result = json.loads(text)
    assert not is_error  # a failing command is a successful tool call, as in buzz-dev-mcp
    assert (result["exit_code"], result["stdout"], result["stderr"]) == (3, f"{tmp_path}\n", "oops\n")
    assert result["timed_out"] is False and result["stdout_truncated"] is False
    assert set(result) == {"exit_code", "stdout", "stderr", "timed_out", "duration_ms", "stdout_truncated",
                           "stderr_truncated", "stdout_artifact", "stderr_artifact", "notes"}
    assert text.startswith("{\n  ")  # pretty-printed, as serde_json::to_string_pretty writes it


async def test_workdir_and_bad_params(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    text, _ = await shell.run({"command": "pwd", "workdir": str(elsewhere)}, cwd=str(tmp_path), env=_env(tmp_path))
    assert json.loads(text)["stdout"] == f"{elsewhere}\n"
    assert (await shell.run({"command": "pwd", "workdir": str(tmp_path / "nope")}, cwd=str(tmp_path),
                            env=_env(tmp_path)))[1] is True
    assert (await shell.run({}, cwd=str(tmp_path), env=_env(tmp_path))) == (
        "invalid params: `command` must be a non-empty string", True)


async def test_long_output_keeps_its_tail(tmp_path: Path) -> None:
    text, _ = await shell.run({"command": "seq 1 30000"}, cwd=str(tmp_path), env=_env(tmp_path))
    result = json.loads(text)
    assert result["stdout_truncated"] is True and result["stdout"].endswith("29999\n30000\n")
    assert len(result["stdout"]) < shell.MAX_BYTES


async def test_a_timeout_kills_the_process_group(tmp_path: Path) -> None:
    marker = tmp_path / "survived"
    command = f"(sleep 5; touch {marker}) & sleep 30"
    text, _ = await shell.run({"command": command, "timeout_ms": 300}, cwd=str(tmp_path), env=_env(tmp_path))
    result = json.loads(text)
    assert result["timed_out"] is True and result["exit_code"] == 124
    assert "process group killed" in result["notes"][0]
    # the backgrounded grandchild was in the group too: it is gone, not merely orphaned
    assert not any(f"touch {marker}" in args for args in _command_lines())


def _command_lines() -> list[str]:
    lines = []
    for proc in Path("/proc").iterdir():
        try:
            lines.append((proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace"))
        except OSError:
            continue
    return lines
