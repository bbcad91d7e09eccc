"""Harbor's ``config.json`` documents: the sweep's as a ``JobConfig``, each trial's as a
``TrialConfig`` (docs/harbor.md). Pure: names and numbers in, documents out.

Harbor plans a job's trials as tasks × agents × attempts and, on ``harbor jobs resume``, keeps a
finished trial only when its ``config.json`` equals a planned one (everything but ``trial_name``
and ``job_id``). So a trial's config is *derived* from its sweep's job config — the same agent,
the same task entry, the same multiplier — the way Harbor's ``JobPlan.build_trial_configs`` does,
and both come from the functions here. The project's own keys (``spec``, ``namespace``,
``buzz_dataset``) sit at top level, where Harbor's models ignore unknown keys.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping
from pathlib import PurePosixPath
from typing import Any

from buzz_operator.ledger.harbor_result import AGENT_NAME, SCHEMA_VERSION

# The seed's adapter class (docs/bundle.md#agent-metadata), which Harbor would import to run this agent.
AGENT_IMPORT_PATH = "harbor_buzz_orchestra:BuzzOrchestraAgent"
# Harbor's JobConfig default, and the sweep spec's default too (api/sweep.py).
DEFAULT_PARALLELISM = 4


def job_id(sweep: str) -> str:
    """A stable uuid per sweep name: trials and exports of one sweep carry one Harbor job id."""
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"buzz-operator:{sweep}"))


def agent_config(condition: str, manifest_sha256: str) -> dict[str, Any]:
    """Harbor ``AgentConfig`` of a condition. ``model_name`` stays null as in the seed's runs
    (the team has several models; the orchestrator's is in result.json ``agent_info``)."""
    return {
        "name": AGENT_NAME,
        "import_path": AGENT_IMPORT_PATH,
        "model_name": None,
        "kwargs": {"condition": condition, "manifest_sha256": manifest_sha256},
    }


def task_config(task: str, source: str | None) -> dict[str, Any]:
    """Harbor ``TaskConfig`` of a local task: ``path`` relative to the dataset's root (Harbor's
    ``LocalTaskId``), ``source`` the dataset it came from (Harbor's evals key and metrics key)."""
    return {"path": task, "source": source}


def task_name(entry: Mapping[str, Any]) -> str:
    """The task a ``TaskConfig`` names, as Harbor's task ids name it: a local task by its path,
    a git task by its path's last segment (``GitTaskId.get_name``)."""
    return PurePosixPath(str(entry.get("path") or "")).name


def task_id(entry: Mapping[str, Any], task: str) -> dict[str, Any]:
    """result.json ``task_id``: Harbor's ``GitTaskId`` for a git task, else its ``LocalTaskId``."""
    if entry.get("git_url"):
        return {"git_url": entry["git_url"], "git_commit_id": entry.get("git_commit_id"), "path": entry.get("path")}
    return {"path": task}


def sweep_job_config(
    *,
    name: str,
    namespace: str,
    spec: Mapping[str, Any],
    condition: str | None,
    condition_hash: str | None,
    dataset: str | None,
    tasks: Iterable[str],
    origins: Mapping[str, Mapping[str, Any]] | None = None,
) -> dict[str, Any]:
    """The sweep's ``config.json``: a Harbor ``JobConfig`` listing its tasks explicitly; a task
    fetched from git (``origins``, by task name) is Harbor's git task
    ``{path, git_url, git_commit_id, source}``, as Harbor's registry and repo clients list it.

    No ``datasets`` entry: Harbor reads ``{"name": "builtin"}`` as a dataset to fetch from its
    registry, and none of the project's sources (builtin, ConfigMap, object-store prefix) is one.
    The source is recorded on each task and, in the project's words, under ``buzz_dataset``.
    """
    names = sorted(set(tasks))
    return {
        "schema_version": SCHEMA_VERSION,
        "job_name": name,
        "jobs_dir": ".",
        "n_attempts": int(spec.get("attempts") or 1),
        "timeout_multiplier": float(spec.get("timeoutMultiplier") or 1.0),
        "n_concurrent_trials": int(spec.get("parallelism") or DEFAULT_PARALLELISM),
        "agents": [agent_config(condition or "", condition_hash or "")],
        "datasets": [],
        "tasks": [dict(origins[task]) if task in (origins or {}) else task_config(task, dataset) for task in names],
        "namespace": namespace,
        "buzz_dataset": {"name": dataset, "tasks": names},
        "spec": dict(spec),
    }


def trial_config(
    job: Mapping[str, Any] | None,
    *,
    task: str,
    trial_name: str,
    sweep: str,
    condition: str,
    condition_hash: str,
    spec: Mapping[str, Any],
) -> dict[str, Any]:
    """The trial's ``config.json`` (a Harbor ``TrialConfig``), derived from its sweep's job config
    ``job`` as Harbor derives one. Without a usable job config (a store written before it held
    one) the trial's own facts stand in: its condition, a task of unknown source, and no
    multiplier (Harbor then reads 1.0; the project's readers fall back to the sweep's spec)."""
    job = job or {}
    # a Harbor AgentConfig names its import path; the older sweep config.json's agent entry did not
    agents = [a for a in job.get("agents") or [] if isinstance(a, Mapping) and a.get("import_path")]
    agent = dict(agents[0]) if agents else agent_config(condition, condition_hash)
    entries = [t for t in job.get("tasks") or [] if isinstance(t, Mapping) and task_name(t) == task]
    multiplier = job.get("timeout_multiplier")
    config: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "task": dict(entries[0]) if entries else task_config(task, None),
        "trial_name": trial_name,
        "trials_dir": ".",
    }
    if isinstance(multiplier, int | float) and not isinstance(multiplier, bool):
        config["timeout_multiplier"] = float(multiplier)
    config.update({"agent": agent, "job_id": job_id(sweep), "spec": dict(spec)})
    return config
