"""Receipts and reconciliation (docs/accounting.md#receipts, docs/accounting.md#pricing, docs/accounting.md#reconciliation): exact wording, exact keys."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from buzz_operator.condition import ExperimentManifest, plan_seats
from buzz_operator.ledger.accounting import account, collect_accounting
from buzz_operator.ledger.agent_log import scan_log_text
from buzz_operator.ledger.receipt import render_receipts

from .builders import handoff, manifest_data, turn_end, usage

RECEIPT_KEYS = {
    "agent_id", "class_id", "role", "endpoint", "model_revision", "input_tokens", "output_tokens",
    "cost_usd", "sessions", "source", "cost_usd_no_cache_discount", "estimated_cache_read_tokens",
    "cache_read_rate", "cache_read_tokens_are_estimated", "reasoning_tokens_included_in_output",
    "handoffs", "handoff_truncations", "handoff_input_tokens_upper_bound",
    "handoff_output_tokens_upper_bound", "handoff_cost_usd_upper_bound", "turns",
    "cost_usd_including_handoff_bound",
}  # fmt: skip


def write(directory: Path, name: str, text: str) -> None:
    (directory / name).write_text(text, encoding="utf-8")


def test_team_trial_with_idle_seat_and_handoffs(tmp_path: Path, manifest: ExperimentManifest, seats) -> None:
    write(tmp_path, "lead-1.stdout.log", usage("A", 4000, 800, colour=True) + usage("A", 10_000, 2_000) + turn_end())
    write(tmp_path, "lead-1.stderr.log", handoff(1, 100_000) + handoff(2, 50_000) + turn_end("turn refused for"))
    write(tmp_path, "worker-1.stderr.log", usage("W", "Some(4000)", "Some(500)") + turn_end())
    accounting = collect_accounting(tmp_path, seats, manifest.prices)

    assert [r.agent_id for r in accounting.receipts] == ["lead-1", "worker-1", "worker-2"]
    lead, worker, idle = accounting.receipts
    # lead: 10000×$5 + 2000×$25 = 0.05 + 0.05; bound 150000×$5 + 64000×$25 = 0.75 + 1.6
    assert lead.cost_usd == pytest.approx(0.1, rel=1e-15)
    assert lead.handoff_cost_usd_upper_bound == pytest.approx(2.35, rel=1e-15)
    assert lead.cost_usd_including_handoff_bound == pytest.approx(2.45, rel=1e-15)
    assert (lead.turns, lead.handoffs, lead.role, lead.class_id) == (2, 2, "orchestrator", "lead")
    # worker: 4000×$0.2 + 500×$1.2 = 800 + 600 micro-dollars
    assert worker.cost_usd == pytest.approx(0.0014, rel=1e-12)
    assert (idle.input_tokens, idle.turns, idle.sessions, idle.cost_usd) == (0, 0, 0, 0.0)

    assert accounting.reconciled is True
    assert accounting.reconciliation_note == (
        "every agent that took a turn reported usage; 1 of 3 agent(s) were never woken (['worker-2']) "
        "and cost nothing; 2 auto-compaction call(s) are billed but unreported by buzz-agent, so "
        "cost_usd is a floor — see cost_usd_including_handoff_bound (+$2.3500 max)"
    )
    assert accounting.warnings == ()
    assert accounting.idle_agents == ("worker-2",) and accounting.unmeasured_agents == ()
    assert (accounting.input_tokens, accounting.output_tokens) == (14_000, 2_500)
    assert accounting.cost_usd == pytest.approx(0.1014, rel=1e-12)

    lines = render_receipts(accounting.receipts).splitlines()
    assert len(lines) == 3
    for line in lines:
        row = json.loads(line)
        assert set(row) == RECEIPT_KEYS
        assert line == json.dumps(row, sort_keys=True)
        assert row["source"] == "acp-usage-log" and row["reasoning_tokens_included_in_output"] is True


def test_unmeasured_seat_fails_reconciliation(manifest: ExperimentManifest, seats) -> None:
    logs = {"lead-1": scan_log_text([usage("A", 10, 1) + turn_end()]), "worker-1": scan_log_text([turn_end()])}
    accounting = account(seats, logs, manifest.prices)
    assert accounting.reconciled is False
    assert accounting.reconciliation_note == (
        "['worker-1'] took turns but reported no usage — check that RUST_LOG enables the "
        "acp::usage target and that the agent logs were downloaded; totals undercount this trial"
    )
    assert accounting.unmeasured_agents == ("worker-1",) and accounting.idle_agents == ("worker-2",)


def test_nobody_woken_and_nobody_provisioned(manifest: ExperimentManifest, seats) -> None:
    silent = account(seats, {}, manifest.prices)
    assert (silent.reconciled, silent.reconciliation_note) == (
        False,
        "no agent was ever woken — the opening @mention never landed, so there is nothing to "
        "account for and nothing was attempted",
    )
    empty = account([], {}, manifest.prices)
    assert (empty.reconciled, empty.reconciliation_note) == (False, "no agents were provisioned")
    assert json.dumps(empty.cost_usd) == "0"  # the seed sums an empty roster to int 0


def test_missing_price_is_a_warning_and_a_priced_zero(manifest: ExperimentManifest, seats) -> None:
    logs = {seat.seat_id: scan_log_text([usage("A", 1000, 100) + turn_end()]) for seat in seats}
    accounting = account(seats, logs, {"opus": manifest.prices["opus"]})
    assert accounting.warnings == ("no price for endpoint 'luna'", "no price for endpoint 'luna'")
    worker = accounting.receipts[1]
    assert (worker.cost_usd, worker.cost_usd_no_cache_discount, worker.cache_read_rate) == (0.0, 0.0, 0.0)
    assert worker.input_tokens == 1000 and accounting.reconciled is True


def test_truncation_warning_wording(manifest: ExperimentManifest, seats) -> None:
    text = usage("A", 10, 1) + turn_end() + "WARN buzz_agent::handoff: handoff cap reached, truncating history\n"
    accounting = account(seats[:1], {"lead-1": scan_log_text([text])}, manifest.prices)
    assert accounting.warnings == (
        "lead-1 truncated its own history 1x (handoff cap reached or summarisation failed) — context "
        "was dropped, which affects task fidelity, not just cost",
    )
    assert accounting.handoff_truncations == 1 and accounting.reconciled


def test_measured_cache_flags_and_metadata(seats) -> None:
    manifest = ExperimentManifest.load(manifest_data(cache_read_rate=0.5))
    logs = {
        "lead-1": scan_log_text([usage("A", 1000, 10, cached=600) + turn_end()]),
        "worker-1": scan_log_text([usage("B", 1001, 10) + turn_end()]),
    }
    accounting = account(plan_seats(manifest), logs, manifest.prices)
    lead, worker, _ = accounting.receipts
    assert (lead.estimated_cache_read_tokens, lead.cache_read_tokens_are_estimated) == (600, False)
    assert (worker.estimated_cache_read_tokens, worker.cache_read_tokens_are_estimated) == (500, True)  # 500.5
    assert accounting.assumes_cache_discount and not accounting.cache_read_tokens_are_measured
    metadata = accounting.to_metadata()
    assert list(metadata) == [
        "accounting_source", "accounting_reconciled", "accounting_note", "accounting_warnings",
        "accounting_cost_usd_no_cache_discount", "accounting_estimated_cache_read_tokens",
        "accounting_assumes_cache_discount", "accounting_cache_read_tokens_are_measured",
        "accounting_handoffs", "accounting_handoff_truncations", "accounting_handoff_cost_usd_upper_bound",
        "accounting_cost_usd_including_handoff_bound", "accounting_idle_agents",
        "accounting_unmeasured_agents", "per_agent_tokens",
    ]  # fmt: skip
    assert metadata["accounting_idle_agents"] == ["worker-2"]
    assert set(metadata["per_agent_tokens"]["lead-1"]) == {
        "input", "output", "cost_usd", "cost_usd_no_cache_discount", "cache_read_rate", "handoffs",
        "handoff_cost_usd_upper_bound",
    }  # fmt: skip


class _BrokenSeat:
    @property
    def seat_id(self) -> str:
        raise RuntimeError("boom")


def test_accounting_never_raises(tmp_path: Path, manifest: ExperimentManifest) -> None:
    accounting = collect_accounting(tmp_path, [_BrokenSeat()], manifest.prices)  # type: ignore[list-item]
    assert (accounting.reconciled, accounting.reconciliation_note) == (False, "accounting failed: boom")
    assert accounting.receipts == () and accounting.cost_usd == 0.0


def test_unreadable_log_is_reported_not_dropped(tmp_path: Path, manifest: ExperimentManifest, seats) -> None:
    (tmp_path / "lead-1.stdout.log").mkdir()
    (tmp_path / "nested").mkdir()
    write(tmp_path / "nested", "lead-1.stderr.log", usage("A", 5, 1) + turn_end())
    accounting = collect_accounting(tmp_path, seats, manifest.prices)
    assert accounting.receipts[0].input_tokens == 5
    assert accounting.warnings == ("lead-1: cannot read log lead-1.stdout.log: Is a directory",)
