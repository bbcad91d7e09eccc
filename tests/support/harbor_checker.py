"""Asks Harbor's own code whether it reads what the operator wrote (docs/harbor.md).

Runs in one of Harbor's virtualenvs (hack/harbor.sh, one per release), never in the project's: it
imports harbor and the standard library only, and reads what the installed release offers. Each
argument is a directory:

    harbor_checker.py job DIR     a Harbor job directory (`buzzctl sweep export`)
    harbor_checker.py sweep DIR   a sweep's directory in a file:// store
    harbor_checker.py policies    Harbor's error-policy table (0.26+), as JSON

and prints one JSON report per directory, a list, on stdout; the exit status is 1 when any report
has problems. Harbor decides each check — nothing here compares key sets:
- the job config.json parses as Harbor's JobConfig, and none of its datasets reads as a
  registry dataset; every committed trial's result.json parses as TrialResult and its config.json
  as TrialConfig, equal to the config embedded in the result;
- Harbor's viewer (its FastAPI app, through a test client) lists every trial and opens each one
  as a full result; a trial's agent/trajectory.json passes Harbor's TrajectoryValidator (its ATIF
  models) and the viewer serves it, with the ids of its embedded subagent trajectories reported;
- Harbor's `jobs resume` reconciliation (`Job.__init__` on a copy: it deletes uncommitted trial
  directories) keeps every committed trial, and plans exactly the rest;
- for a job directory: its result.json parses as JobResult, and the JobStats Harbor computes from
  the trials (`JobPlan.aggregate_stats`, its metrics and pass@k) equal the exported ones;
- where the release computes `reward_valid` from an error policy with overrides (0.26+), each
  trial's equals the `reward_valid` the operator wrote.
The report also names, per trial, what the release makes of its exception (0.25: the failure
cause; 0.26+: retry, grade, valid reward).
"""

from __future__ import annotations

import asyncio
import importlib.metadata
import json
import logging
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

from fastapi.testclient import TestClient
from harbor.job import Job
from harbor.job_plan import JobPlan
from harbor.models.job.config import JobConfig
from harbor.models.job.result import JobResult
from harbor.models.trial.config import TrialConfig
from harbor.models.trial.result import ExceptionInfo, TrialResult
from harbor.utils.trajectory_validator import TrajectoryValidator
from harbor.viewer.server import create_app

PAGE = 100
VERSION = importlib.metadata.version("harbor")
# 0.26 replaced the failure-cause table with an ErrorPolicy a per-exception override can change
OVERRIDES = "policy_override" in ExceptionInfo.model_fields


def _committed(job_dir: Path) -> list[str]:
    return sorted(d.name for d in job_dir.iterdir() if d.is_dir() and (d / "result.json").is_file())


def _check_trials(job_dir: Path, problems: list[str]) -> dict[str, TrialResult]:
    results: dict[str, TrialResult] = {}
    for name in _committed(job_dir):
        try:
            result = TrialResult.model_validate_json((job_dir / name / "result.json").read_text())
            config = TrialConfig.model_validate_json((job_dir / name / "config.json").read_text())
        except Exception as error:  # pydantic's ValidationError, or a missing config.json
            problems.append(f"{name}: {error}")
            continue
        results[name] = result
        if result.trial_name != name:
            problems.append(f"{name}: result.json names the trial {result.trial_name!r}")
        if result.config != config:
            problems.append(f"{name}: config.json differs from the config in result.json")
        if config.task.get_task_id() != result.task_id:
            problems.append(f"{name}: config.json's task is not result.json's task_id")
        written = json.loads((job_dir / name / "result.json").read_text()).get("reward_valid")
        if OVERRIDES and written is not None and written != result.reward_valid:
            problems.append(f"{name}: result.json says reward_valid {written}, Harbor computes {result.reward_valid}")
    return results


def _check_trajectories(client: TestClient, job_dir: Path, results: dict[str, TrialResult],
                        problems: list[str]) -> dict[str, list[str]]:
    """Each trial's trajectory as Harbor validates and serves it: trial → subagent trajectory ids."""
    found: dict[str, list[str]] = {}
    for name in results:
        path = job_dir / name / "agent" / "trajectory.json"
        if not path.is_file():
            continue
        validator = TrajectoryValidator()
        if not validator.validate(path):
            problems.append(f"{name}: agent/trajectory.json: " + "; ".join(validator.get_errors())[:600])
            continue
        answer = client.get(f"/api/jobs/{job_dir.name}/trials/{name}/trajectory")
        served = answer.json() if answer.status_code == 200 else None
        if not isinstance(served, dict):
            problems.append(f"viewer: trajectory of {name} answered {answer.status_code}: {answer.text[:300]}")
            continue
        found[name] = [sub.get("trajectory_id") for sub in served.get("subagent_trajectories") or []]
    return found


def _check_viewer(jobs_dir: Path, job: str, results: dict[str, TrialResult],
                  problems: list[str]) -> tuple[list[str], dict[str, list[str]]]:
    client = TestClient(create_app(jobs_dir, mode="jobs"))
    if (answer := client.get(f"/api/jobs/{job}")).status_code != 200:
        problems.append(f"viewer: GET /api/jobs/{job} answered {answer.status_code}: {answer.text[:300]}")
    listed: dict[str, dict[str, Any]] = {}
    page = 1
    while True:
        answer = client.get(f"/api/jobs/{job}/trials", params={"page": page, "page_size": PAGE})
        if answer.status_code != 200:
            problems.append(f"viewer: listing trials answered {answer.status_code}: {answer.text[:300]}")
            break
        body = answer.json()
        listed.update({item["name"]: item for item in body["items"]})
        if page >= body["total_pages"]:
            break
        page += 1
    for name, result in results.items():
        item = listed.get(name)
        if item is None:
            problems.append(f"viewer: trial {name} is not listed")
            continue
        # a result the viewer could not parse is listed from config.json alone, with the job's id
        if item.get("id") != str(result.id):
            problems.append(f"viewer: trial {name} is listed without its result.json")
        answer = client.get(f"/api/jobs/{job}/trials/{name}")
        if answer.status_code != 200 or answer.json().get("id") != str(result.id):
            problems.append(f"viewer: opening trial {name} answered {answer.status_code}: {answer.text[:300]}")
    return sorted(listed), _check_trajectories(client, jobs_dir / job, results, problems)


def _resume(jobs_dir: Path, job: str, problems: list[str]) -> tuple[Job | None, JobConfig | None, Any, Any]:
    try:
        config = JobConfig.model_validate_json((jobs_dir / job / "config.json").read_text())
    except Exception as error:
        problems.append(f"config.json: {error}")
        return None, None, None, None
    registry = [d.name for d in config.datasets if d.is_registry()]
    if registry:
        problems.append(f"config.json: datasets {registry} read as Harbor registry datasets")
    config.jobs_dir, config.job_name = jobs_dir, job
    try:
        tasks = asyncio.run(JobPlan.resolve_task_configs(config))
        metrics = asyncio.run(JobPlan.resolve_metrics(config, tasks))
        resumed = Job(config, _task_configs=tasks, _metrics=metrics, _task_download_results={})
    except Exception as error:  # Harbor refuses to resume this directory
        problems.append(f"resume: {type(error).__name__}: {error}")
        return None, config, None, None
    resumed._close_logger_handlers()
    return resumed, config, tasks, metrics


def _check_stats(job_dir: Path, plan: JobPlan, results: dict[str, TrialResult], problems: list[str]) -> None:
    try:
        exported = JobResult.model_validate_json((job_dir / "result.json").read_text())
    except Exception as error:
        problems.append(f"result.json: {error}")
        return
    ordered = [results[name] for name in sorted(results)]
    stats = plan.aggregate_stats(ordered, n_total_trials=exported.n_total_trials, n_retries=exported.stats.n_retries)
    if exported.n_total_trials != len(plan.trial_configs):
        problems.append(f"result.json: n_total_trials {exported.n_total_trials}, Harbor plans {len(plan.trial_configs)}")
    if stats != exported.stats:
        problems.append(
            "result.json: stats differ from Harbor's\n  exported: "
            + json.dumps(exported.stats.model_dump(mode="json"), sort_keys=True)
            + "\n  Harbor's: " + json.dumps(stats.model_dump(mode="json"), sort_keys=True)
        )


def check(kind: str, source: Path) -> dict[str, Any]:
    problems: list[str] = []
    job = source.name
    with tempfile.TemporaryDirectory() as scratch:
        jobs_dir = Path(scratch)
        # a copy: the viewer only reads, but resume deletes what it does not keep
        shutil.copytree(source, jobs_dir / job, symlinks=True)
        results = _check_trials(jobs_dir / job, problems)
        listed, trajectories = _check_viewer(jobs_dir, job, results, problems)
        resumed, config, tasks, metrics = _resume(jobs_dir, job, problems)
        kept: list[str] = []
        remaining = None
        if resumed is not None and config is not None:
            kept = sorted(r.trial_name for r in resumed._existing_trial_results)
            remaining = len(resumed._remaining_trial_configs)
            if kept != sorted(r.trial_name for r in results.values()):
                problems.append(f"resume: Harbor keeps {kept}, committed are {sorted(results)}")
            if remaining != len(resumed._trial_configs) - len(kept):
                problems.append(f"resume: {remaining} trials to run of {len(resumed._trial_configs)} planned")
            if kind == "job":
                plan = JobPlan(config=config, id=resumed._id, task_configs=tasks, trial_configs=resumed._trial_configs,
                               metrics=metrics, task_download_results={}, job_lock=None)  # type: ignore[arg-type]
                _check_stats(jobs_dir / job, plan, results, problems)
    return {"kind": kind, "dir": str(source), "harbor": VERSION, "trials": sorted(results), "viewer_listed": listed,
            "resume_kept": kept, "resume_remaining": remaining, "trajectories": trajectories, "problems": problems,
            **_policies(results)}


def _policies(results: dict[str, TrialResult]) -> dict[str, Any]:
    """What the release makes of each trial's exception, and its reward_valid."""
    valid = {name: bool(r.reward_valid) for name, r in results.items()}
    if not OVERRIDES:  # 0.25: a failure cause per trial
        causes = {n: r.failure_cause.value for n, r in results.items() if r.failure_cause is not None}
        return {"failure_causes": causes, "reward_valid": valid}
    policies = {}
    for name, result in results.items():
        if result.exception_info is not None:
            policy = result.exception_info.policy
            policies[name] = [policy.should_retry, policy.should_grade, policy.has_valid_reward]
    return {"policies": policies, "reward_valid": valid}


def _policy_table() -> dict[str, list[bool]]:
    from harbor.models.trial.error_policy import ERROR_POLICIES

    return {name: [p.should_retry, p.should_grade, p.has_valid_reward] for name, p in ERROR_POLICIES.items()}


def main(argv: list[str]) -> int:
    if argv == ["policies"]:
        print(json.dumps(_policy_table() if OVERRIDES else None))
        return 0
    if len(argv) % 2 or not argv or any(kind not in ("job", "sweep") for kind in argv[::2]):
        print("usage: harbor_checker.py {job|sweep} DIR [{job|sweep} DIR ...]", file=sys.stderr)
        return 2
    logging.disable(logging.WARNING)  # Harbor logs each trial it skips; the report says it instead
    reports = [check(kind, Path(path)) for kind, path in zip(argv[::2], argv[1::2], strict=True)]
    print(json.dumps(reports, indent=2))
    return 1 if any(r["problems"] for r in reports) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
