"""Harbor job documents: JobStats as Harbor computes them (its metric, its pass@k), the project's own
figures beside them, the job config Harbor would plan the exported trials from; leaderboard
metadata (docs/bundle.md#metadatayaml). That Harbor's own code agrees is tests/harbor's part."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from buzz_operator.ledger.harbor_config import sweep_job_config, trial_config
from buzz_operator.results import job_config, job_result, job_stats, leaderboard_metadata
from buzz_operator.results.harbor_stats import harbor_mean, harbor_pass_at_k

from tests.unit.results.conftest import read_sweep_files


@pytest.fixture(scope="module")
def results(mixed_root: Path) -> list[dict]:
    trials, _ = read_sweep_files(mixed_root, "mixed")
    return [json.loads(files["result.json"]) for files in trials.values() if "result.json" in files]


EVAL = "buzz-orchestra__standin-team-1__builtin"


@pytest.mark.parametrize("release", ["0.25", "0.26"])
def test_job_stats(results: list[dict], release: str) -> None:
    doc = job_result("mixed", results, n_total_trials=8, release=release)  # type: ignore[arg-type]
    assert doc["schema_version"] == 1 and doc["buzz_harbor_release"] == release
    stats = doc["stats"]
    assert (stats["n_completed_trials"], stats["n_errored_trials"], stats["n_pending_trials"]) == (7, 3, 1)
    assert doc["finished_at"] is None  # a trial is missing
    # Harbor's evals key: agent, the orchestrator's model, the tasks' source
    evals = stats["evals"][EVAL]
    # the launch failure and the parse error have no rewards; five trials do, and their rewards are
    # valid for 0.26 too (the timeout is the team's outcome)
    assert evals["n_trials"] == 5 and evals["n_errors"] == 3
    assert sorted(evals["reward_stats"]["reward"]["1.0"]) == ["hello-file-1", "hello-file-2"]
    assert evals["exception_stats"]["RuntimeLaunchError"] == ["reply-to-thread-2"]
    assert stats["cost_usd"] == pytest.approx(
        sum((r["agent_result"] or {}).get("cost_usd", 0) for r in results)
    )
    assert stats["n_input_tokens"] == sum((r["agent_result"] or {}).get("n_input_tokens", 0) for r in results)


def test_job_stats_metrics_are_harbors_and_the_projects_have_names_of_their_own(results: list[dict]) -> None:
    evals = job_stats(results, n_total_trials=7, release="0.25")["evals"][EVAL]
    # reply-to-thread-1 has three reward keys: Harbor's mean is then per key, over all 7 trials
    [metric] = evals["metrics"]
    assert metric["reward"] == pytest.approx(2 / 7) and metric["answer_correct"] == pytest.approx(1 / 7)
    # 0.26 counts the 5 trials whose rewards are valid: not the two without rewards
    [metric] = job_stats(results, n_total_trials=7, release="0.26")["evals"][EVAL]["metrics"]
    assert metric["reward"] == pytest.approx(2 / 5) and metric["answer_correct"] == pytest.approx(1 / 5)
    assert evals["pass_at_k"] == {}  # Harbor defines pass@k only for single 0/1 rewards
    assert evals["buzz_pass_at_k"]["1"] == pytest.approx(1 / 3)  # the project's: k from 1, scored trials
    assert evals["buzz_mean_reward"] == pytest.approx(2 / 5)


@pytest.mark.parametrize("release", ["0.25", "0.26"])
def test_exception_stats_use_harbors_names_and_keep_the_reasons(release: str) -> None:
    results = [
        {"trial_name": "a", "task_name": "t", "agent_info": {"name": "x"},
         "exception_info": {"exception_type": "VerifierTimeoutError", "buzz_reason": "VerifierTimeout"}},
        {"trial_name": "b", "task_name": "t", "agent_info": {"name": "x"},
         "exception_info": {"exception_type": "CancelledError"}},
    ]  # fmt: skip
    stats = job_stats(results, n_total_trials=2, release=release)  # type: ignore[arg-type]
    evals = stats["evals"]["x__adhoc"]
    assert evals["exception_stats"] == {"VerifierTimeoutError": ["a"], "CancelledError": ["b"]}
    assert evals["buzz_exception_stats"] == {"VerifierTimeout": ["a"], "CancelledError": ["b"]}
    assert (stats["n_errored_trials"], stats["n_cancelled_trials"]) == (2, 1)
    # no rewards anywhere: 0.25's mean counts each trial as 0; 0.26 counts no trial, so has no metric
    assert evals["metrics"] == ([{"mean": 0.0}] if release == "0.25" else []) and evals["n_trials"] == 0


def test_0_26_files_step_exceptions_and_counts_only_valid_rewards() -> None:
    """A step's exception is filed beside the trial's (each name once), and a reward an exception's
    policy voids is not counted: by Harbor's table, or by the override laid over it."""
    step = {"exception_info": {"exception_type": "VerifierTimeoutError"}}
    infra = {"should_retry": True, "should_grade": False, "has_valid_reward": False}
    results = [
        {"trial_name": "a", "task_name": "t", "agent_info": {"name": "x"}, "verifier_result": {"rewards": {"r": 1}},
         "exception_info": {"exception_type": "AgentTimeoutError"}, "step_results": [step, step]},
        {"trial_name": "b", "task_name": "t", "agent_info": {"name": "x"}, "verifier_result": {"rewards": {"r": 1}},
         "exception_info": {"exception_type": "StorageUnavailable", "policy_override": infra}},
        {"trial_name": "c", "task_name": "t", "agent_info": {"name": "x"}, "verifier_result": {"rewards": {"r": 0}},
         "exception_info": {"exception_type": "StorageUnavailable"}},  # unknown to Harbor: its reward stands
    ]  # fmt: skip
    evals = job_stats(results, n_total_trials=3, release="0.26")["evals"]["x__adhoc"]
    assert evals["exception_stats"] == {"AgentTimeoutError": ["a"], "VerifierTimeoutError": ["a"],
                                        "StorageUnavailable": ["b", "c"]}  # fmt: skip
    assert evals["n_trials"] == 1 and evals["reward_stats"] == {"r": {"0": ["c"]}}
    assert evals["metrics"] == [{"mean": 0.0}] and evals["n_errors"] == 3


def _trial(task: str, name: str, reward: float | None) -> dict:
    rewards = None if reward is None else {"reward": reward}
    return {"trial_name": name, "task_name": task, "agent_info": {"name": "x"}, "verifier_result": {"rewards": rewards}}


def test_harbor_pass_at_k_uses_harbors_k_values_and_the_fewest_attempts() -> None:
    # task a: 5 attempts, 2 pass; task b: 4 attempts (one without rewards: a 0), 1 passes
    trials = [_trial("a", f"a{i}", float(i < 2)) for i in range(5)]
    trials += [_trial("b", "b0", 1.0), _trial("b", "b1", 0.0), _trial("b", "b2", 0.0), _trial("b", "b3", None)]
    passes = harbor_pass_at_k(trials, "0.25")
    assert list(passes) == ["2", "4"]  # k = 2, 4 (8 > 4; 5 > 4): never k = 1
    a2, b2 = 1 - (3 / 5) * (2 / 4), 1 - (3 / 4) * (2 / 3)
    assert passes["2"] == pytest.approx((a2 + b2) / 2)
    assert harbor_pass_at_k([_trial("a", "a", 0.5), _trial("a", "b", 1.0)]) == {}  # not 0/1
    # 0.26 leaves the trial without rewards out: task b has 3 attempts, so k = 2 only
    passes = harbor_pass_at_k(trials, "0.26")
    b2 = 1 - (2 / 3) * (1 / 2)
    assert list(passes) == ["2"] and passes["2"] == pytest.approx((a2 + b2) / 2)


def test_harbor_mean_step_for_step() -> None:
    assert harbor_mean([{"reward": 1.0}, None, {"reward": 0.5}]) == {"mean": 0.5}
    assert harbor_mean([{"a": 1, "b": 0}, {"a": 0}]) == {"a": 0.5, "b": 0.0}
    assert harbor_mean([{}, None]) == {"mean": 0.0}


def test_job_id_is_stable_and_finished_when_complete(results: list[dict]) -> None:
    one = job_result("mixed", results, n_total_trials=7)
    assert one["id"] == job_result("mixed", results, n_total_trials=7)["id"]
    assert one["finished_at"] == max(r["finished_at"] for r in results)


def test_job_result_needs_a_start_even_before_any_trial() -> None:
    doc = job_result("empty", [], n_total_trials=3, exported_at="2026-12-01T00:00:00Z")
    assert doc["started_at"] == doc["updated_at"] == "2026-12-01T00:00:00Z" and doc["finished_at"] is None


def test_job_config_plans_what_the_trials_record() -> None:
    sweep = sweep_job_config(name="s", namespace="ns", spec={"attempts": 5, "timeoutMultiplier": 2.0},
                             condition="c", condition_hash="h", dataset="builtin", tasks=["b", "a"])  # fmt: skip
    trial = trial_config(sweep, task="a", trial_name="a-1", sweep="s", condition="c", condition_hash="h", spec={})
    config = job_config("s", attempts=5, parallelism=None, trial_configs=[trial, trial], sweep_config=sweep)
    assert (config["n_attempts"], config["n_concurrent_trials"], config["timeout_multiplier"]) == (5, 4, 2.0)
    assert config["agents"] == [trial["agent"]] == sweep["agents"]
    assert config["datasets"] == [] and config["tasks"] == sweep["tasks"]
    assert config["buzz_dataset"] == {"name": "builtin", "tasks": ["a", "b"]}


def test_leaderboard_metadata_from_the_roster() -> None:
    manifest = {
        "condition": "sonnet-haiku",
        "roster": [
            {"endpoint": "opus", "model_revision": "claude-opus-5"},
            {"endpoint": "luna", "model_revision": "gpt-luna"},
            {"endpoint": "luna", "model_revision": "gpt-luna"},
            {"endpoint": "local", "model_revision": None},
        ],
    }
    endpoints = {"opus": {"provider": "anthropic"}, "luna": {"provider": "openai"}}
    metadata = leaderboard_metadata(manifest, endpoints)
    assert metadata["agent_display_name"] == "Buzz Orchestra (sonnet-haiku)"
    assert (
        metadata["agent_org_display_name"] == "Block"
        and metadata["agent_url"] == "https://github.com/block/buzz"
    )
    assert metadata["models"] == [
        {"model_name": "claude-opus-5", "model_provider": "anthropic", "model_display_name": "claude-opus-5",
         "model_org_display_name": "Anthropic"},
        {"model_name": "gpt-luna", "model_provider": "openai", "model_display_name": "gpt-luna",
         "model_org_display_name": "OpenAI"},
        {"model_name": "local", "model_provider": "FILL_ME", "model_display_name": "local",
         "model_org_display_name": "FILL_ME"},
    ]  # fmt: skip
