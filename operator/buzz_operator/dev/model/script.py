"""The scripted policies: what a model that knows the buzz-native suite answers, step by step.

Stateless by construction: every step is derived from the turn's own history (the ids of the
calls already made and what they returned), so a retried request gets the same answer and a
restarted server loses nothing. Call ids carry the step name and the event they answer.

Policies (the endpoint's model name is `<anything>/<policy>`, as the stand-in's is):
- oracle: solves the task and posts `DONE: <answer>` as a thread reply mentioning the user;
- toplevel: the same answer as a new top-level message (fails reply_to_thread by design);
- silent: reads the task and ends the turn without posting;
- spender: the oracle, billing a runaway number of tokens (trips cost caps).
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Callable
from dataclasses import dataclass

from buzz_operator.dev.agent.tasks import (
    ChannelInvite,
    HelloFile,
    LicenseTotal,
    NamedPath,
    Projection,
    Task,
    recognise,
)
from buzz_operator.dev.model.conversation import Reply, ToolCall, Turn, UnsupportedRequest
from buzz_operator.dev.model.event import BuzzEvent, instruction_of, last_event

SPENDER_INPUT_PER_CALL = 50_000_000
SPENDER_OUTPUT_PER_CALL = 5_000_000
END_OF_TURN = "Done."


@dataclass(frozen=True)
class Style:
    threaded: bool = True
    silent: bool = False
    spend: bool = False


POLICIES: dict[str, Style] = {
    "oracle": Style(),
    "toplevel": Style(threaded=False),
    "silent": Style(silent=True),
    "spender": Style(spend=True),
}


def policy_of(model: str) -> Style:
    name = model.rsplit("/", 1)[-1]
    try:
        return POLICIES[name]
    except KeyError:
        raise UnsupportedRequest(
            f"model: {model!r} names no scripted policy; known: {', '.join(sorted(POLICIES))} "
            "(as `<prefix>/<policy>`)"
        ) from None


class _Steps:
    """The calls of one turn, addressed by step name."""

    def __init__(self, turn: Turn, event: BuzzEvent) -> None:
        self.turn = turn
        self.tag = event.event_id[:12]
        self.shell = turn.shell_tool()

    def call_id(self, step: str, index: int = 0) -> str:
        return f"call_{step}_{index}_{self.tag}"

    def done(self, step: str, index: int = 0) -> bool:
        return self.turn.result(self.call_id(step, index)) is not None

    def output(self, step: str, index: int = 0) -> str:
        return shell_stdout(self.turn.result(self.call_id(step, index)) or "")

    def run(self, step: str, command: str, index: int = 0) -> ToolCall:
        return ToolCall(self.call_id(step, index), self.shell, {"command": command})


def shell_stdout(result: str) -> str:
    """What the command printed. buzz-dev-mcp's shell tool answers with a JSON envelope
    (`{"exit_code", "stdout", "stderr", …}`, crates/buzz-dev-mcp/src/shell.rs) that buzz-agent
    passes on as the tool result, possibly followed by its error-reflection text; the policies read
    the command's own output, so the envelope is opened. Anything else is the output itself."""
    try:
        value, _ = json.JSONDecoder().raw_decode(result.lstrip())
    except json.JSONDecodeError:
        return result
    if isinstance(value, dict) and "exit_code" in value and isinstance(value.get("stdout"), str):
        return value["stdout"]
    return result


def _json_values(text: str) -> list[object]:
    """Every JSON value printed in a tool's output (the CLI prints one per command)."""
    decoder, values, at = json.JSONDecoder(), [], 0
    while True:
        starts = [i for i in (text.find("[", at), text.find("{", at)) if i >= 0]
        if not starts:
            return values
        start = min(starts)
        try:
            value, end = decoder.raw_decode(text, start)
        except json.JSONDecodeError:
            at = start + 1
            continue
        values.append(value)
        at = end


def _profile_pubkey(output: str, name: str) -> str | None:
    """The pubkey of the profile named exactly `name` in `buzz users get --name` output."""
    for value in _json_values(output):
        rows = value if isinstance(value, list) else [value]
        for row in rows:
            if not isinstance(row, dict):
                continue
            names = {row.get("name"), row.get("display_name"), row.get("displayName")}
            pubkey = row.get("pubkey")
            if name in names and isinstance(pubkey, str) and re.fullmatch(r"[0-9a-f]{64}", pubkey):
                return pubkey
    return None


def _channel_id(output: str) -> str | None:
    for value in _json_values(output):
        if isinstance(value, dict) and isinstance(value.get("channel_id"), str):
            return value["channel_id"]
    return None


def _home_path(path: str) -> str:
    """A shell word for `path` that still expands `~/` to the agent's home."""
    if path.startswith("~/"):
        return '"$HOME"/' + shlex.quote(path[2:])
    return shlex.quote(path)


def _hello_path(instruction: str, task: HelloFile) -> str:
    match = re.search(r"`(/[^`\s]*" + re.escape(task.filename) + r")`", instruction)
    return match.group(1) if match else f"/app/{task.filename}"


def _solve(task: Task | None, steps: _Steps, instruction: str) -> list[ToolCall] | str:
    """The next calls for `task`, or the answer once the work is done."""
    if isinstance(task, (Projection, LicenseTotal)):
        return task.answer()
    if isinstance(task, NamedPath):
        if not steps.done("read"):
            return [steps.run("read", f"cat -- {_home_path(task.path)}")]
        return task.answer(steps.output("read"))
    if isinstance(task, HelloFile):
        path = _hello_path(instruction, task)
        if not steps.done("write"):
            command = f"printf '%s\\n' {shlex.quote(task.content)} > {shlex.quote(path)}"
            return [steps.run("write", command)]
        return task.answer(path)
    if isinstance(task, ChannelInvite):
        return _invite(task, steps)
    return "I could not work out what this task asks for."


def _invite(task: ChannelInvite, steps: _Steps) -> list[ToolCall] | str:
    names = [name for name, _ in task.members]
    if not steps.done("lookup"):
        return [steps.run("lookup", f"buzz users get --name {shlex.quote(name)}", index)
                for index, name in enumerate(names)]
    pubkeys = {name: _profile_pubkey(steps.output("lookup", index), name) for index, name in enumerate(names)}
    missing = [name for name, pubkey in pubkeys.items() if pubkey is None]
    if missing:
        return f"I could not find {', '.join(missing)} in the directory; created nothing."
    if not steps.done("create"):
        ttl = f" --ttl {task.ttl_seconds}" if task.ttl_seconds else ""
        return [steps.run("create", f"buzz channels create --name {shlex.quote(task.name)} "
                                    f"--type stream --visibility private{ttl}")]
    channel_id = _channel_id(steps.output("create"))
    if channel_id is None:
        return f"Creating {task.name} failed: {steps.output('create')[:200]}"
    if not steps.done("add"):
        return [steps.run("add", f"buzz channels add-member --channel {channel_id} "
                                 f"--pubkey {pubkeys[name]} --role {role}", index)
                for index, (name, role) in enumerate(task.members)]
    return task.answer(channel_id)


def _send(steps: _Steps, event: BuzzEvent, style: Style, body: str) -> ToolCall:
    words = ["buzz", "messages", "send", "--channel", event.channel_id, "--content", f"DONE: {body}",
             "--mention", event.sender]
    if style.threaded:
        words += ["--reply-to", event.event_id]
    return steps.run("send", shlex.join(words))


def answer(turn: Turn) -> Reply:
    """The model's reply to `turn` under the policy its model name selects."""
    style = policy_of(turn.model)
    event = last_event(turn.prompt)
    steps = _Steps(turn, event)
    extra = (SPENDER_INPUT_PER_CALL, SPENDER_OUTPUT_PER_CALL) if style.spend else (0, 0)

    def reply(text: str = "", calls: list[ToolCall] | None = None) -> Reply:
        return Reply(text, tuple(calls or ()), *extra)

    if style.silent or steps.done("send"):
        return reply(END_OF_TURN)
    instruction = instruction_of(event.content)
    step = _solve(recognise(instruction), steps, instruction)
    if isinstance(step, list):
        return reply(calls=step)
    not_before = event.created_at + 1 if event.created_at is not None else 0.0
    return Reply("", (_send(steps, event, style, step),), *extra, not_before=not_before)


Answerer = Callable[[Turn], Reply]
