"""A sweep as a Harbor job directory: job ``config.json``, job ``result.json`` with JobStats,
and the leaderboard ``metadata.yaml`` (anchors.md §A1; buzz-harness.md §6.2).

Pure: trial ``result.json`` documents in, job documents out. JobStats is computed the way
Harbor's ``JobStats.increment`` does (harbor ``models/job/result.py``): a trial counts toward
``n_trials`` of its eval when its verifier produced rewards, toward ``n_errors`` and
``exception_stats`` when it carries ``exception_info``; ``reward_stats`` lists trial names by
reward value per reward key; token and cost totals are summed where reported. Evals are keyed
``<agent>__<model>__<dataset>`` (``<agent>__<dataset>`` without a model, dataset
``source`` or ``adhoc``).
"""

from __future__ import annotations

import uuid
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from buzz_operator.sweep.rollup import PASS_THRESHOLD, k_values, pass_at_k

from .trial import number

AGENT_URL = "https://github.com/block/buzz"
AGENT_ORG = "Block"
FILL_ME = "FILL_ME"
# run_leaderboard.py's provider → organisation table (§6.2); anything else is left for the submitter
PROVIDER_ORGS = {"anthropic": "Anthropic", "openai": "OpenAI", "databricks": "Databricks"}


def eval_key(result: Mapping[str, Any]) -> str:
    info = result.get("agent_info") or {}
    model = (info.get("model_info") or {}).get("name")
    dataset = result.get("source") or "adhoc"
    agent = info.get("name") or "unknown"
    return f"{agent}__{model}__{dataset}" if model else f"{agent}__{dataset}"


def _reward_key(value: float | int) -> str:
    # JSON object keys are strings; Harbor's pydantic dump writes float keys as e.g. "1.0"
    return repr(float(value)) if isinstance(value, float) else str(value)


def _pass_at_k(rewards_by_task: Mapping[str, list[float]]) -> dict[str, float]:
    most = max((len(v) for v in rewards_by_task.values()), default=0)
    out: dict[str, float] = {}
    for k in k_values(most) if most else []:
        estimates = [
            pass_at_k(len(v), sum(1 for r in v if r >= PASS_THRESHOLD), k)
            for v in rewards_by_task.values()
            if len(v) >= k
        ]
        if estimates:
            out[str(k)] = sum(estimates) / len(estimates)
    return out


def job_stats(
    results: Sequence[Mapping[str, Any]],
    *,
    n_total_trials: int,
    n_running_trials: int = 0,
    n_retries: int = 0,
) -> dict[str, Any]:
    """Harbor ``JobStats`` of the committed trial results."""
    evals: dict[str, dict[str, Any]] = {}
    by_task: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    totals: dict[str, float | int | None] = dict.fromkeys(
        ("n_input_tokens", "n_cache_tokens", "n_output_tokens", "cost_usd")
    )
    errored = cancelled = 0
    for result in results:
        key = eval_key(result)
        stats = evals.setdefault(
            key,
            {
                "n_trials": 0,
                "n_errors": 0,
                "metrics": [],
                "pass_at_k": {},
                "reward_stats": {},
                "exception_stats": {},
            },
        )
        rewards = (result.get("verifier_result") or {}).get("rewards")
        if rewards is not None:
            stats["n_trials"] += 1
            for name, value in rewards.items():
                stats["reward_stats"].setdefault(name, {}).setdefault(_reward_key(value), []).append(
                    result["trial_name"]
                )
            reward = number(rewards.get("reward"))
            by_task[key][str(result.get("task_name"))].append(reward if reward is not None else 0.0)
        exception = result.get("exception_info")
        if exception is not None:
            kind = str(exception.get("exception_type"))
            stats["exception_stats"].setdefault(kind, []).append(result["trial_name"])
            stats["n_errors"] += 1
            errored += 1
            cancelled += kind == "CancelledError"
        agent = result.get("agent_result") or {}
        for field in totals:
            value = number(agent.get(field))
            if value is not None:
                totals[field] = (totals[field] or 0) + (value if field == "cost_usd" else int(value))
    for key, stats in evals.items():
        scores = [r for rewards in by_task[key].values() for r in rewards]
        stats["metrics"] = [{"mean": sum(scores) / len(scores)}] if scores else []
        stats["pass_at_k"] = _pass_at_k(by_task[key])
    completed = len(results)
    return {
        "n_completed_trials": completed,
        "n_errored_trials": errored,
        "n_running_trials": n_running_trials,
        "n_pending_trials": max(n_total_trials - completed - n_running_trials, 0),
        "n_cancelled_trials": cancelled,
        "n_retries": n_retries,
        "evals": evals,
        **totals,
    }


def job_result(
    job_name: str, results: Sequence[Mapping[str, Any]], *, n_total_trials: int, n_running_trials: int = 0
) -> dict[str, Any]:
    """Harbor ``JobResult``: id, started_at, updated_at, finished_at, n_total_trials, stats.

    The id is a uuid5 of the job name, so exporting the same sweep twice gives the same job;
    ``finished_at`` stays null while trials are missing, as Harbor's does for a running job."""
    starts = sorted(str(r["started_at"]) for r in results if r.get("started_at"))
    ends = sorted(str(r["finished_at"]) for r in results if r.get("finished_at"))
    done = len(results) >= n_total_trials and n_running_trials == 0
    return {
        "id": str(uuid.uuid5(uuid.NAMESPACE_URL, f"buzz-operator:{job_name}")),
        "started_at": starts[0] if starts else None,
        "updated_at": ends[-1] if ends else (starts[0] if starts else None),
        "finished_at": ends[-1] if ends and done else None,
        "n_total_trials": n_total_trials,
        "stats": job_stats(results, n_total_trials=n_total_trials, n_running_trials=n_running_trials),
    }


def job_config(
    job_name: str,
    *,
    attempts: int,
    parallelism: int,
    timeout_multiplier: float,
    conditions: Iterable[tuple[str, str]],
    tasks: Iterable[str],
    dataset: str,
) -> dict[str, Any]:
    """Harbor ``JobConfig`` fields that describe the run (job_name, jobs_dir, n_attempts,
    timeout_multiplier, n_concurrent_trials, agents, datasets); the agent kwargs name the
    condition and its hash, the way the seed's trials carry them."""
    return {
        "job_name": job_name,
        "jobs_dir": ".",
        "n_attempts": attempts,
        "timeout_multiplier": timeout_multiplier,
        "n_concurrent_trials": parallelism,
        "agents": [
            {
                "name": "buzz-orchestra",
                "import_path": "harbor_buzz_orchestra:BuzzOrchestraAgent",
                "model_name": None,
                "kwargs": {"condition": condition, "manifest_sha256": sha},
            }
            for condition, sha in sorted(set(conditions))
        ],
        "datasets": [{"name": dataset, "task_names": sorted(set(tasks))}],
    }


def leaderboard_metadata(
    manifest: Mapping[str, Any], endpoints: Mapping[str, Mapping[str, Any]]
) -> dict[str, Any]:
    """``metadata.yaml`` derived from the roster as run_leaderboard.py does (§6.2): one model per
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
