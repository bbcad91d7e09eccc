"""buzzctl sweep export, read back against Harbor's TrialResult/JobResult fields (anchors.md §A1)."""

from __future__ import annotations

import json
from pathlib import Path

import yaml
from buzz_operator.cli.main import app
from typer.testing import CliRunner

# anchors.md §A1 "result.json (TrialResult)", "Cost accounting" (AgentContext), "Aggregation" (JobStats)
TRIAL_RESULT = {
    "id", "task_name", "trial_name", "trial_uri", "task_id", "source", "task_checksum", "config", "agent_info",
    "agent_result", "verifier_result", "exception_info", "started_at", "finished_at", "environment_setup",
    "agent_setup", "agent_execution", "verifier",
}  # fmt: skip
AGENT_CONTEXT = {
    "n_input_tokens",
    "n_cache_tokens",
    "n_output_tokens",
    "cost_usd",
    "rollout_details",
    "metadata",
}
EXCEPTION_INFO = {"exception_type", "exception_message", "exception_traceback", "occurred_at"}
JOB_RESULT = {"id", "started_at", "updated_at", "finished_at", "n_total_trials", "stats"}
JOB_STATS = {
    "n_completed_trials", "n_errored_trials", "n_running_trials", "n_pending_trials", "n_cancelled_trials",
    "n_retries", "evals", "n_input_tokens", "n_cache_tokens", "n_output_tokens", "cost_usd",
}  # fmt: skip
AGENT_DATASET_STATS = {"n_trials", "n_errors", "metrics", "pass_at_k", "reward_stats", "exception_stats"}
METADATA = {"agent_url", "agent_display_name", "agent_org_display_name", "models"}
MODEL = {"model_name", "model_provider", "model_display_name", "model_org_display_name"}


def test_export_reads_back_as_a_harbor_job(runner: CliRunner, store: str, tmp_path: Path) -> None:
    job = tmp_path / "job"
    result = runner.invoke(app, ["sweep", "export", "mixed", str(job), "--store", store, "-o", "json"])
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout) == {"job_dir": str(job), "trials": 7, "unfinished": ["user-mention-2"],
                                         "metadata_yaml": True}  # fmt: skip
    trial_dirs = sorted(p for p in job.iterdir() if p.is_dir())
    assert len(trial_dirs) == 7 and not (job / "user-mention-2").exists()
    for trial_dir in trial_dirs:
        trial = json.loads((trial_dir / "result.json").read_text())
        assert set(trial) == TRIAL_RESULT, trial_dir
        assert set(trial["agent_info"]) == {"name", "version", "model_info"}
        if trial["agent_result"] is not None:
            assert set(trial["agent_result"]) == AGENT_CONTEXT
        if trial["exception_info"] is not None:
            assert set(trial["exception_info"]) == EXCEPTION_INFO
        if trial["verifier_result"] is not None:
            assert all(isinstance(v, int | float) for v in trial["verifier_result"]["rewards"].values())
        assert (trial_dir / "config.json").is_file() and (
            trial_dir / "agent" / "buzz" / "summary.json"
        ).is_file()

    job_result = json.loads((job / "result.json").read_text())
    assert set(job_result) == JOB_RESULT and set(job_result["stats"]) == JOB_STATS
    assert job_result["n_total_trials"] == 8 and job_result["stats"]["n_completed_trials"] == 7
    for stats in job_result["stats"]["evals"].values():
        assert set(stats) == AGENT_DATASET_STATS

    config = json.loads((job / "config.json").read_text())
    assert (config["job_name"], config["n_attempts"], config["n_concurrent_trials"]) == ("mixed", 3, 2)
    assert config["timeout_multiplier"] == 2.0

    metadata = yaml.safe_load((job / "metadata.yaml").read_text())
    assert set(metadata) == METADATA and all(set(m) == MODEL for m in metadata["models"])
    assert metadata["agent_display_name"] == "Buzz Orchestra (standin-team)"
    assert [m["model_name"] for m in metadata["models"]] == ["standin-team-1"]


def test_export_refuses_a_non_empty_directory(runner: CliRunner, store: str, tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    result = runner.invoke(app, ["sweep", "export", "mixed", str(tmp_path), "--store", store])
    assert result.exit_code == 1 and "not an empty directory" in result.stderr


def test_planned_trials_from_the_operators_sweep_config(runner: CliRunner, tmp_path: Path) -> None:
    from tests.unit.results.sweep_builder import TrialPlan, build_sweep

    config = {"job_name": "s", "n_attempts": 2, "n_concurrent_trials": 3, "timeout_multiplier": 1.0,
              "datasets": [{"name": "builtin", "tasks": ["hello-file", "user-mention"]}], "spec": {"attempts": 2}}  # fmt: skip
    store = build_sweep(tmp_path / "store", "s", [TrialPlan("hello-file", 1)], sweep_config=config)
    assert (
        runner.invoke(app, ["sweep", "export", "s", str(tmp_path / "job"), "--store", store]).exit_code == 0
    )
    job = json.loads((tmp_path / "job" / "result.json").read_text())
    assert job["n_total_trials"] == 4 and job["stats"]["n_pending_trials"] == 3 and job["finished_at"] is None
    assert json.loads((tmp_path / "job" / "config.json").read_text())["n_concurrent_trials"] == 3
