"""The stand-in's buzz-agent loop against the scripted model endpoint over real HTTP on loopback:
prompts in buzz-acp's format, shell calls run by real `bash -c` children with the stack's bin
directory first on PATH, and the session billed exactly what the endpoint reported. The relay is
the only stand-in here (the integration tier runs the same loop against the dev relay)."""

from __future__ import annotations

import io
import json
import os
import threading
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from buzz_operator.dev.agent import llm
from buzz_operator.dev.agent.acp import run_turn
from buzz_operator.dev.agent.config import ConfigError
from buzz_operator.dev.agent.endpoint import EndpointSettings
from buzz_operator.dev.agent.llm import EndpointError
from buzz_operator.dev.agent.model_loop import MAX_ROUNDS_OUTCOME, EndpointModel
from buzz_operator.dev.agent.nostr import Keys, encode_nsec
from buzz_operator.dev.agent.tracing import EnvFilter, Logger
from buzz_operator.dev.agent.turn import Turn
from buzz_operator.dev.agent.usage import Session
from buzz_operator.dev.model.server import serve

pytestmark = pytest.mark.timeout(60)

CHANNEL = "3f2b8c1e-4d5a-4b6c-8d7e-9f0a1b2c3d4e"
USER = "a" * 64
SECRET = "03" * 32
AGENT = Keys.from_text(SECRET).pubkey
LICENSES = "We are buying 12 seats of a tool that costs $37 per license per month. What is the total annual cost?"
# the CLI's stand-in for this tier: records how it was called, answers as `buzz messages send` does
FAKE_BUZZ = """#!/usr/bin/env python3
import json, os, sys
with open(os.path.join(os.environ["HOME"], "buzz-calls.jsonl"), "a") as log:
    log.write(json.dumps({"argv": sys.argv[1:], "key": os.environ.get("BUZZ_PRIVATE_KEY"),
                          "relay": os.environ.get("BUZZ_RELAY_URL"), "cwd": os.getcwd()}) + "\\n")
print(json.dumps({"event_id": "f" * 64, "accepted": True, "message": "", "mention_pubkeys": []}))
"""


@pytest.fixture
def endpoint() -> Iterator[str]:
    server = serve("127.0.0.1", 0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


class _Relay:
    async def query(self, filters: list[dict[str, Any]]) -> list[dict[str, Any]]:
        if filters[0]["kinds"] == [39000]:
            return [{"kind": 39000, "created_at": 1, "tags": [["d", CHANNEL], ["name", "trial-room"]], "content": ""}]
        return [{"pubkey": USER, "created_at": 1, "content": json.dumps({"name": "benchmark-user"}), "tags": []}]


class _Bridge:
    def __init__(self, home: Path) -> None:
        bin_dir = home / "bin"
        bin_dir.mkdir(parents=True)
        (bin_dir / "buzz").write_text(FAKE_BUZZ)
        (bin_dir / "buzz").chmod(0o755)
        self.config = SimpleNamespace(bin_dir=str(bin_dir), relay_url="ws://localhost:3600", keys=Keys.from_text(SECRET),
                                      system_prompt="You are `solo-1`.", max_turn_s=30.0)
        self.relay, self.pubkey = _Relay(), AGENT
        self.out = io.StringIO()
        self.log = Logger(EnvFilter("buzz_acp=info,acp::usage=debug,acp::tool=info,buzz_agent=info"), self.out)
        self.agent_log = self.log

    def report_usage(self, session: Session) -> None:
        self.log.debug("acp::usage", session.line())


def _model(bridge: _Bridge, home: Path, base: str, *, model: str = "scripted/oracle", provider: str = "openai",
           **env: str) -> EndpointModel:
    base_name = "ANTHROPIC_BASE_URL" if provider == "anthropic" else "OPENAI_COMPAT_BASE_URL"
    key_name = "ANTHROPIC_API_KEY" if provider == "anthropic" else "OPENAI_COMPAT_API_KEY"
    settings = EndpointSettings.from_env({"BUZZ_AGENT_PROVIDER": provider, "BUZZ_AGENT_MODEL": model,
                                          base_name: base, key_name: "sk-test", **env})
    parent = {"PATH": os.environ["PATH"], "HOME": str(home), "OPENAI_COMPAT_API_KEY": "sk-test"}
    return EndpointModel(bridge, settings, environ=parent, cwd=str(home))  # type: ignore[arg-type]


def _turn(instruction: str) -> Turn:
    event = {"id": "e" * 64, "pubkey": USER, "created_at": 1_796_126_400, "kind": 9,
             "content": f"@solo-1 {instruction}", "tags": [["h", CHANNEL], ["p", AGENT]]}
    return Turn([event], CHANNEL, str(event["content"]), Session("s1", "You are `solo-1`."))


def _served_usage(out: str) -> list[dict[str, Any]]:
    """The usage the scripted model logged on stdout for each request it answered."""
    return [json.loads(line)["usage"] for line in out.splitlines() if line.startswith("{") and '"usage"' in line]


def _calls(home: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (home / "buzz-calls.jsonl").read_text().splitlines()]


async def test_the_oracle_answers_through_the_cli_and_bills_what_the_endpoint_reported(
        endpoint: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bridge = _Bridge(tmp_path)
    turn = _turn(LICENSES)
    await run_turn(bridge, _model(bridge, tmp_path, f"{endpoint}/v1"), turn)  # type: ignore[arg-type]
    assert bridge.out.getvalue().rstrip().endswith("turn complete for s1")

    (call,) = _calls(tmp_path)
    argv = call["argv"]
    assert argv[:2] == ["messages", "send"] and argv[argv.index("--channel") + 1] == CHANNEL
    assert argv[argv.index("--reply-to") + 1] == "e" * 64 and argv[argv.index("--mention") + 1] == USER
    assert argv[argv.index("--content") + 1].startswith("DONE: The total is $5,328")
    assert call["key"] == encode_nsec(bytes.fromhex(SECRET)) and call["relay"] == "ws://localhost:3600"
    assert call["cwd"] == str(tmp_path)

    served = _served_usage(capsys.readouterr().out)
    assert len(served) == 2  # the send, then the end of the turn
    session = turn.session
    assert session.input_tokens == sum(u["prompt_tokens"] for u in served)
    assert session.output_tokens == sum(u["completion_tokens"] for u in served)
    assert session.cached_tokens == sum(u["prompt_tokens_details"]["cached_tokens"] for u in served)
    # one line, at the turn's end, holding every response's counts (see model_loop's docstring)
    usage_lines = [line for line in bridge.out.getvalue().splitlines() if "acp::usage" in line]
    assert len(usage_lines) == 1 and usage_lines[0].endswith(session.line())
    assert "tool_call: dev__shell (other)" in bridge.out.getvalue()


async def test_a_second_turn_continues_the_session(endpoint: str, tmp_path: Path) -> None:
    bridge = _Bridge(tmp_path)
    model = _model(bridge, tmp_path, f"{endpoint}/v1")
    first, second = _turn(LICENSES), _turn("What is the total for 3 licenses at $10 for 2 months?")
    second = Turn([{**second.event, "id": "d" * 64}], CHANNEL, second.text, first.session)
    await model.turn(first)
    await model.turn(second)
    history = model.histories["s1"]
    assert sum(isinstance(item, llm.UserItem) for item in history) == 2
    assert [c["argv"][c["argv"].index("--reply-to") + 1] for c in _calls(tmp_path)] == ["e" * 64, "d" * 64]


async def test_a_file_is_read_with_the_agents_home(endpoint: str, tmp_path: Path) -> None:
    skill = tmp_path / ".claude" / "skills" / "check" / "SKILL.md"
    skill.parent.mkdir(parents=True)
    skill.write_text("CHECK_ID: 5e1f\nACTION: recalibrate\n")
    bridge = _Bridge(tmp_path)
    await _model(bridge, tmp_path, f"{endpoint}/v1").turn(
        _turn("Read the explicitly named file `~/.claude/skills/check/SKILL.md`. Report CHECK_ID and ACTION."))
    content = _calls(tmp_path)[0]["argv"]
    assert content[content.index("--content") + 1] == "DONE: CHECK_ID is 5e1f.\nACTION: recalibrate"


async def test_the_anthropic_dialect_plays_the_same_turn(endpoint: str, tmp_path: Path) -> None:
    bridge = _Bridge(tmp_path)
    turn = _turn(LICENSES)
    await _model(bridge, tmp_path, endpoint, provider="anthropic").turn(turn)
    assert _calls(tmp_path)[0]["argv"][:2] == ["messages", "send"]
    assert turn.session.input_tokens > 0 and turn.session.cached_tokens == 0


async def test_a_refusal_fails_the_turn_naming_the_endpoints_message(endpoint: str, tmp_path: Path) -> None:
    bridge = _Bridge(tmp_path)
    model = _model(bridge, tmp_path, f"{endpoint}/v1", model="scripted/wizard")
    turn = _turn(LICENSES)
    await run_turn(bridge, model, turn)  # type: ignore[arg-type]
    log = bridge.out.getvalue()
    assert (f"turn for s1 failed: {endpoint}/v1/chat/completions answered 400: model: 'scripted/wizard' "
            "names no scripted policy") in log
    assert log.rstrip().endswith("turn cancelled for s1")
    assert model.histories["s1"] == []  # the failed turn left nothing a later request would trip on
    assert turn.session.input_tokens == 0  # an unanswered request bills nothing


async def test_the_round_cap_ends_the_turn_as_buzz_acp_reports_it(endpoint: str, tmp_path: Path) -> None:
    bridge = _Bridge(tmp_path)
    (tmp_path / "x.txt").write_text("CHECK_ID: 1\nACTION: a\n")
    model = _model(bridge, tmp_path, f"{endpoint}/v1", BUZZ_AGENT_MAX_ROUNDS="1")
    await run_turn(bridge, model, _turn(f"Please read `{tmp_path}/x.txt` and report CHECK_ID and ACTION."))  # type: ignore[arg-type]
    assert bridge.out.getvalue().rstrip().endswith(f"turn {MAX_ROUNDS_OUTCOME} for s1")
    assert not (tmp_path / "buzz-calls.jsonl").exists()


async def test_an_unreachable_endpoint_is_retried_then_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(llm, "RETRY_BASE_S", 0.01)
    bridge = _Bridge(tmp_path)
    with pytest.raises(EndpointError, match=r"http://127\.0\.0\.1:9/chat/completions unreachable: .*after 4 attempts"):
        await _model(bridge, tmp_path, "http://127.0.0.1:9").turn(_turn(LICENSES))


@pytest.mark.parametrize(("env", "fragment"), [
    ({"BUZZ_AGENT_PROVIDER": "openai", "OPENAI_COMPAT_BASE_URL": "http://m/v1"}, "OPENAI_COMPAT_API_KEY required"),
    ({"BUZZ_AGENT_PROVIDER": "openai", "OPENAI_COMPAT_API_KEY": "k", "OPENAI_COMPAT_API": "responses"},
     "Responses API"),
    ({"BUZZ_AGENT_PROVIDER": "openai", "OPENAI_COMPAT_API_KEY": "k"}, "Responses API"),  # auto → api.openai.com
    ({"BUZZ_AGENT_PROVIDER": "anthropic", "ANTHROPIC_API_KEY": "k", "ANTHROPIC_BASE_URL": "ftp://x"}, r"http\(s\) URL"),
    ({"BUZZ_AGENT_PROVIDER": "openai", "OPENAI_COMPAT_API_KEY": "k", "OPENAI_COMPAT_BASE_URL": "http://m/v1",
      "BUZZ_AGENT_THINKING_EFFORT": "deep"}, "THINKING_EFFORT"),
])
def test_endpoint_settings_refuse_what_they_cannot_honour(env: dict[str, str], fragment: str) -> None:
    with pytest.raises(ConfigError, match=fragment):
        EndpointSettings.from_env(env)


async def test_a_batch_reaches_the_endpoint_as_one_prompt_and_each_request_gets_its_reply(
        endpoint: str, tmp_path: Path) -> None:
    bridge = _Bridge(tmp_path)
    alpha = {"id": "a" * 64, "pubkey": USER, "created_at": 1_796_126_400, "kind": 9,
             "content": "@solo-1 ALPHA request: calculate `(17 * 19) + 23`.\n\nReply with the ALPHA result, labelled ALPHA.",
             "tags": [["h", CHANNEL], ["p", AGENT]]}
    beta = {**alpha, "id": "b" * 64, "created_at": 1_796_126_401,
            "content": "@solo-1 BETA request: calculate (84 / 7) + 29. Reply with the BETA result, labelled BETA."}
    model = _model(bridge, tmp_path, f"{endpoint}/v1")
    turn = Turn([alpha, beta], CHANNEL, "", Session("s1", "You are `solo-1`."))
    await run_turn(bridge, model, turn)  # type: ignore[arg-type]
    (prompt,) = [item.text for item in model.histories["s1"] if isinstance(item, llm.UserItem)]
    assert "[Buzz events — 2 events]" in prompt and "--- Event 2 (@mention) ---" in prompt
    sent = [(c["argv"][c["argv"].index("--content") + 1], c["argv"][c["argv"].index("--reply-to") + 1])
            for c in _calls(tmp_path)]
    assert sent == [("DONE: ALPHA result: 346", "a" * 64), ("DONE: BETA result: 41", "b" * 64)]


async def test_real_newlines_survive_the_shell_to_the_cli(endpoint: str, tmp_path: Path) -> None:
    """The scripted model single-quotes --content; buzz-dev-mcp (and the stand-in) run the command
    with `bash -c`, so the CLI's argv holds real newline bytes."""
    bridge = _Bridge(tmp_path)
    text = ("Send me this release-readiness update, preserving the paragraph and list layout:\n\nRelease readiness\n\n"
            "- API: ready\n- Database: ready\n- Rollback: tested\n\nOwner: Platform Operations\n\n"
            "Keep the response brief and do not add a table.\n")
    await _model(bridge, tmp_path, f"{endpoint}/v1").turn(_turn(text))
    argv = _calls(tmp_path)[0]["argv"]
    assert argv[argv.index("--content") + 1] == ("DONE: Release readiness\n\n- API: ready\n- Database: ready\n"
                                                 "- Rollback: tested\n\nOwner: Platform Operations")
