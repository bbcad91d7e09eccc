"""The summary as one JSON document (``buzzctl sweep results -o json``), its failures list and
CSV rows. The document's shape is pinned by schema.py; CSV columns are the seed's
``write_csv`` columns (docs/failures.md#summaries) followed by ours (pass@k, cost ceiling, flags, stack digest).
Rows, failures and trial rows carry the stack digest beside the condition hash: the two
together say which experiment a number belongs to ("" / "-" when the stack is not known)."""

from __future__ import annotations

from typing import Any

from .condition_stats import BOX_HITS, ConditionStats
from .statistics import Resampling
from .table import ConditionRow, ResultsTable
from .trial import TrialRecord

# 2: rows, failures and trial rows carry the stack digest; 3: rows carry their statistics;
# 4: the statistics say what the box did (statistics.box, docs/resources.md#infra-noise);
# 5: they carry pass^k beside pass@k (statistics.pass_hat_k, docs/statistics.md#the-estimands)
DOCUMENT_VERSION = 5

CSV_COLUMNS = (
    "condition", "manifest_sha256", "agents", "n", "pass_rate",
    "cost_usd_per_trial", "cost_usd_total", "tokens_per_trial",
    "agent_seconds_per_trial", "timeouts", "launch_failures",
    "errors", "round_capped", "unreconciled", "verifier_broken",
    "stopped_without_done", "timeout_multipliers",
    "pass_at_k", "cost_usd_ceiling_per_trial", "cost_usd_ceiling_total", "flags",
    "stack_digest", "infra_rate", "pressure_rate", "retried_rate",
)  # fmt: skip
STACK_SHORT = 8  # as the condition hash is shown


def bundle_url(store_url: str, sweep: str, trial: str) -> str:
    return f"{store_url.rstrip('/')}/{sweep}/{trial}"


def row_document(row: ConditionRow, resampling: Resampling = Resampling()) -> dict[str, Any]:
    return {
        "condition": row.condition,
        "manifest_sha256": row.manifest_sha256,
        "hash": row.manifest_sha256[:8],
        "stack_digest": row.stack_digest,
        "stack": row.stack_digest[:STACK_SHORT],
        "agents": row.agents,
        "n": row.n,
        "pass_rate": row.pass_rate,
        "pass_at_k": row.pass_at_k,
        "cost_usd": {
            "per_trial": {"floor": row.cost_per_trial, "ceiling": row.cost_ceiling_per_trial},
            "total": {"floor": row.total_cost, "ceiling": row.total_cost_ceiling},
        },
        "tokens": {"per_trial": row.tokens_per_trial, "total": row.total_tokens},
        "agent_seconds_per_trial": row.seconds_per_trial,
        "counts": {
            "timeouts": row.timeouts,
            "launch_failures": row.launch_failures,
            "errors": row.errors,
            "round_capped": row.round_capped,
            "unreconciled": row.unreconciled,
            "verifier_broken": row.verifier_broken,
            "stopped_without_done": row.stopped_without_done,
        },
        "timeout_multipliers": row.timeout_multipliers,
        "flags": row.flags,
        # the figures with their intervals, over the trials whose score stands (condition_stats.py)
        "statistics": ConditionStats.of(row.trials).document(resampling),
    }


def failure_reason(trial: TrialRecord) -> str:
    """Why a trial scored zero, in one line: its exception, a broken verifier, or the verifier
    dimensions it missed."""
    if trial.exception_type:
        message = (trial.exception_message or "").splitlines()[0] if trial.exception_message else ""
        return f"{trial.exception_type}: {message}"[:200] if message else trial.exception_type
    if trial.verifier_broken:
        return "verifier broken (a health marker in verifier/test-stdout.txt, docs/failures.md#verifier-health)"
    missed = sorted(k for k, v in trial.rewards.items() if k != "reward" and v < 1.0)
    if missed:
        return "failed " + ", ".join(missed)
    return "no reward" if not trial.rewards else "reward 0"


def failures(summary: ResultsTable, store_url: str) -> list[dict[str, Any]]:
    """The seed's ``--failures``: every trial that scored zero, with its outcome and bundle."""
    return [
        {
            "trial": t.name,
            "condition": row.condition,
            "hash": row.manifest_sha256[:8],
            "stack": row.stack_digest[:STACK_SHORT],
            "task": t.task,
            "attempt": t.attempt,
            "outcome": t.outcome,
            "reason": failure_reason(t),
            "bundle": bundle_url(store_url, summary.sweep, t.name),
        }
        for row in summary.rows
        for t in row.trials
        if t.reward == 0.0
    ]


def trial_document(trial: TrialRecord, store_url: str, sweep: str) -> dict[str, Any]:
    return {
        "trial": trial.name,
        "task": trial.task,
        "attempt": trial.attempt,
        "condition": trial.condition,
        "hash": trial.manifest_sha256[:8],
        "stack": trial.stack_digest[:STACK_SHORT],
        "reward": trial.reward,
        "rewards": trial.rewards,
        "outcome": trial.outcome,
        "cost_usd": {"floor": trial.cost_usd, "ceiling": trial.cost_usd_ceiling},
        "tokens": {"input": trial.input_tokens, "output": trial.output_tokens},
        "agent_seconds": trial.agent_seconds,
        "total_seconds": trial.total_seconds,
        "flags": {
            "round_capped": trial.round_capped,
            "unpriced": not trial.reconciled,
            "verifier_broken": trial.verifier_broken,
            "no_done": trial.stopped_without_done,
            "secrets": trial.secret_findings > 0,
        },
        "bundle": bundle_url(store_url, sweep, trial.name),
    }


def results_document(
    summary: ResultsTable,
    store_url: str,
    *,
    with_failures: bool = False,
    with_trials: bool = False,
    resampling: Resampling = Resampling(),
) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "version": DOCUMENT_VERSION,
        "sweep": summary.sweep,
        "store": store_url,
        "trials": len(summary.trials),
        "unfinished": list(summary.unfinished),
        "skipped": list(summary.skipped),
        "resampling": resampling.document(),
        "conditions": [row_document(row, resampling) for row in summary.rows],
    }
    if with_failures:
        doc["failures"] = failures(summary, store_url)
    if with_trials:
        doc["trial_rows"] = [trial_document(t, store_url, summary.sweep) for t in summary.trials]
    return doc


def csv_rows(summary: ResultsTable) -> list[list[str]]:
    """Header plus one row per condition, numbers formatted as the seed's write_csv does."""
    rows: list[list[str]] = [list(CSV_COLUMNS)]
    for c in summary.rows:
        box = ConditionStats.of(c.trials).box_estimates()
        rows.append(
            [
                c.condition, c.manifest_sha256, str(c.agents), str(c.n),
                f"{c.pass_rate:.6f}", f"{c.cost_per_trial:.6f}",
                f"{c.total_cost:.6f}", f"{c.tokens_per_trial:.1f}",
                f"{c.seconds_per_trial:.2f}", str(c.timeouts),
                str(c.launch_failures), str(c.errors),
                str(c.round_capped), str(c.unreconciled), str(c.verifier_broken),
                str(c.stopped_without_done),
                " ".join(f"{m:g}" for m in c.timeout_multipliers),
                " ".join(f"{k}:{v:.6f}" for k, v in c.pass_at_k.items()),
                f"{c.cost_ceiling_per_trial:.6f}", f"{c.total_cost_ceiling:.6f}",
                ", ".join(c.flags),
                c.stack_digest,
                *("" if box[name] is None else f"{box[name]:.6f}" for name in BOX_HITS),
            ]
        )  # fmt: skip
    return rows
