"""Stand-in "models": a registry of small policy classes keyed by the endpoint suffix
(`BUZZ_AGENT_MODEL=standin/<policy>`). Each decides what one turn does through the bridge's
tools; add a behaviour by subclassing and decorating with @register.

What a model *says* belongs to the scripted model endpoint (buzz_operator.dev.model), which the
stand-in calls as buzz-agent would (model_loop.py): a runaway biller, for one, is its `spender`.
These stay folded in because they model the agent *process* or need no model server where they
run: crash, hang and leaky are process behaviour; team delegates between two live seats; and
oracle, toplevel and silent give the pod, operator and fault tiers a trial with one moving part
less (their outcomes through the endpoint are tests/integration/agent/test_scripted_trials.py).
"""

from __future__ import annotations

import os
import sys

from .bridge import Bridge
from .nostr import encode_nsec
from .tasks import (
    ChannelInvite,
    HelloFile,
    LicenseTotal,
    NamedPath,
    Projection,
    Task,
    recognise,
    strip_mention,
)
from .tracing import ACP_TARGET
from .turn import Turn

POLICIES: dict[str, type[Policy]] = {}


def register(cls: type[Policy]) -> type[Policy]:
    POLICIES[cls.name] = cls
    return cls


class Policy:
    """Base behaviour (the oracle): solve the task the right way and end with `DONE:`."""

    name = ""
    threaded = True

    def __init__(self, bridge: Bridge) -> None:
        self.bridge = bridge

    @property
    def sigterm_grace_s(self) -> float:
        """How long SIGTERM is ignored (0 = exit promptly, like the real buzz-acp)."""
        return 0.0

    def started(self) -> None:
        """Hook run once before connecting."""

    def describe(self) -> str:
        """How the startup line names where this seat's model lives."""
        return self.name

    def instruction(self, turn: Turn) -> str:
        return strip_mention(turn.text, self.bridge.team.name)

    def from_teammate(self, turn: Turn) -> bool:
        return any(mate.pubkey == turn.author for mate in self.bridge.team.teammates)

    async def turn(self, turn: Turn) -> str | None:
        """Play one turn. None when it ran to its end; otherwise how it ended, as buzz-acp words
        it in `turn <outcome> for …` (e.g. `hit max_turn_requests`)."""
        self.bridge.read(turn, turn.text)
        task = recognise(self.instruction(turn))
        body = await self.solve(turn, task)
        if self.from_teammate(turn):
            # a teammate's question: answer it in the thread, the task is not ours to finish
            await self.bridge.post(turn, body, mentions=[turn.author])
            return None
        await self.finish(turn, body)
        return None

    async def finish(self, turn: Turn, body: str) -> None:
        """The completion message: it is also the scored answer, so it carries the answer,
        the channel tag, the thread tag and a mention of the requesting user."""
        await self.bridge.post(turn, f"DONE: {body}", thread=self.threaded, mentions=[turn.author])

    async def solve(self, turn: Turn, task: Task | None) -> str:
        bridge = self.bridge
        if isinstance(task, (Projection, LicenseTotal)):
            return task.answer()
        if isinstance(task, NamedPath):
            content = bridge.read_file(turn, task.path)
            return task.answer(content) if content is not None else f"I could not read {task.path}."
        if isinstance(task, HelloFile):
            path = os.path.join(bridge.config.app_dir, task.filename)
            bridge.write_file(turn, path, task.content + "\n")
            return task.answer(path)
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


@register
class Oracle(Policy):
    name = "oracle"


@register
class TopLevel(Policy):
    """Right answer, wrong place: a new top-level message instead of a thread reply."""

    name = "toplevel"
    threaded = False


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

    async def turn(self, turn: Turn) -> None:
        team = self.bridge.team
        task = recognise(self.instruction(turn))
        delegable = isinstance(task, (Projection, LicenseTotal, NamedPath))
        if self.from_teammate(turn) or not team.teammates or not delegable:
            await super().turn(turn)
            return
        self.bridge.read(turn, turn.text)
        worker = team.teammates[0]
        answer = await self.bridge.ask(turn, worker.pubkey, worker.name, self.instruction(turn))
        body = strip_mention(str(answer.get("content", "")), team.name)
        await self.finish(turn, body)
