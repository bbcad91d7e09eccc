"""The stand-in's logs through the real ledger (docs/accounting.md): what the operator will compute for
receipts and reconciliation from seats it launched."""

from __future__ import annotations

import pytest
from buzz_operator.condition import plan_seats
from buzz_operator.ledger.accounting import collect_accounting

pytestmark = pytest.mark.timeout(120)


async def test_team_trial_reconciles_with_every_seat_billed(trial) -> None:
    outcome = await trial(policy="team", task_name="reply-to-thread")
    accounting = collect_accounting(outcome.directory, plan_seats(outcome.manifest), outcome.manifest.prices)
    assert accounting.reconciled, accounting.reconciliation_note
    assert [r.agent_id for r in accounting.receipts] == ["lead-1", "worker-1"]
    assert all(r.input_tokens > 0 and r.output_tokens > 0 for r in accounting.receipts)
    assert accounting.cost_usd > 0 and accounting.handoffs == 0


async def test_oracle_trial_reconciles(trial) -> None:
    outcome = await trial(policy="oracle", task_name="user-mention")
    accounting = collect_accounting(outcome.directory, plan_seats(outcome.manifest), outcome.manifest.prices)
    assert accounting.reconciled, accounting.reconciliation_note
    assert accounting.unmeasured_agents == () and accounting.cost_usd > 0


async def test_usage_hidden_by_rust_log_is_unmeasured_not_free(trial) -> None:
    outcome = await trial(policy="oracle", task_name="user-mention", extra_env={"RUST_LOG": "buzz_acp=info"},
                          settle_s=2.0)
    accounting = collect_accounting(outcome.directory, plan_seats(outcome.manifest), outcome.manifest.prices)
    assert not accounting.reconciled
    assert accounting.unmeasured_agents == ("solo-1",)


async def test_handoffs_are_bounded_in_the_receipts(trial) -> None:
    outcome = await trial(policy="oracle", task_name="create-channel-invite-users",
                          extra_env={"BUZZ_AGENT_HANDOFF_AT_TOKENS": "600"})
    accounting = collect_accounting(outcome.directory, plan_seats(outcome.manifest), outcome.manifest.prices)
    assert accounting.reconciled and accounting.handoffs == 1
    assert accounting.handoff_cost_usd_upper_bound > 0
