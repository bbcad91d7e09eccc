"""The scripted policies: what a model that knows the buzz-native suite answers, step by step.

Stateless by construction: every step is derived from the request's own history — the events its
prompts delivered (every prompt of the session: buzz-agent keeps earlier turns in the history, and
a mid-turn steer is one more prompt), the ids of the calls already made and what they returned —
so a retried request gets the same answer and a restarted server loses nothing. Call ids carry
the step name and the event they answer.

Each delivered event is a request, or an input to one when it replies into a request's thread
(tasks.requests_of). The requests are worked on oldest first; one that waits for inputs still to
come (InterleavedReports) pauses once per delivery (PAUSE_S) and is then skipped, and when nothing
is left to do the turn ends without a call.

Policies (the endpoint's model name is `<anything>/<policy>`, as the stand-in's is):
- oracle: solves each request and posts `DONE: <answer>` as a thread reply mentioning the user;
- toplevel: the same answers as new top-level messages (fails reply_to_thread by design);
- naive: the oracle on the first four tasks and hello-file; on each newer task the fault it is
  there to catch (docs/scripted-model.md has the table of what each policy fails);
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
    AmbiguousMention,
    ChannelInvite,
    HelloFile,
    InterleavedReports,
    LabelledCalculation,
    LicenseTotal,
    Message,
    MultilineMessage,
    NamedPath,
    NarrativeStatus,
    Projection,
    Request,
    SavedOutput,
    Task,
    requests_of,
)
from buzz_operator.dev.model.conversation import Reply, ToolCall, Turn, UnsupportedRequest
from buzz_operator.dev.model.event import BuzzEvent, delivered, instruction_of

SPENDER_INPUT_PER_CALL = 50_000_000
SPENDER_OUTPUT_PER_CALL = 5_000_000
END_OF_TURN = "Done."
_SAVED = "BUZZ-SAVED-OUTPUT"
WAITING = "Waiting for the remaining reports before answering."
# Before ending a turn to wait, the model pauses once per delivery with a shell `sleep`. With
# Block's default steering, an event arriving mid-turn is appended to the running turn only at a
# round boundary; one accepted during the turn's last model call is dropped with the run, though
# buzz-acp has counted it delivered (docs/scripted-model.md). A pause is a round boundary that
# outlasts the harness publishing the reports back to back.
PAUSE_S = 2


@dataclass(frozen=True)
class Style:
    threaded: bool = True
    silent: bool = False
    spend: bool = False
    naive: bool = False


POLICIES: dict[str, Style] = {
    "oracle": Style(),
    "toplevel": Style(threaded=False),
    "naive": Style(naive=True),
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
    """The calls made for one request, addressed by step name."""

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


@dataclass(frozen=True)
class _Step:
    """The next calls for a request."""

    calls: list[ToolCall]


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


def _rows(output: str) -> list[dict[str, object]]:
    rows: list[dict[str, object]] = []
    for value in _json_values(output):
        rows += [row for row in (value if isinstance(value, list) else [value]) if isinstance(row, dict)]
    return rows


def _is_pubkey(value: object) -> bool:
    return isinstance(value, str) and re.fullmatch(r"[0-9a-f]{64}", value) is not None


def _profile_pubkey(output: str, name: str, among: set[str] | None = None) -> str | None:
    """The pubkey of the profile named exactly `name` in `buzz users get --name` output (one of
    `among`, when given: a shared relay holds other trials' identities of the same name)."""
    for row in _rows(output):
        names = {row.get("name"), row.get("display_name"), row.get("displayName")}
        pubkey = row.get("pubkey")
        if name in names and _is_pubkey(pubkey) and (not among or pubkey in among):
            return str(pubkey)
    return None


def _profiles(output: str) -> list[tuple[str, str, str]]:
    """(pubkey, name, about) of every profile in `buzz users get` output: the real CLI prints
    each profile's own kind-0 fields plus its pubkey (crates/buzz-cli users.rs, JSON format)."""
    profiles = []
    for row in _rows(output):
        name = row.get("display_name") or row.get("name")
        about = row.get("about")
        if _is_pubkey(row.get("pubkey")):
            profiles.append((str(row["pubkey"]), name if isinstance(name, str) else "",
                             about if isinstance(about, str) else ""))
    return profiles


def _member_pubkeys(output: str) -> set[str]:
    """`buzz channels members` output: `[{"pubkey", "role"}, …]`."""
    return {str(row["pubkey"]) for row in _rows(output) if _is_pubkey(row.get("pubkey"))}


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
    """The next calls for one of the first suite's tasks, or the answer once the work is done."""
    if isinstance(task, (Projection, LicenseTotal, MultilineMessage, NarrativeStatus, LabelledCalculation)):
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
    if isinstance(task, SavedOutput):
        if not steps.done("run"):
            # saved only when the command succeeds, as the stand-in's policy does; the marker
            # says which, whatever envelope the shell tool wraps the output in
            saved = f"out=$({task.command}) && printf '%s\\n' \"$out\" > {shlex.quote(task.path)} && echo {_SAVED}"
            return [steps.run("run", saved)]
        return task.answer(0 if _SAVED in steps.output("run") else 1)
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


def send_command(event: BuzzEvent, content: str, mentions: list[str], reply_to: str | None) -> str:
    """`buzz messages send` as one shell word list. buzz-dev-mcp runs the command with `bash -c`,
    so a single-quoted word (shlex.quote) reaches the CLI byte for byte: real newlines stay
    newlines, and `$`, backticks and `\\` are not interpreted."""
    words = ["buzz", "messages", "send", "--channel", event.channel_id, "--content", content]
    for pubkey in dict.fromkeys(mentions):
        words += ["--mention", pubkey]
    if reply_to is not None:
        words += ["--reply-to", reply_to]
    return shlex.join(words)


class _Planner:
    """The next step of every open request of one conversation, under one style."""

    def __init__(self, turn: Turn, style: Style) -> None:
        self.turn = turn
        self.style = style
        self.events = delivered(turn.prompts)
        self.by_id = {event.event_id: event for event in self.events}
        messages = [Message(e.event_id, e.sender, e.content, e.root_id) for e in self.events]
        self.requests = requests_of(messages, instruction_of)

    def next_step(self) -> _Step | None:
        """The first open request's next calls; None when every request is finished or waits."""
        for request in self.requests:
            event = self.by_id[request.message.event_id]
            steps = _Steps(self.turn, event)
            if steps.done("send"):
                continue
            step = self._plan(request, event, steps)
            if step is not None:
                return step
        return None

    def waiting(self) -> bool:
        return any(isinstance(r.task, InterleavedReports) and not _Steps(self.turn, self.by_id[r.message.event_id])
                   .done("send") for r in self.requests)

    def _reply_to(self, event: BuzzEvent) -> str | None:
        return event.event_id if self.style.threaded else None

    def _done(self, steps: _Steps, event: BuzzEvent, body: str, extra: list[str] | None = None,
              thread: BuzzEvent | None = None) -> _Step:
        """The completion message: the answer, threaded, mentioning the requester."""
        anchor = thread or event
        command = send_command(event, f"DONE: {body}", [event.sender, *(extra or [])], self._reply_to(anchor))
        return _Step([steps.run("send", command)])

    def _plan(self, request: Request, event: BuzzEvent, steps: _Steps) -> _Step | None:
        task, naive = request.task, self.style.naive
        if isinstance(task, InterleavedReports):
            if naive:  # answers at once from the task alone, and never again
                return self._done(steps, event, task.partial(task.values([])))
            values = task.values(self.turn.prompts)  # report blocks and any thread context
            if task.complete(values):
                return self._done(steps, event, task.answer(values))
            deliveries = len(self.turn.prompts)
            if not steps.done("pause", deliveries):
                return _Step([steps.run("pause", f"sleep {PAUSE_S}", deliveries)])
            return None  # end the turn: a later delivery brings the rest
        if isinstance(task, LabelledCalculation) and naive:
            return self._merged(event, steps)
        if isinstance(task, MultilineMessage) and naive:
            return self._done(steps, event, task.escaped())  # literal backslash-n: the shell keeps it
        if isinstance(task, NarrativeStatus) and naive:
            return self._at_named(task, event, steps)
        if isinstance(task, AmbiguousMention):
            return self._ambiguous(task, event, steps)
        instruction = instruction_of(event.content)
        answer = _solve(task, steps, instruction)
        if isinstance(answer, list):
            return _Step(answer)
        return self._done(steps, event, answer)

    def _merged(self, event: BuzzEvent, steps: _Steps) -> _Step:
        """naive on labelled requests: every answer so far in one message, in the first one's thread."""
        labelled = [r for r in self.requests if isinstance(r.task, LabelledCalculation)]
        upto = labelled[: [r.message.event_id for r in labelled].index(event.event_id) + 1]
        body = "\n".join(r.task.answer() for r in upto if isinstance(r.task, LabelledCalculation))
        return self._done(steps, event, body, thread=self.by_id[upto[0].message.event_id])

    def _at_named(self, task: NarrativeStatus, event: BuzzEvent, steps: _Steps) -> _Step:
        """naive on a narrative status: the agents looked up, then @-named and p-tagged."""
        members_at = len(task.names)
        if not steps.done("lookup"):
            return _Step([steps.run("lookup", f"buzz users get --name {shlex.quote(name)}", index)
                          for index, name in enumerate(task.names)]
                         + [steps.run("lookup", f"buzz channels members --channel {event.channel_id}", members_at)])
        members = _member_pubkeys(steps.output("lookup", members_at))
        bots = [pubkey for index, name in enumerate(task.names)
                if (pubkey := _profile_pubkey(steps.output("lookup", index), name, members)) is not None]
        return self._done(steps, event, task.at_named(), extra=bots)

    def _ambiguous(self, task: AmbiguousMention, event: BuzzEvent, steps: _Steps) -> _Step:
        """Look the name up with the profiles' `about` and the channel's members; message the one
        the marker names (naive: every namesake), then tell the requester."""
        if not steps.done("lookup"):
            return _Step([steps.run("lookup", f"buzz users get --name {shlex.quote(task.name)}", 0),
                          steps.run("lookup", f"buzz channels members --channel {event.channel_id}", 1)])
        members = _member_pubkeys(steps.output("lookup", 1))
        profiles = [p for p in _profiles(steps.output("lookup", 0)) if not members or p[0] in members]
        if members and not task.namesakes(profiles):
            # the relay's search found none of them: read every member's profile by pubkey
            if not steps.done("profiles"):
                pubkeys = " ".join(f"--pubkey {pubkey}" for pubkey in sorted(members)[:200])
                return _Step([steps.run("profiles", f"buzz users get {pubkeys}")])
            profiles = [p for p in _profiles(steps.output("profiles")) if p[0] in members]
        targets = task.namesakes(profiles) if self.style.naive else task.picks(profiles)
        if not targets or (len(targets) > 1 and not self.style.naive):
            return self._done(steps, event, f"I found {len(task.picks(profiles))} members named {task.name} "
                                            f"whose profile says {task.marker!r}; I sent nothing.")
        if not steps.done("deliver"):
            command = send_command(event, task.message, targets, self._reply_to(event))
            return _Step([steps.run("deliver", command)])
        return self._done(steps, event, task.answer())


def answer(turn: Turn) -> Reply:
    """The model's reply to `turn` under the policy its model name selects."""
    style = policy_of(turn.model)
    planner = _Planner(turn, style)
    turn.shell_tool()  # refused by name when the agent offers no shell, whatever the step
    extra = (SPENDER_INPUT_PER_CALL, SPENDER_OUTPUT_PER_CALL) if style.spend else (0, 0)
    if style.silent:
        return Reply(END_OF_TURN, (), *extra)
    step = planner.next_step()
    if step is None:
        return Reply(WAITING if planner.waiting() else END_OF_TURN, (), *extra)
    return Reply("", tuple(step.calls), *extra)


Answerer = Callable[[Turn], Reply]
