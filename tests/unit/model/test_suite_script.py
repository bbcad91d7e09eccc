"""The scripted model on the Buzz-native suite's five newer tasks, driven as Block's stack drives
it and graded by the tasks' own verify.py.

The driver plays buzz-acp and buzz-agent: prompts rendered as buzz-acp renders a batch, request
bodies built as buzz-agent builds them in either dialect (the stand-in's llm.py), one session
whose history keeps every earlier turn (buzz-agent's), each shell call run by the stand-in `buzz`
CLI against an in-memory relay and handed back in buzz-dev-mcp's JSON envelope. Events reach the
model in one of two ways:

- queue: a turn delivers its batch; events split over turns any way (the stand-in's queueing,
  and buzz-acp with --multiple-event-handling queue);
- steer: buzz-acp's default — an event arriving mid-turn is steered into the running turn and
  buzz-agent appends it at the next round boundary as one more user message, framed as
  `[New message — arrived while you were working]` (lib.rs try_native_steer). The harness
  publishes the scripted events right after the task, so they arrive during the first turn's
  first round; one accepted during a round with no boundary after it (the turn's last model call)
  is lost, as with buzz-agent, which drops undrained steers when the run ends.
"""

from __future__ import annotations

import json
import shlex
from typing import Any

import pytest
from buzz_operator.dev.agent import cli, event_prompt, llm, shell
from buzz_operator.dev.agent.endpoint import EndpointSettings
from buzz_operator.dev.model import anthropic_messages, openai_chat
from buzz_operator.dev.model.script import END_OF_TURN, PAUSE_S, WAITING, answer

from tests.unit.agent.suite_trial import (
    CHANNEL,
    EXPECTED_FAILURES,
    Trial,
    failed,
    grade,
    instruction,
    splits,
)

pytestmark = pytest.mark.unit
TOOLS = [llm.ToolSpec(shell.TOOL_NAME, shell.DESCRIPTION, shell.SCHEMA)]
STEER_HEADER = "[New message — arrived while you were working]"
STEER_NOTE = ("Note: A new message arrived while you were working. Continue your in-progress work and "
              "incorporate the new message if it's relevant; if it's unrelated, you may briefly acknowledge "
              "it and carry on.")
MAX_ROUNDS = 12


def _settings(dialect: str, policy: str) -> EndpointSettings:
    return EndpointSettings(provider=dialect, model=f"scripted/{policy}", base_url="http://model", api_key="k",
                            anthropic_version="2023-06-01", max_output_tokens=1000, max_rounds=0, timeout_s=5)


class Agent:
    """buzz-acp + buzz-agent + buzz-dev-mcp around the scripted model, on one trial."""

    def __init__(self, trial: Trial, dialect: str, policy: str) -> None:
        self.trial, self.dialect = trial, dialect
        self.settings = _settings(dialect, policy)
        self.history: list[llm.HistoryItem] = []
        self.requests: list[dict[str, Any]] = []
        self.replies: list[llm.Reply] = []
        self.pauses = 0
        self.lost: list[dict[str, Any]] = []

    async def _profiles(self, events: list[dict[str, Any]]) -> dict[str, event_prompt.Profile]:
        wanted = event_prompt.batch_profiles(events)
        return event_prompt.lookup(await self.trial.agent_relay.query([{"kinds": [0], "authors": wanted}]))

    async def prompt(self, events: list[dict[str, Any]]) -> str:
        info = event_prompt.ChannelInfo("trial-room")
        return event_prompt.render_batch(CHANNEL, info, events, await self._profiles(events),
                                         ["@mention"] * len(events))

    @staticmethod
    def steer(event: dict[str, Any]) -> str:
        """lib.rs try_native_steer: no channel info, no profiles — a delta into a live turn."""
        block = event_prompt.event_block(CHANNEL, None, event, {})
        return f"{STEER_HEADER}\n\n[Buzz event: @mention]\n{block}\n\n{STEER_NOTE}"

    def _ask(self) -> llm.Reply:
        system = "You are `solo-1`."
        if self.dialect == "anthropic":
            body = llm.anthropic_body(self.settings, system, self.history, TOOLS)
            turn = anthropic_messages.parse(body, len(json.dumps(body)))
            reply = llm.parse_anthropic(anthropic_messages.respond(turn, answer(turn), "msg-1"))
        else:
            body = llm.openai_body(self.settings, system, self.history, TOOLS, None)
            turn = openai_chat.parse(body, len(json.dumps(body)))
            reply = llm.parse_openai(openai_chat.respond(turn, answer(turn), "chatcmpl-1"))
        self.requests.append(body)
        self.replies.append(reply)
        return reply

    async def run(self, command: str) -> str:
        """One shell call as buzz-dev-mcp answers it; `buzz` is the stand-in CLI on the trial relay."""
        words = shlex.split(command)  # bash -c's word splitting of what the model quoted
        if words[0] == "sleep":
            self.pauses += 1
            return shell.envelope(0, b"", b"", timed_out=False, duration_ms=int(float(words[1]) * 1000), notes=[])
        assert words[0] == "buzz", command
        args = cli._parser().parse_args(words[1:])
        cli.check_usage(args)
        result = await cli.execute(args, self.trial.agent_relay)
        return shell.envelope(0, (json.dumps(result) + "\n").encode(), b"", timed_out=False, duration_ms=1, notes=[])

    async def turn(self, events: list[dict[str, Any]], steer: list[dict[str, Any]] | None = None) -> None:
        """One turn delivering `events`; `steer` events arrive during its first round and land at
        the round's boundary — or are lost when the round has none (it ended the turn)."""
        self.history.append(llm.UserItem(await self.prompt(events)))
        waiting = list(steer or [])
        for _ in range(MAX_ROUNDS):
            reply = self._ask()
            self.history.append(llm.AssistantItem(reply.text, reply.calls))
            if not reply.calls:
                self.lost += waiting  # accepted by buzz-acp, never drained by buzz-agent
                return
            for call in reply.calls:
                self.history.append(llm.ToolResultItem(call.call_id, await self.run(call.arguments["command"])))
            while waiting:  # agent.rs drain_steers at the round boundary
                self.history.append(llm.UserItem(self.steer(waiting.pop(0))))
        raise AssertionError("the turn never ended")


async def play_queue(task: str, policy: str, dialect: str, split: list[list[int]]) -> tuple[Trial, Agent]:
    trial = Trial(task, instruction(task))
    events = trial.publish()
    agent = Agent(trial, dialect, policy)
    for group in split:
        await agent.turn([events[i] for i in group])
    return trial, agent


async def play_steer(task: str, policy: str, dialect: str) -> tuple[Trial, Agent]:
    """The harness sends the scripted events right after the task: they arrive during turn 1."""
    trial = Trial(task, instruction(task))
    task_event, *scripted = trial.publish()
    agent = Agent(trial, dialect, policy)
    await agent.turn([task_event], steer=scripted)
    assert agent.lost == []  # every policy keeps a round boundary open while they arrive
    return trial, agent


def _check(task: str, policy: str, trial: Trial) -> None:
    expected = EXPECTED_FAILURES[task].get(policy, set())
    for path, metrics in grade(task, trial.evidence()).items():
        assert failed(metrics) == expected, (path, metrics, [e["content"] for e in trial.posted()])


QUEUE_CASES = [(task, policy, dialect, name, split)
               for task in EXPECTED_FAILURES for policy in ("oracle", "toplevel", "naive")
               for dialect in ("openai", "anthropic")
               for name, split in splits(1 + len(Trial(task, "").fixture.scripted)).items()]


@pytest.mark.parametrize(("task", "policy", "dialect", "split_name", "split"), QUEUE_CASES,
                         ids=[f"{t}-{p}-{d}-{n}" for t, p, d, n, _ in QUEUE_CASES])
async def test_queued_batches_in_any_split(task: str, policy: str, dialect: str, split_name: str,
                                           split: list[list[int]]) -> None:
    trial, _ = await play_queue(task, policy, dialect, split)
    _check(task, policy, trial)


STEER_CASES = [(task, policy, dialect) for task in EXPECTED_FAILURES if Trial(task, "").fixture.scripted
               for policy in ("oracle", "toplevel", "naive") for dialect in ("openai", "anthropic")]


@pytest.mark.parametrize(("task", "policy", "dialect"), STEER_CASES, ids=["-".join(c) for c in STEER_CASES])
async def test_steered_into_the_running_turn_as_buzz_acp_does_by_default(task: str, policy: str,
                                                                         dialect: str) -> None:
    trial, _ = await play_steer(task, policy, dialect)
    _check(task, policy, trial)


async def test_the_second_turns_request_holds_the_first_and_nothing_is_answered_twice() -> None:
    trial, agent = await play_queue("cross-thread-requests", "oracle", "openai", [[0], [1]])
    second_turn = next(body for body in agent.requests
                       if sum(m["role"] == "user" for m in body["messages"]) == 2)
    users = [m["content"] for m in second_turn["messages"] if m["role"] == "user"]
    assert "ALPHA request" in users[0] and "BETA request" in users[1]  # the first prompt is still there
    assert [e["content"] for e in trial.posted()] == ["DONE: ALPHA result: 346", "DONE: BETA result: 41"]
    assert agent.replies[-1].text == END_OF_TURN


@pytest.mark.parametrize("dialect", ["openai", "anthropic"])
async def test_a_batched_prompt_is_answered_request_by_request(dialect: str) -> None:
    trial, agent = await play_queue("cross-thread-requests", "oracle", dialect, [[0, 1]])
    (first_prompt,) = [item.text for item in agent.history if isinstance(item, llm.UserItem)]
    assert "[Buzz events — 2 events]" in first_prompt and "--- Event 2 (@mention) ---" in first_prompt
    sends = [shlex.split(reply.calls[0].arguments["command"]) for reply in agent.replies if reply.calls]
    roots = [words[words.index("--reply-to") + 1] for words in sends]
    assert roots == [trial.task_event["id"], trial.scripted_events[0]["id"]]
    assert [words[words.index("--content") + 1] for words in sends] == ["DONE: ALPHA result: 346",
                                                                          "DONE: BETA result: 41"]


async def test_while_reports_are_missing_each_turn_pauses_once_then_ends_waiting() -> None:
    trial, agent = await play_queue("interleaved-agent-reports", "oracle", "anthropic", [[0], [1], [2]])
    assert trial.posted() == [] and agent.pauses == 3
    assert [r.text for r in agent.replies if not r.calls] == [WAITING] * 3
    assert [c.arguments["command"] for r in agent.replies for c in r.calls] == [f"sleep {PAUSE_S}"] * 3
    await agent.turn([trial.scripted_events[2]])
    (posted,) = trial.posted()
    assert posted["content"].endswith("Final value: (17 + 23 - 11) * 3 = 87")
    assert agent.replies[-1].text == END_OF_TURN and agent.pauses == 3  # complete: no pause


async def test_without_the_pause_a_report_steered_during_the_waiting_reply_is_lost(monkeypatch) -> None:
    """Why the oracle pauses: a turn that ends at once leaves no round boundary for the steered
    reports (buzz-agent drops them with the run; buzz-acp has logged them delivered)."""
    from buzz_operator.dev.model import script

    real = script._Steps.done
    monkeypatch.setattr(script._Steps, "done", lambda self, step, index=0: step == "pause" or real(self, step, index))
    trial = Trial("interleaved-agent-reports", instruction("interleaved-agent-reports"))
    task_event, *reports = trial.publish()
    agent = Agent(trial, "openai", "oracle")
    await agent.turn([task_event], steer=reports)
    assert agent.lost == reports and trial.posted() == []


async def test_the_multiline_send_quotes_real_newlines_and_naive_escapes_them() -> None:
    for policy, newline in (("oracle", "\n"), ("naive", "\\n")):
        _, agent = await play_queue("multiline-message", policy, "openai", [[0]])
        command = agent.replies[0].calls[0].arguments["command"]
        content = shlex.split(command)[shlex.split(command).index("--content") + 1]
        assert content == f"DONE: Release readiness{newline}{newline}- API: ready{newline}- Database: ready" \
                          f"{newline}- Rollback: tested{newline}{newline}Owner: Platform Operations"


async def test_ambiguous_mention_reads_profiles_about_and_the_channels_members() -> None:
    trial, agent = await play_queue("ambiguous-user-mention", "oracle", "openai", [[0]])
    lookups = [call.arguments["command"] for call in agent.replies[0].calls]
    assert lookups == ["buzz users get --name 'Taylor Morgan Lee'", f"buzz channels members --channel {CHANNEL}"]
    result = json.loads(json.loads(agent.requests[1]["messages"][-2]["content"])["stdout"])
    assert {row["about"] for row in result} == {"Release captain. Routing code ORCHID-72.",
                                                "Compliance observer. Routing code COBALT-19."}
    delivery, callback = trial.posted()
    assert delivery["content"] == "ORCHID-72 approved" and "sent" in callback["content"].casefold()


async def test_ambiguous_mention_reads_members_profiles_when_the_name_search_finds_none(monkeypatch) -> None:
    """A relay whose NIP-50 search matches differently: the members' profiles are read by pubkey."""
    trial = Trial("ambiguous-user-mention", instruction("ambiguous-user-mention"))
    trial.publish()
    agent = Agent(trial, "anthropic", "oracle")
    real_run = agent.run

    async def run(command: str) -> str:
        return shell.envelope(0, b"[]\n", b"", timed_out=False, duration_ms=1, notes=[]) \
            if command.startswith("buzz users get --name") else await real_run(command)

    monkeypatch.setattr(agent, "run", run)
    await agent.turn([trial.task_event])
    assert any(c.arguments["command"].startswith("buzz users get --pubkey ") for r in agent.replies for c in r.calls)
    _check("ambiguous-user-mention", "oracle", trial)


async def test_naive_p_tags_the_channels_bots_not_namesakes_elsewhere_on_the_relay() -> None:
    """On a shared relay other trials' bots share the names; the CLI refuses a mention of a
    non-member, so naive picks the bots that are members of this channel."""
    from buzz_operator.dev.agent.nostr import sign_event

    from tests.unit.agent.suite_trial import keys_for

    trial = Trial("narrative-agent-names", instruction("narrative-agent-names"))
    for name in ("Aurora Audit Bot", "Beacon Deploy Bot"):
        trial.store.events.append(sign_event(keys_for(f"elsewhere:{name}"), 0, json.dumps({"name": name}), [],
                                             created_at=trial.store.tick()))
    trial.publish()
    agent = Agent(trial, "openai", "naive")
    await agent.turn([trial.task_event])
    (posted,) = trial.posted()
    bots = {i.pubkey for i in trial.fixture.directory}
    assert {t[1] for t in posted["tags"] if t[0] == "p"} == bots | {trial.user.pubkey}
    _check("narrative-agent-names", "naive", trial)
