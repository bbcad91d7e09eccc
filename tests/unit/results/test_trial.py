"""One trial's record: identity fallbacks, reward, outcome and the bundle greps (docs/failures.md)."""

from __future__ import annotations

import json

from buzz_operator.results import read_trial
from buzz_operator.results.trial import elapsed, timeout_multiplier

SHA = "ab" * 32


def result(**overrides: object) -> bytes:
    doc = {
        "trial_name": "t",
        "task_name": "hello-file",
        "agent_result": {
            "n_input_tokens": 10, "n_output_tokens": 5, "cost_usd": 0.5,
            "metadata": {"condition": "c", "manifest_sha256": SHA, "accounting_reconciled": True,
                         "accounting_cost_usd_including_handoff_bound": 0.75, "per_agent_tokens": {"a": {}}},
        },
        "verifier_result": {"rewards": {"reward": 1}},
        "exception_info": None,
    }  # fmt: skip
    doc.update(overrides)
    return json.dumps(doc).encode()


def test_metadata_identity_and_costs() -> None:
    record = read_trial("t", {"result.json": result()})
    assert record is not None
    assert (record.condition, record.manifest_sha256, record.reward) == ("c", SHA, 1.0)
    assert (record.cost_usd, record.cost_usd_ceiling, record.tokens, record.agents) == (0.5, 0.75, 15, 1)


def test_a_non_numeric_or_missing_reward_is_zero() -> None:
    for rewards in ({"reward": "1"}, {}, None):
        verifier = {"rewards": rewards} if rewards is not None else None
        record = read_trial("t", {"result.json": result(verifier_result=verifier)})
        assert record is not None and record.reward == 0.0


def test_outcomes_are_classified_from_exception_info() -> None:
    cases = {
        "AgentTimeoutError": "timeout",
        "RuntimeLaunchError": "launch",
        "StorageUnavailable": "error",
    }
    for kind, outcome in cases.items():
        info = {
            "exception_type": kind,
            "exception_message": "",
            "exception_traceback": "",
            "occurred_at": None,
        }
        record = read_trial("t", {"result.json": result(exception_info=info)})
        assert record is not None and record.outcome == outcome and record.exception_type == kind


def test_identity_falls_back_to_the_bundle_summary_then_manifest_then_config() -> None:
    bare = result(agent_result=None)
    summary = json.dumps(
        {"condition": "s", "manifest_sha256": SHA, "totals": {"cost_usd": 2.0, "input_tokens": 7}}
    ).encode()
    record = read_trial("t", {"result.json": bare, "agent/buzz/summary.json": summary})
    assert record is not None and (record.condition, record.cost_usd, record.input_tokens) == ("s", 2.0, 7)
    manifest = json.dumps({"sha256": SHA, "manifest": {"condition": "m"}}).encode()
    record = read_trial("t", {"result.json": bare, "agent/buzz/manifest.json": manifest})
    assert record is not None and record.condition == "m"
    config = json.dumps({"spec": {"conditionHash": SHA, "attempt": 2}}).encode()
    record = read_trial("t", {"result.json": bare, "config.json": config})
    assert record is not None and (record.condition, record.manifest_sha256, record.attempt) == (
        "unknown",
        SHA,
        2,
    )
    assert read_trial("t", {"result.json": bare}) is None


def test_uncommitted_or_unreadable_results_are_not_records() -> None:
    assert read_trial("t", {"config.json": b"{}"}) is None
    assert read_trial("t", {"result.json": b"not json"}) is None


def test_round_cap_only_in_agent_logs_directly_in_agent_buzz() -> None:
    logs = {"result.json": result(), "agent/buzz/lead-1.stderr.log": b"x turn hit max_turn_requests for y"}
    assert read_trial("t", logs).round_capped  # type: ignore[union-attr]
    nested = {"result.json": result(), "agent/buzz/old/lead-1.stderr.log": b"max_turn_requests"}
    assert not read_trial("t", nested).round_capped  # type: ignore[union-attr]
    other = {"result.json": result(), "agent/buzz/notes.txt": b"max_turn_requests"}
    assert not read_trial("t", other).round_capped  # type: ignore[union-attr]


def test_verifier_broken_markers_and_missing_stdout() -> None:
    broken = {"result.json": result(), "verifier/test-stdout.txt": b"ERROR: No module named pytest"}
    assert read_trial("t", broken).verifier_broken  # type: ignore[union-attr]
    assert not read_trial("t", {"result.json": result()}).verifier_broken  # type: ignore[union-attr]


def test_timeout_multiplier_sources_in_order() -> None:
    assert timeout_multiplier({"agent_timeout_multiplier": 3, "timeout_multiplier": 2}, {}) == 3.0
    assert timeout_multiplier({"timeout_multiplier": 2}, {}) == 2.0
    assert timeout_multiplier({"spec": {"timeoutMultiplier": 1.5}}, {"spec": {"timeoutMultiplier": 4}}) == 1.5
    assert timeout_multiplier({}, {"spec": {"timeoutMultiplier": 4}}) == 4.0
    assert timeout_multiplier({}, {}) == 1.0


def test_elapsed() -> None:
    assert elapsed({"started_at": "2026-01-01T00:00:00Z", "finished_at": "2026-01-01T00:01:30.5Z"}) == 90.5
    assert elapsed({"started_at": None}) == 0.0 and elapsed(None) == 0.0
    assert elapsed({"started_at": "2026-01-01T00:01:00Z", "finished_at": "2026-01-01T00:00:00Z"}) == 0.0


def test_timeout_multiplier_from_the_operators_sweep_config() -> None:
    # sweep.lock.sweep_config writes Harbor's key beside the spec as submitted
    assert timeout_multiplier({"spec": {}}, {"timeout_multiplier": 3.0, "spec": {}}) == 3.0


def test_oom_kills_while_the_agents_worked_flag_the_row_and_keep_the_score() -> None:
    from buzz_operator.results.table import group

    def with_usage(kills: object) -> bytes:
        doc = json.loads(result())
        doc["agent_result"]["metadata"]["resource_usage"] = {
            "agents": {"cgroup": 1, "oomKills": kills}, "verifier": {"cgroup": 1, "oomKills": 0}}
        return json.dumps(doc).encode()

    pressed = read_trial("t1", {"result.json": with_usage(2)})
    calm = read_trial("t2", {"result.json": with_usage(0)})
    unread = read_trial("t3", {"result.json": result()})
    odd = read_trial("t4", {"result.json": with_usage("two")})
    assert pressed is not None and calm is not None and unread is not None and odd is not None
    assert (pressed.oom_kills, calm.oom_kills, unread.oom_kills, odd.oom_kills) == (2, 0, 0, 0)
    (row,) = group([pressed, calm, unread])
    assert "PRESSURE×1" in row.flags and row.pass_rate == 1.0  # scored as the team did


def test_the_box_rates_count_every_trial_with_intervals() -> None:
    from buzz_operator.results.condition_stats import ConditionStats
    from buzz_operator.results.statistics import Resampling

    def doc(task: str, *, kills: int = 0, infra: bool = False, tries: tuple[str, ...] = ()) -> bytes:
        d = json.loads(result(task_name=task))
        d["agent_result"]["metadata"]["resource_usage"] = {"agents": {"cgroup": 2, "oomKills": kills}}
        d["agent_result"]["metadata"]["failed_tries"] = list(tries)
        if infra:
            d["exception_info"] = {"exception_type": "MemoryLimitExceededError", "buzz_reason": "OOMKilled",
                                   "exception_message": "task was OOM-killed at its memory limit (exit 137)"}
        return json.dumps(d).encode()

    # b's infra trial ran out of retries after one; a's calm trial passed on its third try
    docs = [doc("a", tries=("OOMKilled", "PodEvicted")), doc("a", kills=1),
            doc("b", infra=True, tries=("OOMKilled",)), doc("b")]
    records = [read_trial(f"t{i}", {"result.json": d}) for i, d in enumerate(docs)]
    stats = ConditionStats.of(r for r in records if r is not None)
    box = stats.box(Resampling(resamples=200))
    assert stats.excluded["infra"] == 1 and len(stats.scored) == 3
    assert box["trials"] == 4
    # per task: a 0/2 infra, 1/2 pressure; b 1/2 infra, 0/2 pressure → 0.25 each, averaged over tasks
    assert box["infra_rate"]["estimate"] == box["pressure_rate"]["estimate"] == 0.25
    assert box["infra_rate"]["low"] <= 0.25 <= box["infra_rate"]["high"]
    # the noise retries hid: one trial of each task needed a fresh try, three tries in all
    assert box["retried_rate"]["estimate"] == 0.5 and box["failed_tries"] == 3
    assert ConditionStats.of([]).box(Resampling(resamples=100)) == {
        "trials": 0, "infra_rate": None, "pressure_rate": None, "retried_rate": None, "failed_tries": 0}


def test_compare_pairs_the_box_rates_by_task() -> None:
    from buzz_operator.results.compare import comparison_document, side
    from buzz_operator.results.statistics import Resampling
    from buzz_operator.results.table import tabulate

    def doc(task: str, kills: int) -> bytes:
        d = json.loads(result(task_name=task))
        d["agent_result"]["metadata"]["resource_usage"] = {"agents": {"cgroup": 1, "oomKills": kills}}
        return json.dumps(d).encode()

    def sweep(name: str, kills: int) -> object:
        records = [read_trial(f"{name}-{task}-{i}", {"result.json": doc(task, kills)})
                   for task in ("a", "b") for i in range(2)]
        return side(tabulate(name, [r for r in records if r is not None]), f"file:///{name}")

    tight, roomy = sweep("tight", 1), sweep("roomy", 0)
    compared = comparison_document([tight, roomy], Resampling(resamples=100))  # type: ignore[list-item]
    box = compared["comparisons"][0]["box"]
    assert box["pressure_rate"]["baseline"] == 1.0 and box["pressure_rate"]["candidate"] == 0.0
    # wins and losses say higher and lower, as for the pass rate: here lower is the better box
    assert box["pressure_rate"]["difference"]["estimate"] == -1.0 and box["pressure_rate"]["losses"] == 2
    assert box["infra_rate"]["baseline"] == box["infra_rate"]["candidate"] == 0.0
