"""A sweep as a Harbor job directory: job ``config.json``, job ``result.json`` with JobStats,
and the leaderboard ``metadata.yaml`` (docs/harbor.md; docs/bundle.md#metadatayaml).

Pure: trial documents in, job documents out. The stats are Harbor's own computation
(results/harbor_stats.py). The job config is the one Harbor would need to plan exactly the
exported trials: their agents, tasks and multiplier as the trials' own ``config.json`` record
them, so ``harbor jobs resume`` on the export keeps every one of them.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from buzz_operator.ledger.harbor_config import DEFAULT_PARALLELISM, job_id
from buzz_operator.ledger.harbor_result import SCHEMA_VERSION

from .harbor_stats import NEWEST, HarborRelease, job_stats

AGENT_URL = "https://github.com/block/buzz"
AGENT_ORG = "Block"
FILL_ME = "FILL_ME"
# run_leaderboard.py's provider → organisation table (docs/bundle.md#metadatayaml); anything else is left for the submitter
PROVIDER_ORGS = {"anthropic": "Anthropic", "openai": "OpenAI", "databricks": "Databricks"}


def job_result(
    job_name: str,
    results: Sequence[Mapping[str, Any]],
    *,
    n_total_trials: int,
    n_running_trials: int = 0,
    n_retries: int = 0,
    exported_at: str | None = None,
    release: HarborRelease = NEWEST,
) -> dict[str, Any]:
    """Harbor ``JobResult``: id, started_at, updated_at, finished_at, n_total_trials, stats — the
    stats as Harbor ``release`` computes them, named under ``buzz_harbor_release`` (a key Harbor
    ignores), since 0.25 and 0.26 count different trials (results/harbor_stats.py).

    The id is the sweep's Harbor job id (its trials carry it too), so exporting the same sweep
    twice gives the same job; ``finished_at`` stays null while trials are missing, as Harbor's
    does for a running job. Harbor requires ``started_at``: with no trial started yet it is
    ``exported_at``."""
    starts = sorted(str(r["started_at"]) for r in results if r.get("started_at"))
    ends = sorted(str(r["finished_at"]) for r in results if r.get("finished_at"))
    done = len(results) >= n_total_trials and n_running_trials == 0
    started = starts[0] if starts else exported_at
    return {
        "schema_version": SCHEMA_VERSION,
        "id": job_id(job_name),
        "started_at": started,
        "updated_at": ends[-1] if ends else started,
        "finished_at": ends[-1] if ends and done else None,
        "n_total_trials": n_total_trials,
        "stats": job_stats(results, n_total_trials=n_total_trials, n_running_trials=n_running_trials,
                           n_retries=n_retries, release=release),
        "buzz_harbor_release": release,
    }


def _distinct(documents: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    seen: dict[str, dict[str, Any]] = {}
    for document in documents:
        seen.setdefault(json.dumps(document, sort_keys=True), dict(document))
    return list(seen.values())


def job_config(
    job_name: str,
    *,
    attempts: int,
    parallelism: int | None,
    trial_configs: Sequence[Mapping[str, Any]],
    sweep_config: Mapping[str, Any],
) -> dict[str, Any]:
    """Harbor ``JobConfig`` of the export.

    Agents, tasks and the timeout multiplier are those the trials' ``config.json`` record (Harbor
    resumes a trial only when its config equals a planned one), plus the sweep's planned tasks
    that have no committed trial yet. No ``datasets``: the tasks are listed, and the project's
    dataset is kept under ``buzz_dataset``."""
    agents = _distinct([c["agent"] for c in trial_configs if isinstance(c.get("agent"), Mapping)])
    planned = [t for t in sweep_config.get("tasks") or [] if isinstance(t, Mapping) and t.get("path")]
    tasks = _distinct([*[c["task"] for c in trial_configs if isinstance(c.get("task"), Mapping)], *planned])
    multipliers = sorted({float(c["timeout_multiplier"]) for c in trial_configs
                          if isinstance(c.get("timeout_multiplier"), int | float)})  # fmt: skip
    if not agents:
        agents = [dict(a) for a in sweep_config.get("agents") or [] if isinstance(a, Mapping) and a.get("import_path")]
    multiplier = multipliers[-1] if multipliers else sweep_config.get("timeout_multiplier", 1.0)
    config: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "job_name": job_name,
        "jobs_dir": ".",
        "n_attempts": attempts,
        "timeout_multiplier": float(multiplier) if isinstance(multiplier, int | float) else 1.0,
        "n_concurrent_trials": parallelism or DEFAULT_PARALLELISM,
        "agents": agents,
        "datasets": [],
        "tasks": sorted(tasks, key=lambda t: (str(t.get("path")), json.dumps(t, sort_keys=True))),
    }
    if isinstance(sweep_config.get("buzz_dataset"), Mapping):
        config["buzz_dataset"] = dict(sweep_config["buzz_dataset"])
    return config


def leaderboard_metadata(
    manifest: Mapping[str, Any], endpoints: Mapping[str, Mapping[str, Any]]
) -> dict[str, Any]:
    """``metadata.yaml`` derived from the roster as run_leaderboard.py does (docs/bundle.md#metadatayaml): one model per
    distinct ``model_revision`` (else endpoint), provider from the endpoint config, organisation
    from the provider; display names are for the submitter to review."""
    models: list[dict[str, str]] = []
    seen: set[str] = set()
    for entry in manifest.get("roster") or []:
        model = str(entry.get("model_revision") or entry.get("endpoint"))
        if model in seen:
            continue
        seen.add(model)
        provider = str((endpoints.get(str(entry.get("endpoint"))) or {}).get("provider") or FILL_ME)
        models.append(
            {
                "model_name": model,
                "model_provider": provider,
                "model_display_name": model,
                "model_org_display_name": PROVIDER_ORGS.get(provider, FILL_ME),
            }
        )
    return {
        "agent_url": AGENT_URL,
        "agent_display_name": f"Buzz Orchestra ({manifest.get('condition', 'team')})",
        "agent_org_display_name": AGENT_ORG,
        "models": models,
    }
