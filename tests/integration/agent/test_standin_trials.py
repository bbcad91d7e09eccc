"""Stand-in seats launched as the operator launches them (stack zipapps, agent_env, logs to
<seat>.stdout.log/.stderr.log, stdin /dev/null) against the dev relay through the stack's
forwarder, each trial graded by its task's real tests/test.sh."""

from __future__ import annotations

import json
import re
import signal

import pytest
from buzz_operator.ledger.secret_scan import scan_bundle

NATIVE_TASKS = ["reply-to-thread", "user-mention", "create-channel-invite-users",
                "read-named-path-outside-workspace"]
USAGE = re.compile(r"goose usage update session_id=(\S+) input=(\d+) output=(\d+) cached=(\d+)")

pytestmark = pytest.mark.timeout(180)


def _dimensions_failing(reward: dict[str, float]) -> set[str]:
    return {name for name, value in reward.items() if name not in ("reward", "refusal_free") and value != 1.0}


@pytest.mark.parametrize("task_name", NATIVE_TASKS)
async def test_oracle_scores_full_reward(trial, task_name: str) -> None:
    outcome = await trial(policy="oracle", task_name=task_name)
    assert outcome.completion is not None and outcome.completion["content"].startswith("DONE:")
    assert outcome.reward["reward"] == 1.0, outcome.reward
    seat = outcome.seats[0]
    log = seat.log_text()
    assert USAGE.search(log) is not None
    assert "turn complete for " in log
    assert seat.exit_before_stop is None  # alive until stopped (idles like the real one) ...
    assert seat.process.returncode == 0  # ... and SIGTERM ends it promptly and cleanly
    assert outcome.api_key not in log and outcome.secrets.seats[seat.seat_id].secret_hex not in log


async def test_oracle_writes_the_hello_file(trial) -> None:
    outcome = await trial(policy="oracle", task_name="hello-file")
    assert outcome.completion is not None
    assert outcome.reward == {"reward": 1.0}


@pytest.mark.parametrize("task_name", NATIVE_TASKS)
async def test_toplevel_fails_only_reply_to_thread(trial, task_name: str) -> None:
    outcome = await trial(policy="toplevel", task_name=task_name)
    assert outcome.completion is not None
    failing = _dimensions_failing(outcome.reward)
    if task_name == "reply-to-thread":
        assert failing == {"reply_to_thread"}, outcome.reward
        assert outcome.reward["reward"] == 0.0
    else:
        assert failing == set() and outcome.reward["reward"] == 1.0, outcome.reward


async def test_silent_never_finishes(trial) -> None:
    outcome = await trial(policy="silent", task_name="reply-to-thread", done_budget_s=4)
    assert outcome.completion is None
    assert outcome.reward["reward"] == 0.0
    log = outcome.seats[0].log_text()
    assert "turn complete for " in log  # woken, read the task, said nothing
    usage = USAGE.findall(log)
    assert usage and int(usage[-1][1]) > 0 and int(usage[-1][2]) == 0
    assert all(m["pubkey"] != outcome.handle.orchestrator.pubkey for m in outcome.evidence["messages"])


async def test_crash_is_dead_before_the_trial_ends(trial) -> None:
    outcome = await trial(policy="crash", task_name="reply-to-thread", done_budget_s=4)
    assert outcome.completion is None
    seat = outcome.seats[0]
    assert seat.exit_before_stop == 101  # what the runtime's liveness probe sees: exited, non-zero
    assert "panicked" in seat.log_text()


async def test_leaky_writes_its_secrets_into_the_log(trial) -> None:
    outcome = await trial(policy="leaky", task_name="user-mention")
    seat = outcome.seats[0]
    log = seat.log_text()
    assert outcome.secrets.seats[seat.seat_id].secret_hex in log
    assert outcome.api_key in log
    assert re.search(r"\bnsec1[02-9ac-hj-np-z]{20,}", log, re.IGNORECASE)  # the scan's nostr-private-key kind
    assert outcome.reward["reward"] == 1.0  # the leak is the only thing wrong with it
    # and the bundle's secret scan (§5.4) catches it, naming the kinds but never the secret
    scan = scan_bundle(outcome.directory, [*outcome.secrets.secret_strings(), outcome.api_key])
    assert not scan.clean
    kinds = {finding["kind"] for finding in scan.to_json()["findings"]}
    assert {"trial-credential", "nostr-private-key"} <= kinds
    assert outcome.api_key not in json.dumps(scan.to_json())


async def test_hang_ignores_sigterm_until_killed(trial) -> None:
    outcome = await trial(policy="hang", task_name="user-mention", extra_env={"BUZZ_STANDIN_HANG_SECONDS": "30"})
    seat = outcome.seats[0]
    assert outcome.reward["reward"] == 1.0
    assert "received SIGTERM; ignoring it" in seat.log_text()
    assert seat.process.returncode == -signal.SIGKILL


async def test_spender_reports_runaway_usage(trial) -> None:
    outcome = await trial(policy="spender", task_name="user-mention")
    usage = USAGE.findall(outcome.seats[0].log_text())
    assert int(usage[-1][1]) >= 50_000_000 and int(usage[-1][2]) >= 5_000_000
    assert outcome.reward["reward"] == 1.0


@pytest.mark.parametrize("task_name", ["reply-to-thread", "read-named-path-outside-workspace"])
async def test_team_lead_waits_for_its_worker(trial, task_name: str) -> None:
    outcome = await trial(policy="team", task_name=task_name)
    assert outcome.reward["reward"] == 1.0, outcome.reward
    lead, worker = outcome.handle.seats
    by_author = {}
    for message in outcome.evidence["messages"]:
        by_author.setdefault(message["pubkey"], []).append(message)
    delegation, done = by_author[lead.pubkey]
    (answer,) = by_author[worker.pubkey]
    assert worker.pubkey in delegation["mentioned_pubkeys"] and delegation["content"].startswith("@worker-1 ")
    assert lead.pubkey in answer["mentioned_pubkeys"]
    assert delegation["created_at"] < answer["created_at"] < done["created_at"]
    assert done["content"].startswith("DONE:") and done["reply_to_event_id"] == outcome.task_event_id
    assert "turn complete for " in outcome.seat("worker-1").log_text()
