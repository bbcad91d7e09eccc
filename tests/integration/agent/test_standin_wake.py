"""What wakes a stand-in seat and what its log carries: only mentions of itself by others wake
it (docs/corridor.md#agent-environment), usage lines obey RUST_LOG, handoffs appear in the format of docs/accounting.md#log-lines."""

from __future__ import annotations

import re

import pytest
from buzz_operator.relay.client import RelayClient
from buzz_operator.relay.nostr import Keypair
from buzz_operator.relay.tenant_models import TenantHandle, TenantSecrets

pytestmark = pytest.mark.timeout(120)
HANDOFF = re.compile(r"\bhandoff #(\d+) \(history .*?; (\d+) -> \d+ tokens\)")


async def test_only_mentions_by_others_wake_the_agent(trial, stage) -> None:
    async def chatter(user: RelayClient, handle: TenantHandle, secrets: TenantSecrets) -> None:
        channel, me = handle.channel_id, handle.orchestrator
        for content, tags in (("no mention at all", []), ("mentions only the user", [["p", handle.user.pubkey]])):
            ok, msg = await user.publish(user.sign(9, content, [["h", channel], *tags]))
            assert ok, msg
        own = secrets.seats[me.seat_id]
        async with RelayClient(stage.target.dial_url, Keypair.from_secret(own.secret_hex), own.auth_tag,
                               host=stage.target.authority) as itself:
            ok, msg = await itself.publish(itself.sign(9, f"@{me.seat_id} note to self",
                                                       [["h", channel], ["p", me.pubkey]]))
            assert ok, msg

    outcome = await trial(policy="oracle", task_name="user-mention", before_task=chatter)
    assert outcome.reward["reward"] == 1.0
    log = outcome.seats[0].log_text()
    assert log.count("turn started for ") == 1, log  # the task alone woke it
    assert f"(event {outcome.task_event_id})" in log


async def test_usage_lines_follow_rust_log(trial) -> None:
    outcome = await trial(policy="oracle", task_name="user-mention", extra_env={"RUST_LOG": "buzz_acp=info"},
                          settle_s=2.0)
    log = outcome.seats[0].log_text()
    assert outcome.reward["reward"] == 1.0
    assert "turn complete for " in log and "goose usage update" not in log


async def test_handoff_lines_when_context_crosses_the_threshold(trial) -> None:
    # the directory lookup is the second model call of this task and takes the context past 600
    outcome = await trial(policy="oracle", task_name="create-channel-invite-users",
                          extra_env={"BUZZ_AGENT_HANDOFF_AT_TOKENS": "600"})
    assert outcome.reward["reward"] == 1.0
    log = outcome.seats[0].log_text()
    match = HANDOFF.search(log)
    assert match is not None, log
    assert match.group(1) == "1" and int(match.group(2)) > 600
    assert "INFO buzz_agent::handoff: handoff #1 (history " in log


async def test_seat_survives_a_relay_restart(trial, stage) -> None:
    async def restart(user: RelayClient, handle: TenantHandle, secrets: TenantSecrets) -> None:
        await stage.restart_relay()

    outcome = await trial(policy="oracle", task_name="reply-to-thread", before_task=restart)
    assert outcome.reward["reward"] == 1.0, outcome.reward
    seat = outcome.seats[0]
    log = seat.log_text()
    assert "relay connection lost" in log
    assert log.count(f"subscribed to channel {outcome.handle.channel_id}") == 2
    assert seat.exit_before_stop is None
