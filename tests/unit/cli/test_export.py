"""buzzctl sweep export: the job directory it writes (docs/harbor.md). Harbor's own code reads it in
tests/harbor/test_harbor_reads.py."""

from __future__ import annotations

import json
from pathlib import Path

import yaml
from buzz_operator.cli.main import app
from typer.testing import CliRunner

METADATA = {"agent_url", "agent_display_name", "agent_org_display_name", "models"}
MODEL = {"model_name", "model_provider", "model_display_name", "model_org_display_name"}


def test_export_writes_a_job_dir(runner: CliRunner, store: str, tmp_path: Path) -> None:
    """What the export holds; whether Harbor reads it is Harbor's to say (tests/harbor)."""
    job = tmp_path / "job"
    result = runner.invoke(app, ["sweep", "export", "mixed", str(job), "--store", store, "-o", "json"])
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout) == {"job_dir": str(job), "trials": 7, "unfinished": ["user-mention-2"],
                                         "quarantined": [], "metadata_yaml": True, "harbor_release": "0.26"}  # fmt: skip
    trial_dirs = sorted(p for p in job.iterdir() if p.is_dir())
    assert len(trial_dirs) == 7 and not (job / "user-mention-2").exists()
    for trial_dir in trial_dirs:
        for file in ("result.json", "config.json", "agent/buzz/summary.json"):
            assert (trial_dir / file).is_file(), (trial_dir, file)

    job_result = json.loads((job / "result.json").read_text())
    assert job_result["n_total_trials"] == 9 and job_result["stats"]["n_completed_trials"] == 7
    assert list(job_result["stats"]["evals"]) == ["buzz-orchestra__standin-team-1__builtin"]

    config = json.loads((job / "config.json").read_text())
    assert (config["job_name"], config["n_attempts"], config["n_concurrent_trials"]) == ("mixed", 3, 2)
    assert config["timeout_multiplier"] == 2.0
    assert [t["path"] for t in config["tasks"]] == ["hello-file", "reply-to-thread", "user-mention"]
    trial = json.loads((job / "hello-file-1" / "config.json").read_text())
    assert config["agents"] == [trial["agent"]] and trial["task"] in config["tasks"]

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


def test_retries_kept_in_the_store_are_harbors_n_retries(runner: CliRunner, tmp_path: Path) -> None:
    from tests.unit.results.sweep_builder import TrialPlan, build_sweep

    store = build_sweep(tmp_path / "store", "r", [TrialPlan("hello-file", 1)], spec={"attempts": 1})
    for attempt in (1, 2):  # two tries of hello-file-1 lost to infra before the committed one
        kept = tmp_path / "store" / "r" / "hello-file-1" / "retries" / str(attempt)
        kept.mkdir(parents=True)
        (kept / "result.json").write_text("{}")
    assert runner.invoke(app, ["sweep", "export", "r", str(tmp_path / "job"), "--store", store]).exit_code == 0
    assert json.loads((tmp_path / "job" / "result.json").read_text())["stats"]["n_retries"] == 2
