"""The seed summariser's rows and flags over a sweep built with the project's own code (docs/failures.md#summaries)."""

from __future__ import annotations

from pathlib import Path

import pytest
from buzz_operator.results import tabulate_sweep
from buzz_operator.results.table import ResultsTable

from tests.unit.results.conftest import read_sweep_files
from tests.unit.results.sweep_builder import TrialPlan, build_sweep


def test_one_row_per_condition_hash_with_every_flag_in_the_seed_order(mixed: ResultsTable) -> None:
    assert len(mixed.rows) == 1
    row = mixed.rows[0]
    assert row.condition == "standin-team" and len(row.manifest_sha256) == 64
    assert row.flags == [
        "timeout×1", "LAUNCH-FAILED×1", "error×1", "ROUND-CAPPED×1",
        "unpriced×1", "VERIFIER-BROKEN×1", "no-done×1", "clock×2",
    ]  # fmt: skip
    assert row.agents == 2


def test_failures_count_as_zero_and_stay_in_the_denominator(mixed: ResultsTable) -> None:
    row = mixed.rows[0]
    # 7 committed trials: two hello-file passes, everything else scored 0 (partial or failed)
    assert row.n == 7
    assert row.pass_rate == pytest.approx(2 / 7)
    # the launch failure carries no agent metadata: identity and cost come from summary.json
    launch = next(t for t in row.trials if t.outcome == "launch")
    assert launch.condition == "standin-team" and launch.cost_usd > 0 and launch.agents == 2


def test_half_finished_trials_are_listed_not_scored(mixed: ResultsTable) -> None:
    assert mixed.unfinished == ("user-mention-2",)
    assert "user-mention-2" not in {t.name for t in mixed.trials}


def test_pass_at_k_per_task_unbiased(mixed: ResultsTable) -> None:
    # hello-file: 2 of 3 pass; reply-to-thread 0 of 3; user-mention 0 of 1 (only k=1)
    pass_k = mixed.rows[0].pass_at_k
    assert pass_k["1"] == pytest.approx((2 / 3 + 0 + 0) / 3)
    assert pass_k["2"] == pytest.approx((1.0 + 0) / 2)
    assert pass_k["3"] == pytest.approx((1.0 + 0) / 2)


def test_cost_floor_and_ceiling(mixed: ResultsTable) -> None:
    row = mixed.rows[0]
    handoff = next(t for t in row.trials if t.name == "hello-file-2")
    assert handoff.cost_usd_ceiling > handoff.cost_usd  # the handoff bound (docs/accounting.md#cost-range)
    assert row.total_cost_ceiling > row.total_cost
    assert row.total_cost == pytest.approx(sum(t.cost_usd for t in row.trials))


def test_time_and_tokens_are_the_seed_columns(mixed: ResultsTable) -> None:
    row = mixed.rows[0]
    assert row.seconds_per_trial == pytest.approx(40.0)  # agent_execution: 5 s → 45 s
    assert all(t.total_seconds == pytest.approx(60.0) for t in row.trials)
    assert row.tokens_per_trial == pytest.approx(sum(t.tokens for t in row.trials) / 7)


def test_empty_sweep_has_no_rows(tmp_path: Path) -> None:
    summary = tabulate_sweep("empty", {})
    assert summary.rows == [] and summary.unfinished == () and summary.trials == []


def test_sweep_of_only_unfinished_trials(tmp_path: Path) -> None:
    build_sweep(
        tmp_path,
        "early",
        [TrialPlan("hello-file", 1, committed=False), TrialPlan("hello-file", 2, committed=False)],
    )
    trials, config = read_sweep_files(tmp_path, "early")
    summary = tabulate_sweep("early", trials, config)
    assert summary.rows == [] and summary.unfinished == ("hello-file-1", "hello-file-2")


def test_clean_sweep_has_no_flags_and_clock_one(tmp_path: Path) -> None:
    build_sweep(tmp_path, "clean", [TrialPlan("hello-file", 1), TrialPlan("hello-file", 2)])
    trials, config = read_sweep_files(tmp_path, "clean")
    row = tabulate_sweep("clean", trials, config).rows[0]
    assert row.flags == [] and row.pass_rate == 1.0 and row.timeout_multipliers == [1.0]
    assert row.pass_at_k == {"1": 1.0, "2": 1.0}


def test_a_trial_known_only_by_its_hash_pools_with_its_siblings(tmp_path: Path) -> None:
    build_sweep(tmp_path, "s", [TrialPlan("hello-file", 1), TrialPlan("hello-file", 2, no_agent_result=True)])
    trials, _ = read_sweep_files(tmp_path, "s")
    # the second trial died before its bundle: only config.json's spec.conditionHash is left
    trials["hello-file-2"] = {
        k: v for k, v in trials["hello-file-2"].items() if k in ("result.json", "config.json")
    }
    rows = tabulate_sweep("s", trials).rows
    assert [(r.condition, r.n) for r in rows] == [("standin-team", 2)]


def test_two_stacks_under_one_condition_hash_are_two_rows(tmp_path: Path) -> None:
    # the tag was rebuilt between attempts: a new buzz-acp (its base prompt) under the same hash
    rebuilt = "c" * 64
    build_sweep(tmp_path, "s", [TrialPlan("hello-file", 1), TrialPlan("hello-file", 2),
                                TrialPlan("hello-file", 3, reward=0.0, buzz_acp=rebuilt)])
    trials, config = read_sweep_files(tmp_path, "s")
    rows = tabulate_sweep("s", trials, config).rows
    assert len({(r.condition, r.manifest_sha256) for r in rows}) == 1
    by_stack = {r.stack_digest: r for r in rows}
    assert len(by_stack) == 2 and all(len(digest) == 64 for digest in by_stack)
    assert sorted((r.n, r.pass_rate) for r in rows) == [(1, 0.0), (2, 1.0)]  # never pooled into 2/3
    assert {t.name for t in by_stack[TrialPlan("hello-file", 3, buzz_acp=rebuilt).stack["digest"]].trials} == {
        "hello-file-3"}


def test_a_trial_without_a_stack_joins_the_one_stack_its_siblings_ran(mixed: ResultsTable) -> None:
    # reply-to-thread-2 never got a pod: no stack recorded, yet its 0 stays in the denominator
    [row] = mixed.rows
    launch = next(t for t in row.trials if t.name == "reply-to-thread-2")
    assert launch.stack_digest == "" and row.stack_digest == TrialPlan("x", 1).stack["digest"]


def test_files_that_are_not_a_buzz_trial_are_skipped(tmp_path: Path) -> None:
    summary = tabulate_sweep("s", {"other": {"result.json": b'{"trial_name": "other", "task_name": "x"}'}})
    assert summary.rows == [] and summary.skipped == ("other",)


def test_retries_evidence_is_not_a_commit_of_the_trial() -> None:
    # an infra-failed earlier try keeps its result.json under retries/<n>/; the trial is still running
    retried = {
        "retries/1/result.json": b'{"trial_name": "t"}',
        "retries/1/agent/buzz/lead-1.stderr.log": b"x",
    }
    summary = tabulate_sweep("s", {"t": retried})
    assert summary.unfinished == ("t",) and summary.rows == []
