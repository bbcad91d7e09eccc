"""The scripted policies, driven through the OpenAI dialect exactly as buzz-agent drives a model:
each reply's tool calls are "run" by the test and their output appended as `role: tool`."""

from __future__ import annotations

import json
import shlex

import pytest
from buzz_operator.dev.model import anthropic_messages, openai_chat
from buzz_operator.dev.model.conversation import UnsupportedRequest
from buzz_operator.dev.model.script import END_OF_TURN, SPENDER_INPUT_PER_CALL, answer

from .prompts import CHANNEL, EVENT, USER, buzz_prompt

pytestmark = pytest.mark.unit

SHELL = {"type": "function", "function": {"name": "dev__shell", "description": "run", "parameters": {}}}


def _request(model: str, prompt: str, history: list[dict] | None = None) -> dict:
    return {"model": model, "stream": False, "max_completion_tokens": 100,
            "messages": [{"role": "system", "content": "sys"}, {"role": "user", "content": prompt},
                         *(history or [])], "tools": [SHELL]}


def _run_turn(model: str, prompt: str, tool_output) -> tuple[list[str], dict]:
    """Play one turn to its end; return every shell command and the last response."""
    history: list[dict] = []
    commands: list[str] = []
    for _ in range(10):
        body = _request(model, prompt, history)
        turn = openai_chat.parse(body, len(json.dumps(body)))
        response = openai_chat.respond(turn, answer(turn), "chatcmpl-1")
        message = response["choices"][0]["message"]
        if not message.get("tool_calls"):
            return commands, response
        history.append(message)
        for call in message["tool_calls"]:
            command = json.loads(call["function"]["arguments"])["command"]
            commands.append(command)
            history.append({"role": "tool", "tool_call_id": call["id"], "content": tool_output(command)})
    raise AssertionError("the turn never ended")


def _send_words(command: str) -> list[str]:
    words = shlex.split(command)
    assert words[:3] == ["buzz", "messages", "send"], command
    return words


def test_oracle_answers_a_projection_in_the_thread_mentioning_the_user() -> None:
    task = ("@lead I need a quick six-month projection. Month 0 revenue is $120,000 and month 0 expenses "
            "are $75,000. Revenue grows 5% per month and expenses grow 2% per month. Project months 1 through 6.")
    commands, last = _run_turn("standin/oracle", buzz_prompt(task), lambda _: '{"event_id":"x"}')
    assert len(commands) == 1
    words = _send_words(commands[0])
    assert words[words.index("--channel") + 1] == CHANNEL
    assert words[words.index("--reply-to") + 1] == EVENT
    assert words[words.index("--mention") + 1] == USER
    content = words[words.index("--content") + 1]
    assert content.startswith("DONE: Month 6 revenue: $160,811")
    assert last["choices"][0]["message"]["content"] == END_OF_TURN
    assert last["choices"][0]["finish_reason"] == "stop"


def test_toplevel_posts_the_same_answer_without_reply_to() -> None:
    task = "@lead What is the total for 12 annual licenses at $40 per month for 12 months?"
    commands, _ = _run_turn("standin/toplevel", buzz_prompt(task), lambda _: "{}")
    words = _send_words(commands[0])
    assert "--reply-to" not in words
    assert words[words.index("--content") + 1].startswith("DONE: The total is $5,760")


def test_named_path_is_read_with_home_expanded_then_answered() -> None:
    task = "@lead Please read `~/benchmark/instructions.txt` and tell me the CHECK_ID and ACTION."
    outputs = {"cat": "CHECK_ID: abc-123\nACTION: rotate the key\n"}
    commands, _ = _run_turn("x/oracle", buzz_prompt(task),
                            lambda c: outputs["cat"] if c.startswith("cat") else "{}")
    assert commands[0] == "cat -- \"$HOME\"/benchmark/instructions.txt"
    content = _send_words(commands[1])[_send_words(commands[1]).index("--content") + 1]
    assert content == "DONE: CHECK_ID is abc-123.\nACTION: rotate the key"


def test_hello_file_is_written_where_the_instruction_says() -> None:
    task = "@lead Create a file at `/app/hello.txt` whose content is exactly `Hello, world!`."
    commands, _ = _run_turn("x/oracle", buzz_prompt(task), lambda _: "")
    assert commands[0] == "printf '%s\\n' 'Hello, world!' > /app/hello.txt"
    assert len(commands) == 2


def test_saved_output_runs_the_command_and_saves_only_on_success() -> None:
    task = "@lead Run `python3 -c 'print(1)'` and save what it prints to `/app/out.txt`."
    commands, _ = _run_turn("x/oracle", buzz_prompt(task), lambda _: "BUZZ-SAVED-OUTPUT\n")
    assert commands[0] == ("out=$(python3 -c 'print(1)') && printf '%s\\n' \"$out\" > /app/out.txt"
                           " && echo BUZZ-SAVED-OUTPUT")
    assert "saved its output to /app/out.txt" in commands[1]
    # the shell tool's envelope for a command the kernel killed: no marker, so no claim it saved
    killed = json.dumps({"exit_code": 137, "stdout": "", "stderr": "Killed"})
    commands, _ = _run_turn("x/oracle", buzz_prompt(task), lambda _: killed)
    assert "The command failed" in commands[1]


def test_channel_invite_looks_up_creates_and_adds_with_roles() -> None:
    task = ("@lead Please create a temporary private stream channel named `fix-pr-1234` that lasts for one "
            "hour. Add these people to it as members: benchmark-user-07, benchmark-user-19 and add these bots "
            "with the `bot` role: benchmark-bot-03")
    keys = {"benchmark-user-07": "1" * 64, "benchmark-user-19": "2" * 64, "benchmark-bot-03": "3" * 64}

    def run(command: str) -> str:
        words = shlex.split(command)
        if words[:3] == ["buzz", "users", "get"]:
            name = words[-1]
            return json.dumps([{"pubkey": keys[name], "name": name}, {"pubkey": "9" * 64, "name": name + "x"}])
        if words[:3] == ["buzz", "channels", "create"]:
            return json.dumps({"channel_id": "11111111-2222-4333-8444-555555555555", "event_id": "f" * 64})
        return "{}"

    commands, _ = _run_turn("x/oracle", buzz_prompt(task), run)
    assert sum(c.startswith("buzz users get") for c in commands) == 3
    create = next(c for c in commands if c.startswith("buzz channels create"))
    assert "--visibility private" in create and "--ttl 3600" in create and "--type stream" in create
    adds = [c for c in commands if c.startswith("buzz channels add-member")]
    assert f"--pubkey {keys['benchmark-bot-03']} --role bot" in adds[2]
    assert all("11111111-2222-4333-8444-555555555555" in c for c in adds)
    assert commands[-1].startswith("buzz messages send")


def test_channel_invite_with_an_unknown_member_creates_nothing() -> None:
    task = "@lead Create a private stream channel named `ops-room` and add benchmark-user-07 as member."
    commands, _ = _run_turn("x/oracle", buzz_prompt(task), lambda c: "[]")
    assert not any(c.startswith("buzz channels create") for c in commands)
    assert "could not find benchmark-user-07" in commands[-1]


def test_silent_ends_the_turn_without_a_call() -> None:
    commands, last = _run_turn("x/silent", buzz_prompt("@lead anything"), lambda _: "")
    assert commands == [] and last["choices"][0]["message"]["content"] == END_OF_TURN


def test_spender_bills_a_runaway_number_of_tokens() -> None:
    body = _request("x/spender", buzz_prompt("@lead What is the total for 3 licenses at $10 for 2 months?"))
    turn = openai_chat.parse(body, len(json.dumps(body)))
    usage = openai_chat.respond(turn, answer(turn), "id")["usage"]
    assert usage["prompt_tokens"] > SPENDER_INPUT_PER_CALL
    assert usage["total_tokens"] == usage["prompt_tokens"] + usage["completion_tokens"]


def test_usage_grows_with_the_request() -> None:
    small = _request("x/oracle", buzz_prompt("@lead What is the total for 3 licenses at $10 for 2 months?"))
    large = _request("x/oracle", buzz_prompt("@lead What is the total for 3 licenses at $10 for 2 months?"
                                             + " padding" * 500))
    usages = []
    for body in (small, large):
        turn = openai_chat.parse(body, len(json.dumps(body)))
        usages.append(openai_chat.respond(turn, answer(turn), "id")["usage"]["prompt_tokens"])
    assert usages[1] > usages[0]


def test_anthropic_dialect_plays_the_same_steps() -> None:
    prompt = buzz_prompt("@lead Please read `/etc/benchmark.txt` and report CHECK_ID and ACTION.")
    tools = [{"name": "dev__shell", "description": "run", "input_schema": {}}]
    body = {"model": "x/oracle", "system": "sys", "max_tokens": 100, "tools": tools,
            "messages": [{"role": "user", "content": [{"type": "text", "text": prompt}]}]}
    turn = anthropic_messages.parse(body, 100)
    first = anthropic_messages.respond(turn, answer(turn), "msg-1")
    assert first["stop_reason"] == "tool_use"
    use = first["content"][0]
    assert use["type"] == "tool_use" and use["input"]["command"] == "cat -- /etc/benchmark.txt"
    body["messages"] += [
        {"role": "assistant", "content": first["content"]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": use["id"],
                                      "content": [{"type": "text", "text": "CHECK_ID: z9\nACTION: stop\n"}]}]},
    ]
    turn = anthropic_messages.parse(body, 200)
    second = anthropic_messages.respond(turn, answer(turn), "msg-2")
    assert "DONE: CHECK_ID is z9." in second["content"][0]["input"]["command"]
    assert set(second["usage"]) >= {"input_tokens", "output_tokens"}


def test_unknown_policy_and_missing_shell_are_refused_by_name() -> None:
    body = _request("x/wizard", buzz_prompt("@lead hi"))
    with pytest.raises(UnsupportedRequest, match="model: 'x/wizard' names no scripted policy"):
        answer(openai_chat.parse(body, 10))
    body = _request("x/oracle", buzz_prompt("@lead hi"))
    body["tools"] = [{"type": "function", "function": {"name": "dev__read_file"}}]
    with pytest.raises(UnsupportedRequest, match="tools: the request offers no shell tool"):
        answer(openai_chat.parse(body, 10))


def _envelope(stdout: str, exit_code: int = 0) -> str:
    """A tool result as buzz-agent relays buzz-dev-mcp's shell tool: a pretty JSON envelope."""
    return json.dumps({"exit_code": exit_code, "stdout": stdout, "stderr": "", "timed_out": False,
                       "duration_ms": 3, "stdout_truncated": False, "stderr_truncated": False,
                       "stdout_artifact": None, "stderr_artifact": None, "notes": []}, indent=2)


def test_tool_results_in_buzz_dev_mcp_envelopes_are_read_for_their_stdout() -> None:
    """buzz-agent hands the model the shell tool's JSON envelope, not the bare output: the file a
    command printed and the JSON the CLI printed are both inside `stdout`."""
    read = "@lead Please read `/etc/benchmark.txt` and report CHECK_ID and ACTION."
    commands, _ = _run_turn("x/oracle", buzz_prompt(read), lambda c: _envelope("CHECK_ID: q7\nACTION: halt\n"))
    assert "DONE: CHECK_ID is q7.\nACTION: halt" in _send_words(commands[-1])

    invite = "@lead Create a private stream channel named `ops-room` and add benchmark-user-07 as member."
    channel = "11111111-2222-4333-8444-555555555555"

    def run(command: str) -> str:
        if command.startswith("buzz users get"):
            return _envelope(json.dumps([{"name": "benchmark-user-07", "pubkey": "7" * 64}]))
        if command.startswith("buzz channels create"):
            return _envelope(json.dumps({"event_id": "f" * 64, "accepted": True, "message": "",
                                         "channel_id": channel}))
        return _envelope('{"accepted": true}') + "\n\nThe tool call failed; reflect before retrying."

    commands, _ = _run_turn("x/oracle", buzz_prompt(invite), run)
    assert f"--channel {channel} --pubkey {'7' * 64} --role member" in commands[-2]
    assert commands[-1].startswith("buzz messages send")


def test_the_answer_is_sent_at_once() -> None:
    """The scripted model answers without waiting out the task's second, as a fast real agent
    does; the evidence's order keeps such an answer after the task (docs/evidence.md#order)."""
    body = _request("x/oracle", buzz_prompt("@lead What is the total for 3 licenses at $10 for 2 months?"))
    turn = openai_chat.parse(body, len(json.dumps(body)))
    reply = answer(turn)
    assert [c.arguments["command"].split()[:3] for c in reply.calls] == [["buzz", "messages", "send"]]
    assert not hasattr(reply, "not_before")
