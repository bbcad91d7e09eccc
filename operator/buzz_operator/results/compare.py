"""Two sweeps compared task by task (``buzzctl compare``, docs/statistics.md).

Each sweep is one experiment (one condition, one stack). The pair is made over the tasks both
scored, and only when both ran the same version of each: a task whose digest differs between
the two lock.json files (or, without a lock, the trials' ``task_checksum``) is a different task,
and the comparison is refused naming it. A different stack digest is allowed but warned about:
the stack carries buzz-acp's production base prompt, which changes behaviour without changing
the condition hash, so it may be what the difference measures.

Per pair: the difference in pass rate (candidate − baseline) with its paired bootstrap interval
and the exact sign-flip p-value over the per-task differences, wins/losses/ties by task, the
cost differences, and the same per verifier dimension. Pure.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .condition_stats import BOX_HITS, ConditionStats, dimensions, task_counts
from .front import front_document
from .statistics import Resampling, TaskCounts, paired_interval, sign_flip_p_value, task_difference
from .table import ResultsTable

# 2: each comparison pairs the box rates (comparisons[].box, docs/resources.md#infra-noise);
# 3: each sweep's statistics carry pass^k (statistics.pass_hat_k, docs/statistics.md#the-estimands),
# and the document the cost-accuracy front (front, docs/statistics.md#the-cost-accuracy-front)
COMPARE_VERSION = 3
STACK_SHORT = 8


class CompareError(ValueError):
    """Two sweeps that cannot be paired, with the reason in words."""


@dataclass(frozen=True)
class Side:
    """One sweep as a side of a comparison."""

    sweep: str
    store: str
    condition: str
    manifest_sha256: str
    stack_digest: str
    task_digests: Mapping[str, str]
    stats: ConditionStats


def side(summary: ResultsTable, store: str, lock: Mapping[str, Any] | None = None) -> Side:
    """The sweep's one condition row, its task digests (lock.json, else the trials'
    ``task_checksum``) and its stack digest (lock.json, else the row's)."""
    if not summary.rows:
        raise CompareError(f"sweep {summary.sweep} has no committed trials to compare")
    if len(summary.rows) > 1:
        rows = ", ".join(
            f"{r.condition}@{r.manifest_sha256[:8]}/{r.stack_digest[:STACK_SHORT] or '-'}"
            for r in summary.rows
        )
        raise CompareError(
            f"sweep {summary.sweep} holds {len(summary.rows)} experiments ({rows}); "
            "compare needs one condition and one stack per sweep"
        )
    [row] = summary.rows
    lock = lock or {}
    digests = {str(k): str(v) for k, v in (lock.get("tasks") or {}).items() if v}
    for t in row.trials:
        if t.task_digest:
            digests.setdefault(t.task, t.task_digest)
    stack = lock.get("stack") if isinstance(lock.get("stack"), Mapping) else {}
    return Side(
        summary.sweep,
        store,
        row.condition,
        row.manifest_sha256,
        str((stack or {}).get("digest") or row.stack_digest),
        digests,
        ConditionStats.of(row.trials),
    )


def check_pairable(baseline: Side, candidate: Side) -> list[str]:
    """Refuse different task versions; the warnings a pairing carries."""
    shared = sorted(set(baseline.task_digests) & set(candidate.task_digests))
    changed = [t for t in shared if baseline.task_digests[t] != candidate.task_digests[t]]
    if changed:
        raise CompareError(
            f"sweeps {baseline.sweep} and {candidate.sweep} ran different versions of task(s) "
            f"{', '.join(changed)} (their task digests differ): a pair would compare different tasks"
        )
    warnings = []
    if baseline.stack_digest and candidate.stack_digest and baseline.stack_digest != candidate.stack_digest:
        warnings.append(
            f"WARNING: the stacks differ ({baseline.sweep} {baseline.stack_digest[:STACK_SHORT]}, "
            f"{candidate.sweep} {candidate.stack_digest[:STACK_SHORT]}): a different production base "
            "prompt (buzz-acp) changes behaviour without changing the condition, and may be what "
            "this difference measures"
        )
    elif not baseline.stack_digest or not candidate.stack_digest:
        warnings.append("NOTE: a sweep recorded no stack digest; whether both ran the same stack is unknown")
    if not baseline.task_digests or not candidate.task_digests:
        warnings.append("NOTE: a sweep recorded no task digests; tasks are paired by name only")
    return warnings


def _verdict(difference: float) -> str:
    return "win" if difference > 0 else "loss" if difference < 0 else "tie"


def paired_figures(
    baseline: Mapping[str, TaskCounts], candidate: Mapping[str, TaskCounts], resampling: Resampling
) -> dict[str, Any] | None:
    """Difference, interval, p-value and wins/losses/ties over the tasks both sides have."""
    tasks = sorted(set(baseline) & set(candidate))
    if not tasks:
        return None
    pairs = [(baseline[t], candidate[t]) for t in tasks]
    differences = [task_difference(a, b) for a, b in pairs]
    verdicts = [_verdict(float(d)) for d in differences]
    return {
        "tasks": len(tasks),
        "baseline": sum(a.rate for a, _ in pairs) / len(pairs),
        "candidate": sum(b.rate for _, b in pairs) / len(pairs),
        "difference": paired_interval(pairs, resampling=resampling).document(),
        "p_value": sign_flip_p_value(differences),
        "wins": verdicts.count("win"),
        "losses": verdicts.count("loss"),
        "ties": verdicts.count("tie"),
    }


def _minus(candidate: float | None, baseline: float | None) -> float | None:
    return None if candidate is None or baseline is None else candidate - baseline


def _costs(a: Mapping[str, Any], b: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for figure in ("per_trial", "per_solved_task"):
        out[figure] = {
            bound: {
                "baseline": a[figure][bound],
                "candidate": b[figure][bound],
                "difference": _minus(b[figure][bound], a[figure][bound]),
            }
            for bound in ("floor", "ceiling")
        }
    return out


def pair(
    baseline: Side,
    candidate: Side,
    resampling: Resampling = Resampling(),
    documents: Mapping[str, Mapping[str, Any]] | None = None,
) -> dict[str, Any]:
    """The comparison of ``candidate`` against ``baseline``; raises CompareError when refused.
    ``documents`` are the sides' statistics documents when already computed (by sweep name)."""
    warnings = check_pairable(baseline, candidate)
    a_counts, b_counts = task_counts(baseline.stats.scored), task_counts(candidate.stats.scored)
    overall = paired_figures(a_counts, b_counts, resampling)
    if overall is None:
        raise CompareError(f"sweeps {baseline.sweep} and {candidate.sweep} scored no task in common")
    per_task = []
    for task in sorted(set(a_counts) & set(b_counts)):
        a, b = a_counts[task], b_counts[task]
        d = float(task_difference(a, b))
        per_task.append(
            {
                "task": task,
                "baseline": {"n": a.n, "passed": a.passed},
                "candidate": {"n": b.n, "passed": b.passed},
                "difference": d,
                "verdict": _verdict(d),
            }
        )
    dims = []
    shared_dims = sorted(set(dimensions(baseline.stats.scored)) & set(dimensions(candidate.stats.scored)))
    for key in shared_dims:
        figures = paired_figures(
            task_counts(baseline.stats.scored, key), task_counts(candidate.stats.scored, key), resampling
        )
        if figures is not None:
            dims.append({"dimension": key, **figures})
    # worst first: the question is which collaboration behaviour got worse
    dims.sort(key=lambda d: (d["difference"]["estimate"], d["dimension"]))
    docs = documents or {}
    a_doc = docs.get(baseline.sweep) or baseline.stats.document(resampling)
    b_doc = docs.get(candidate.sweep) or candidate.stats.document(resampling)
    return {
        "baseline": baseline.sweep,
        "candidate": candidate.sweep,
        "warnings": warnings,
        "unpaired": {
            "baseline_only": sorted(set(a_counts) - set(b_counts)),
            "candidate_only": sorted(set(b_counts) - set(a_counts)),
        },
        "pass_rate": {**overall, "test": "exact sign-flip over per-task differences"},
        "per_task": per_task,
        "cost_usd": _costs(a_doc["cost_usd"], b_doc["cost_usd"]),
        "tokens_per_trial": {
            "baseline": a_doc["tokens_per_trial"],
            "candidate": b_doc["tokens_per_trial"],
            "difference": _minus(b_doc["tokens_per_trial"], a_doc["tokens_per_trial"]),
        },
        "dimensions": dims,
        "box": _box_difference(baseline, candidate, resampling),
    }


def _box_difference(baseline: Side, candidate: Side, resampling: Resampling) -> dict[str, Any]:
    """What two sweeps that differ in headroom differ in besides their score, each box rate
    paired task by task (docs/resources.md#infra-noise)."""
    return {name: paired_figures(baseline.stats.box_counts(hit), candidate.stats.box_counts(hit), resampling)
            for name, hit in BOX_HITS.items()}


def side_document(s: Side, statistics: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "sweep": s.sweep,
        "store": s.store,
        "condition": s.condition,
        "manifest_sha256": s.manifest_sha256,
        "hash": s.manifest_sha256[:8],
        "stack_digest": s.stack_digest,
        "stack": s.stack_digest[:STACK_SHORT],
        "statistics": dict(statistics),
    }


def comparison_document(sides: Sequence[Side], resampling: Resampling = Resampling()) -> dict[str, Any]:
    """``buzzctl compare -o json``: every sweep's statistics, and each later sweep against the
    first (the baseline). Raises CompareError when a pair is refused."""
    if len(sides) < 2:
        raise CompareError("compare needs at least two sweeps")
    names = [s.sweep for s in sides]
    if len(set(names)) != len(names):
        raise CompareError(f"a sweep is named twice: {', '.join(names)}")
    stats = {s.sweep: s.stats.document(resampling) for s in sides}
    sweeps = [side_document(s, stats[s.sweep]) for s in sides]
    return {
        "version": COMPARE_VERSION,
        "resampling": resampling.document(),
        "baseline": sides[0].sweep,
        "sweeps": sweeps,
        "comparisons": [pair(sides[0], s, resampling, stats) for s in sides[1:]],
        "front": front_document(sweeps),
    }
