"""The folded-in policies on the Buzz-native suite's five newer tasks, graded by the tasks' own
verify.py: the oracle passes every dimension, toplevel and naive fail exactly the dimensions of
EXPECTED_FAILURES (docs/scripted-model.md), however the task and its scripted events are split
into turns. Also: naive is the oracle on the first suite, and the log holds Block's completion
evidence (every scripted event in a delivery receipt, as many turn starts as turn ends)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from buzz_operator.dev.agent.acp import run_turn
from buzz_operator.dev.agent.policies import POLICIES
from buzz_operator.dev.agent.turn import Turn

from tests.unit.agent.suite_play import bridge_for, idle, play
from tests.unit.agent.suite_trial import (
    CHANNEL,
    EXPECTED_FAILURES,
    Trial,
    failed,
    grade,
    splits,
)

pytestmark = pytest.mark.timeout(120)
TURN_ENDS = ("turn complete for", "turn cancelled for", "turn hit max_tokens for",
             "turn hit max_turn_requests for", "turn refused for")
RECEIPT = re.compile(r"INFO pool::prompt: turn delivered Buzz events for channel (\S+): ([0-9a-f,]+)$")


def _completion_evidence(trial: Trial, log: str) -> None:
    """Block's solo completion rule holds at the end (container_runtime.py _parse_turn_status)."""
    starts = log.count("turn starting for")
    ends = sum(log.count(marker) for marker in TURN_ENDS)
    assert starts > 0 and starts == ends == log.count("turn started for "), log
    delivered = set()
    for line in log.splitlines():
        match = RECEIPT.search(line)
        if match:
            assert match.group(1) == CHANNEL
            ids = match.group(2).split(",")
            assert ids == sorted(ids)
            delivered.update(ids)
    assert {trial.task_event["id"], *(e["id"] for e in trial.scripted_events)} <= delivered


CASES = [(task, policy, name, split) for task in EXPECTED_FAILURES for policy in ("oracle", "toplevel", "naive")
         for name, split in splits(1 + len(Trial(task, "").fixture.scripted)).items()]


@pytest.mark.parametrize(("task", "policy", "split_name", "split"), CASES,
                         ids=[f"{t}-{p}-{n}" for t, p, n, _ in CASES])
async def test_each_policy_fails_exactly_its_dimensions(task: str, policy: str, split_name: str,
                                                        split: list[list[int]], tmp_path: Path) -> None:
    trial, log = await play(task, policy, split, tmp_path)
    _completion_evidence(trial, log)
    expected = EXPECTED_FAILURES[task].get(policy, set())
    for path, metrics in grade(task, trial.evidence()).items():
        assert failed(metrics) == expected, (path, metrics, [e["content"] for e in trial.posted()])
        assert metrics["reward"] == (0.0 if expected else 1.0)


@pytest.mark.parametrize("task", list(EXPECTED_FAILURES))
async def test_events_arriving_during_the_first_turn_are_delivered_together_next(task: str, tmp_path: Path) -> None:
    """Through the bridge as the harness publishes them: the task starts a turn at once, every
    scripted event arriving meanwhile waits, and the next turn delivers them as one batch."""
    trial, log = await play(task, "oracle", None, tmp_path)
    receipts = [RECEIPT.search(line).group(2).split(",") for line in log.splitlines() if RECEIPT.search(line)]
    scripted = sorted(e["id"] for e in trial.scripted_events)
    assert receipts == ([[trial.task_event["id"]], scripted] if scripted else [[trial.task_event["id"]]])
    _completion_evidence(trial, log)
    assert all(m["reward"] == 1.0 for m in grade(task, trial.evidence()).values())


async def test_the_oracle_waits_for_every_report_before_its_one_answer(tmp_path: Path) -> None:
    trial, log = await play("interleaved-agent-reports", "oracle", [[0], [1], [2], [3]], tmp_path)
    (answer,) = trial.posted()
    assert answer["created_at"] > max(e["created_at"] for e in trial.scripted_events)
    assert answer["content"].endswith("Final value: (17 + 23 - 11) * 3 = 87")
    assert [t for t in answer["tags"] if t[0] == "p"] == [["p", trial.user.pubkey]]
    assert log.count("turn complete for") == 4


async def test_cross_thread_answers_each_request_in_its_own_thread(tmp_path: Path) -> None:
    trial, _ = await play("cross-thread-requests", "oracle", [[0, 1]], tmp_path)
    alpha, beta = trial.posted()
    assert alpha["content"] == "DONE: ALPHA result: 346" and beta["content"] == "DONE: BETA result: 41"
    assert ["e", trial.task_event["id"], "", "reply"] in alpha["tags"]
    assert ["e", trial.scripted_events[0]["id"], "", "reply"] in beta["tags"]


async def test_ambiguous_mention_messages_the_right_taylor_then_calls_back(tmp_path: Path) -> None:
    trial, _ = await play("ambiguous-user-mention", "oracle", [[0]], tmp_path)
    delivery, callback = trial.posted()
    captain = next(i for i in trial.fixture.directory if i.key == "taylor-release-captain")
    assert delivery["content"] == "ORCHID-72 approved"
    assert [t for t in delivery["tags"] if t[0] == "p"] == [["p", captain.pubkey]]
    assert [t for t in callback["tags"] if t[0] == "p"] == [["p", trial.user.pubkey]]
    assert "sent" in callback["content"].casefold()


async def test_multiline_goes_out_with_real_newlines_and_naive_with_escapes(tmp_path: Path) -> None:
    trial, _ = await play("multiline-message", "oracle", [[0]], tmp_path / "o")
    (message,) = trial.posted()
    assert "Release readiness\n\n- API: ready\n" in message["content"] and "\\n" not in message["content"]
    trial, _ = await play("multiline-message", "naive", [[0]], tmp_path / "n")
    (message,) = trial.posted()
    assert "Release readiness\\n\\n- API: ready\\n" in message["content"] and "\n" not in message["content"]


FIRST_SUITE = {
    "user-mention": "We are buying 12 seats of a tool that costs $37 per license per month. What is the total "
                    "annual cost?",
    "reply-to-thread": "Month 0 revenue is $120,000 and month 0 expenses are $75,000. Revenue grows 5% per month "
                       "and expenses grow 2% per month. Project months 1 through 6.",
    "read-named-path-outside-workspace": "Read the explicitly named file `{home}/SKILL.md`. Report its exact "
                                         "`CHECK_ID` and `ACTION` values.",
    "hello-file": "Create a file at `/app/hello.txt` whose content is exactly `Hello, world!`.",
    "create-channel-invite-users": "Please create a temporary private stream channel named `fix-pr-1234` that "
                                   "lasts for one hour. Add these people to it as members: benchmark-user-07",
}


@pytest.mark.parametrize("task", list(FIRST_SUITE))
async def test_naive_is_the_oracle_on_the_first_suite(task: str, tmp_path: Path) -> None:
    (tmp_path / "SKILL.md").write_text("CHECK_ID: c-42\nACTION: rotate\n")
    text = FIRST_SUITE[task].format(home=tmp_path)
    posted = {}
    for policy in ("oracle", "naive"):
        trial = Trial(task, text)
        trial.store.events.append(trial.relay(trial.user).sign(0, '{"name":"benchmark-user-07"}', []))
        trial.publish()
        bridge, _ = bridge_for(trial, policy, tmp_path)
        model = POLICIES[policy](bridge)
        bridge.pending[CHANNEL].append(trial.task_event)

        async def on_turn(turn: Turn, model=model, bridge=bridge) -> None:
            await run_turn(bridge, model, turn)

        bridge.dispatch(CHANNEL, on_turn)
        await idle(bridge)
        posted[policy] = [(e["kind"], re.sub(r"[0-9a-f-]{36}", "<uuid>", e["content"]),
                           [t for t in e["tags"] if t[0] in ("e", "p", "name", "role", "ttl")])
                          for e in trial.store.events if e["pubkey"] == trial.orchestrator.pubkey]
    assert posted["naive"] == posted["oracle"] and posted["oracle"]
    assert posted["oracle"][-1][1].startswith("DONE: ") and "could not" not in posted["oracle"][-1][1]


@pytest.mark.parametrize(("command", "saved"), [("printf 'Hello, world!'", True), ("sh -c 'kill -9 $$'", False)])
async def test_the_oracle_runs_a_command_and_saves_what_it_prints_only_when_it_succeeds(
        command: str, saved: bool, tmp_path: Path) -> None:
    out = tmp_path / "hello.txt"
    trial = Trial("hello-file", f"Run `{command}` in a shell and save what it prints to `{out}`.")
    trial.publish()
    bridge, _ = bridge_for(trial, "oracle", tmp_path)
    model = POLICIES["oracle"](bridge)
    bridge.pending[CHANNEL].append(trial.task_event)

    async def on_turn(turn: Turn) -> None:
        await run_turn(bridge, model, turn)

    bridge.dispatch(CHANNEL, on_turn)
    await idle(bridge)
    done = [e["content"] for e in trial.store.events if e["pubkey"] == trial.orchestrator.pubkey]
    assert out.exists() is saved
    if saved:
        assert out.read_text() == "Hello, world!" and done[-1].startswith("DONE: Ran the command")
    else:  # killed as the kernel's OOM killer kills: SIGKILL, which a shell reports as 137
        assert done[-1] == f"DONE: The command failed (exit 137); nothing saved to {out}."
