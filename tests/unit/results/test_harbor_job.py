"""Harbor job documents: JobStats as Harbor's increment computes it; leaderboard metadata (§6.2)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from buzz_operator.results import job_config, job_result, leaderboard_metadata

from tests.unit.results.conftest import read_sweep_files


@pytest.fixture(scope="module")
def results(mixed_root: Path) -> list[dict]:
    trials, _ = read_sweep_files(mixed_root, "mixed")
    return [json.loads(files["result.json"]) for files in trials.values() if "result.json" in files]


def test_job_stats(results: list[dict]) -> None:
    doc = job_result("mixed", results, n_total_trials=8)
    assert set(doc) == {"id", "started_at", "updated_at", "finished_at", "n_total_trials", "stats"}
    stats = doc["stats"]
    assert (stats["n_completed_trials"], stats["n_errored_trials"], stats["n_pending_trials"]) == (7, 3, 1)
    assert doc["finished_at"] is None  # a trial is missing
    evals = stats["evals"]["buzz-orchestra__builtin"]
    assert set(evals) == {"n_trials", "n_errors", "metrics", "pass_at_k", "reward_stats", "exception_stats"}
    # the launch failure and the parse error have no rewards; five trials do
    assert evals["n_trials"] == 5 and evals["n_errors"] == 3
    assert sorted(evals["reward_stats"]["reward"]["1.0"]) == ["hello-file-1", "hello-file-2"]
    assert evals["exception_stats"]["RuntimeLaunchError"] == ["reply-to-thread-2"]
    assert stats["cost_usd"] == pytest.approx(
        sum((r["agent_result"] or {}).get("cost_usd", 0) for r in results)
    )
    assert stats["n_input_tokens"] == sum((r["agent_result"] or {}).get("n_input_tokens", 0) for r in results)


def test_job_id_is_stable_and_finished_when_complete(results: list[dict]) -> None:
    one = job_result("mixed", results, n_total_trials=7)
    assert one["id"] == job_result("mixed", results, n_total_trials=7)["id"]
    assert one["finished_at"] == max(r["finished_at"] for r in results)


def test_job_config() -> None:
    config = job_config("s", attempts=5, parallelism=4, timeout_multiplier=1.0,
                        conditions=[("c", "h"), ("c", "h")], tasks=["b", "a", "a"], dataset="builtin")  # fmt: skip
    assert (
        config["n_attempts"] == 5
        and config["n_concurrent_trials"] == 4
        and config["timeout_multiplier"] == 1.0
    )
    assert config["agents"] == [
        {"name": "buzz-orchestra", "import_path": "harbor_buzz_orchestra:BuzzOrchestraAgent", "model_name": None,
         "kwargs": {"condition": "c", "manifest_sha256": "h"}}
    ]  # fmt: skip
    assert config["datasets"] == [{"name": "builtin", "task_names": ["a", "b"]}]


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
