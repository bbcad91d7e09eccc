"""The stand-in's buzz-agent loop against a model endpoint: when the seat's provider is a real one
(openai, anthropic), the model is not folded in but called over HTTP the way buzz-agent calls it.

Per turn: the prompt buzz-acp would send for the turn's batch (event_prompt.py) joins the
session's history, which holds every earlier turn as buzz-agent's session does; the
endpoint is asked; each shell tool call it returns runs as buzz-dev-mcp would run it (shell.py)
and its result goes back as a tool result; this repeats until a reply has no tool calls. The
session is billed the usage each response reports, and the turn's end logs the session's totals
as buzz-acp logs buzz-agent's usage notifications (`acp::usage`), so the ledger prices the
endpoint's numbers and nothing the stand-in estimated.

One usage line per turn, at its end, not one per response as buzz-agent sends them: the runtime
stops the seats at the first usage line after `DONE:` (docs/corridor.md#usage-settle settle), and a per-response line
would let it stop them before the turn's last response is billed — the endpoint would have served
tokens no receipt holds.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Mapping

from . import event_prompt, llm, shell
from .bridge import Bridge
from .endpoint import EndpointSettings
from .nostr import latest_by, tag_values
from .policies import Policy
from .turn import KIND_PROFILE, Turn

KIND_CHANNEL_METADATA = 39000
TOOL_TARGET = "acp::tool"  # where buzz-acp logs buzz-agent's tool-call notifications
LLM_TARGET = "buzz_agent::llm"
TOOLS = [llm.ToolSpec(shell.TOOL_NAME, shell.DESCRIPTION, shell.SCHEMA)]
MAX_ROUNDS_OUTCOME = "hit max_turn_requests"  # buzz-acp: "turn hit max_turn_requests for …"


class EndpointModel(Policy):
    name = "endpoint"

    def __init__(self, bridge: Bridge, settings: EndpointSettings, environ: Mapping[str, str] | None = None,
                 cwd: str | None = None) -> None:
        super().__init__(bridge)
        config = bridge.config
        parent = os.environ if environ is None else environ
        self.settings = settings
        self.cwd = cwd or os.getcwd()  # buzz-acp hands buzz-agent its own working directory
        self.shell_env = shell.child_env(parent, bin_dir=config.bin_dir, relay_url=config.relay_url,
                                         keys=config.keys, auth_tag=parent.get("BUZZ_AUTH_TAG"))
        self.histories: dict[str, list[llm.HistoryItem]] = {}
        self.locks: dict[str, asyncio.Lock] = {}

    def describe(self) -> str:
        return f"{self.settings.provider} endpoint {self.settings.url}"

    async def turn(self, turn: Turn) -> str | None:
        # one ACP session answers one prompt at a time; a second mention waits its turn
        lock = self.locks.setdefault(turn.session.session_id, asyncio.Lock())
        async with lock:
            history = self.histories.setdefault(turn.session.session_id, [])
            kept = len(history)
            try:
                outcome = await self._run(turn, history)
            except BaseException:
                # a failed or cancelled turn must not leave tool calls without results behind:
                # no dialect accepts that history, so the session would be poisoned for good
                del history[kept:]
                raise
            return outcome

    async def _prompt(self, turn: Turn) -> str:
        relay = self.bridge.relay
        metadata = latest_by(await relay.query([{"kinds": [KIND_CHANNEL_METADATA], "#d": [turn.channel]}]), "d")
        info = None
        if turn.channel in metadata:
            event = metadata[turn.channel]
            names, about = tag_values(event, "name"), tag_values(event, "about")
            info = event_prompt.ChannelInfo(names[0] if names else turn.channel, about[0] if about else None)
        wanted = event_prompt.batch_profiles(turn.events)
        profiles = event_prompt.lookup(await relay.query([{"kinds": [KIND_PROFILE], "authors": wanted}]))
        tags = ["@mention" if self.bridge.pubkey in event_prompt.mentions_of(event) else "channel message"
                for event in turn.events]
        return event_prompt.render_batch(turn.channel, info, turn.events, profiles, tags)

    def _body(self, history: list[llm.HistoryItem]) -> dict[str, object]:
        system = self.bridge.config.system_prompt
        if self.settings.provider == "anthropic":
            return llm.anthropic_body(self.settings, system, history, TOOLS)
        return llm.openai_body(self.settings, system, history, TOOLS, self.settings.effort)

    def _parse(self, answer: dict[str, object]) -> llm.Reply:
        return llm.parse_anthropic(answer) if self.settings.provider == "anthropic" else llm.parse_openai(answer)

    async def _run(self, turn: Turn, history: list[llm.HistoryItem]) -> str | None:
        bridge, settings = self.bridge, self.settings
        history.append(llm.UserItem(await self._prompt(turn)))
        rounds = 0
        while True:
            if settings.max_rounds and rounds >= settings.max_rounds:
                bridge.agent_log.warn(LLM_TARGET, f"max_turn_requests: {rounds} model calls this turn "
                                                  f"(BUZZ_AGENT_MAX_ROUNDS={settings.max_rounds})")
                return MAX_ROUNDS_OUTCOME
            reply = self._parse(await llm.complete(settings, self._body(history)))
            rounds += 1
            if reply.usage is not None:
                usage = reply.usage
                turn.session.bill(usage.input_tokens, usage.output_tokens, usage.cached_tokens)
            bridge.agent_log.info(LLM_TARGET, f"round {rounds}: stop={reply.stop or '-'} "
                                              f"tool_calls={len(reply.calls)}")
            history.append(llm.AssistantItem(reply.text, reply.calls))
            if not reply.calls:
                return None
            for call in reply.calls:
                history.append(await self._call(call))

    async def _call(self, call: llm.ToolCall) -> llm.ToolResultItem:
        log = self.bridge.log
        log.info(TOOL_TARGET, f"tool_call: {call.name} (other)")
        if call.bad_arguments is not None:
            text, is_error = f"invalid tool call: {call.bad_arguments}", True
        elif call.name != shell.TOOL_NAME:
            text, is_error = f"unknown tool {call.name!r}; available: {shell.TOOL_NAME}", True
        else:
            text, is_error = await shell.run(call.arguments, cwd=self.cwd, env=self.shell_env)
        log.info(TOOL_TARGET, f"tool_call_update: {call.call_id} → {'failed' if is_error else 'completed'}")
        return llm.ToolResultItem(call.call_id, text, is_error)
