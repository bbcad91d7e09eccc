"""Stand-in seats launched as the operator launches them (stack zipapps, agent_env, logs to
<seat>.stdout.log/.stderr.log, stdin /dev/null) against the dev relay through the stack's
forwarder, each trial graded by its task's real tests/test.sh.

These are the policies folded into the stand-in: process behaviour (crash, leaky, hang), a team of
two live seats, and the oracle where the endpoint cannot reach (hello-file writes to /app). What a
model answers — oracle, toplevel, silent, spender on every Buzz-native task — runs through the
scripted model endpoint in test_scripted_trials.py."""

from __future__ import annotations

import json
import re
import signal

import pytest
from buzz_operator.ledger.secret_scan import scan_bundle

pytestmark = pytest.mark.timeout(180)


async def test_oracle_writes_the_hello_file(trial) -> None:
    outcome = await trial(policy="oracle", task_name="hello-file")
    assert outcome.completion is not None
    assert outcome.reward == {"reward": 1.0}


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
    # and the bundle's secret scan (docs/bundle.md#secret-scan) catches it, naming the kinds but never the secret
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
    # the stand-in answers at once, often within one second: the evidence's order, not the
    # timestamps, shows delegation, answer, DONE (docs/evidence.md#order)
    ids = [m["id"] for m in outcome.evidence["messages"]]
    assert ids.index(delegation["id"]) < ids.index(answer["id"]) < ids.index(done["id"])
    assert delegation["created_at"] <= answer["created_at"] <= done["created_at"]
    assert done["content"].startswith("DONE:") and done["reply_to_event_id"] == outcome.task_event_id
    assert "turn complete for " in outcome.seat("worker-1").log_text()
