"""Stand-in "models": a registry of small policy classes keyed by the endpoint suffix
(`BUZZ_AGENT_MODEL=standin/<policy>`). Each decides what one turn does through the bridge's
tools; add a behaviour by subclassing and decorating with @register.

What a model *says* belongs to the scripted model endpoint (buzz_operator.dev.model), which the
stand-in calls as buzz-agent would (model_loop.py): a runaway biller, for one, is its `spender`.
These stay folded in because they model the agent *process* or need no model server where they
run: crash, hang and leaky are process behaviour; team delegates between two live seats; and
oracle, toplevel, naive and silent give the pod, operator and fault tiers a trial with one moving
part less (their outcomes through the endpoint are tests/integration/agent/test_scripted_trials.py).
Oracle, toplevel and naive play every task of the builtin suite the way the scripted model's
policies of the same names do (docs/scripted-model.md has what each fails).
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field

from .bridge import Bridge
from .event_prompt import thread_of
from .nostr import Event, encode_nsec
from .tasks import (
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
    strip_mention,
)
from .tracing import ACP_TARGET
from .turn import Turn

POLICIES: dict[str, type[Policy]] = {}


def register(cls: type[Policy]) -> type[Policy]:
    POLICIES[cls.name] = cls
    return cls


@dataclass
class Conversation:
    """What one session has been delivered so far, as a model's history holds it (buzz-agent keeps
    a session's history across turns), and which requests it has finished."""

    events: dict[str, Event] = field(default_factory=dict)  # by id, in delivery order
    finished: set[str] = field(default_factory=set)

    def deliver(self, events: list[Event]) -> None:
        for event in events:
            self.events.setdefault(str(event.get("id", "")), event)

    def messages(self) -> list[Message]:
        return [Message(ident, str(event.get("pubkey", "")), str(event.get("content", "")), thread_of(event)[0])
                for ident, event in self.events.items()]


class Policy:
    """Base behaviour (the oracle): solve each request the right way and end with `DONE:`.

    A turn delivers a batch; every request delivered so far that is not finished is worked on,
    oldest first. A request that needs inputs still to come (the reports of InterleavedReports)
    stays open and the turn ends without a word; a later turn that delivers them finishes it."""

    name = ""
    threaded = True  # answers go into the request's thread (toplevel: never)
    naive = False  # the faults of `naive`: each new task failed on the dimension it targets

    def __init__(self, bridge: Bridge) -> None:
        self.bridge = bridge
        self.conversations: dict[str, Conversation] = {}

    @property
    def sigterm_grace_s(self) -> float:
        """How long SIGTERM is ignored (0 = exit promptly, like the real buzz-acp)."""
        return 0.0

    def started(self) -> None:
        """Hook run once before connecting."""

    def describe(self) -> str:
        """How the startup line names where this seat's model lives."""
        return self.name

    def instruction(self, content: str) -> str:
        return strip_mention(content, self.bridge.team.name)

    def from_teammate(self, event: Event) -> bool:
        return any(mate.pubkey == event.get("pubkey") for mate in self.bridge.team.teammates)

    def reply_target(self, event: Event) -> Event | None:
        return event if self.threaded else None

    async def turn(self, turn: Turn) -> str | None:
        """Play one turn. None when it ran to its end; otherwise how it ended, as buzz-acp words
        it in `turn <outcome> for …` (e.g. `hit max_turn_requests`)."""
        self.bridge.read(turn, turn.text)
        conversation = self.conversations.setdefault(turn.session.session_id, Conversation())
        conversation.deliver(turn.events)
        for request in requests_of(conversation.messages(), self.instruction):
            ident = request.message.event_id
            if ident in conversation.finished:
                continue
            if await self.handle(turn, conversation, request):
                conversation.finished.add(ident)
        return None

    async def handle(self, turn: Turn, conversation: Conversation, request: Request) -> bool:
        """Work on one request; True once it is finished (answered, or answered as far as this
        policy ever will)."""
        event = conversation.events[request.message.event_id]
        task = request.task
        if self.from_teammate(event):
            # a teammate's question: answer it in the thread, the task is not ours to finish
            await self.bridge.post(turn, await self.solve(turn, task), reply_to=event, mentions=[str(event["pubkey"])])
            return True
        if isinstance(task, InterleavedReports):
            return await self._reports(turn, event, task, request)
        if isinstance(task, LabelledCalculation):
            return await self._labelled(turn, conversation, event, task)
        if isinstance(task, AmbiguousMention):
            return await self._ambiguous(turn, event, task)
        if isinstance(task, MultilineMessage) and self.naive:
            await self.finish(turn, event, task.escaped())
            return True
        if isinstance(task, NarrativeStatus) and self.naive:
            directory = await self.bridge.directory(turn)
            bots = [directory[name] for name in task.names if name in directory]
            await self.finish(turn, event, task.at_named(), also=bots)
            return True
        await self.finish(turn, event, await self.solve(turn, task))
        return True

    async def finish(self, turn: Turn, event: Event, body: str, also: list[str] | None = None) -> None:
        """The completion message: it is also the scored answer, so it carries the answer,
        the channel tag, the thread tag and a mention of the requesting user."""
        await self.bridge.post(turn, f"DONE: {body}", reply_to=self.reply_target(event),
                               mentions=[str(event.get("pubkey", "")), *(also or [])])

    async def solve(self, turn: Turn, task: Task | None) -> str:
        bridge = self.bridge
        if isinstance(task, (Projection, LicenseTotal, MultilineMessage, NarrativeStatus, LabelledCalculation)):
            return task.answer()
        if isinstance(task, NamedPath):
            content = bridge.read_file(turn, task.path)
            return task.answer(content) if content is not None else f"I could not read {task.path}."
        if isinstance(task, HelloFile):
            path = os.path.join(bridge.config.app_dir, task.filename)
            bridge.write_file(turn, path, task.content + "\n")
            return task.answer(path)
        if isinstance(task, SavedOutput):
            code, printed = await bridge.run_command(turn, task.command)
            if code == 0:
                bridge.write_file(turn, task.path, printed)
            return task.answer(code)
        if isinstance(task, ChannelInvite):
            return await self._invite(turn, task)
        return "I could not work out what this task asks for."

    async def _invite(self, turn: Turn, task: ChannelInvite) -> str:
        bridge = self.bridge
        directory = await bridge.directory(turn)
        missing = [name for name, _ in task.members if name not in directory]
        if missing:
            return f"I could not find {', '.join(missing)} in the directory; created nothing."
        channel_id = await bridge.create_channel(turn, task.name, task.ttl_seconds)
        for name, role in task.members:
            await bridge.add_member(turn, channel_id, directory[name], role)
        return task.answer(channel_id)

    async def _reports(self, turn: Turn, event: Event, task: InterleavedReports, request: Request) -> bool:
        if self.naive:  # answers at once from the task alone, and never again
            await self.finish(turn, event, task.partial(task.values([])))
            return True
        values = task.values([message.content for message in request.inputs])
        if not task.complete(values):
            return False  # wait: a later turn delivers the rest
        await self.finish(turn, event, task.answer(values))
        return True

    async def _labelled(self, turn: Turn, conversation: Conversation, event: Event,
                        task: LabelledCalculation) -> bool:
        if not self.naive:
            await self.finish(turn, event, task.answer())
            return True
        # naive: every answer so far in one message, in the first request's thread
        earlier = [(conversation.events[r.message.event_id], r.task)
                   for r in requests_of(conversation.messages(), self.instruction)
                   if isinstance(r.task, LabelledCalculation)]
        upto = earlier[: [e for e, _ in earlier].index(event) + 1]
        body = "\n".join(t.answer() for _, t in upto if isinstance(t, LabelledCalculation))
        await self.finish(turn, upto[0][0], body)
        return True

    async def _ambiguous(self, turn: Turn, event: Event, task: AmbiguousMention) -> bool:
        bridge = self.bridge
        members = await bridge.channel_members(turn, turn.channel)
        profiles = await bridge.profiles(turn, members)
        targets = task.namesakes(profiles) if self.naive else task.picks(profiles)
        if not targets or (len(targets) > 1 and not self.naive):
            found = len(task.picks(profiles))
            await self.finish(turn, event, f"I found {found} members named {task.name} whose profile says "
                                           f"{task.marker!r}; I sent nothing.")
            return True
        await bridge.post(turn, task.message, reply_to=self.reply_target(event), mentions=targets)
        await self.finish(turn, event, task.answer())
        return True


@register
class Oracle(Policy):
    name = "oracle"


@register
class TopLevel(Policy):
    """Right answer, wrong place: a new top-level message instead of a thread reply."""

    name = "toplevel"
    threaded = False


@register
class Naive(Policy):
    """The oracle on the first four tasks and hello-file; on each newer task the fault that task
    is there to catch: the multiline body with literal `\\n`, the bots @-named and p-tagged, the
    reports' synthesis sent at once from the task alone, both calculations in the first thread,
    every Taylor Morgan Lee notified."""

    name = "naive"
    naive = True


@register
class Silent(Policy):
    """Woken, reads the task, says nothing."""

    name = "silent"

    async def turn(self, turn: Turn) -> None:
        self.bridge.read(turn, turn.text)


@register
class Crash(Policy):
    """Dies mid-turn with a non-zero status, like a panicking binary."""

    name = "crash"
    EXIT_STATUS = 101

    async def turn(self, turn: Turn) -> None:
        self.bridge.read(turn, turn.text)
        self.bridge.log.error(ACP_TARGET, f"turn failed for {turn.session.session_id}: stand-in crash policy")
        sys.stderr.write("thread 'main' panicked: stand-in crash policy\n")
        sys.stderr.flush()
        os._exit(self.EXIT_STATUS)


@register
class Hang(Policy):
    """Solves the task but ignores SIGTERM for a while (BUZZ_STANDIN_HANG_SECONDS, default 30)."""

    name = "hang"

    @property
    def sigterm_grace_s(self) -> float:
        return self.bridge.config.hang_s


@register
class Leaky(Policy):
    """Writes its Nostr private key and model API key into its log — what the secret scan is for."""

    name = "leaky"

    def started(self) -> None:
        config = self.bridge.config
        self.bridge.log.info(ACP_TARGET, f"debug environment: BUZZ_PRIVATE_KEY={config.keys.secret.hex()} "
                                         f"nsec={encode_nsec(config.keys.secret)} "
                                         f"{config.api_key_env}={config.api_key}")


@register
class TeamLead(Policy):
    """An orchestrator that delegates the question to its first teammate (from the team table in
    its prompt) and answers only after the worker replies. Worker seats run the same policy and,
    mentioned by a teammate, just answer. Tasks that change relay state are done by the lead
    itself, since the verifier expects the orchestrator to own what it creates."""

    name = "team"

    async def handle(self, turn: Turn, conversation: Conversation, request: Request) -> bool:
        team = self.bridge.team
        event = conversation.events[request.message.event_id]
        delegable = isinstance(request.task, (Projection, LicenseTotal, NamedPath))
        if self.from_teammate(event) or not team.teammates or not delegable:
            return await super().handle(turn, conversation, request)
        worker = team.teammates[0]
        question = self.instruction(str(event.get("content", "")))
        answer = await self.bridge.ask(turn, event, worker.pubkey, worker.name, question)
        await self.finish(turn, event, strip_mention(str(answer.get("content", "")), team.name))
        return True
