"""The sweep's summary.json: the status figures plus one line per trial — what the status
cannot hold (its size must not grow with trials) but a reader of storage wants first — and the
finished trials' figures per (condition, hash, stack digest): two stacks under one condition
hash are two experiments (buzz-acp's base prompt is not in the hash), so they get a row each. Pure."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from datetime import datetime
from typing import Any

from buzz_operator.api.stack import pooled_stack
from buzz_operator.sweep.rollup import SweepRollup, Tally
from buzz_operator.sweep.trial_view import TrialView

SUMMARY_VERSION = 1
# A running sweep's summary.json is rewritten at most once per this many seconds per trial it
# has, up to SUMMARY_MAX_INTERVAL_S: a rewrite costs time in proportion to the trials (1.8 CPU-s
# and 29 MB at 100,000), so its share of the operator stays the same at any size — every tick up
# to 2,000 trials, every 50 s at 100,000. A finished sweep's is written at once.
SUMMARY_SECONDS_PER_TRIAL = 1 / 2000
SUMMARY_MAX_INTERVAL_S = 60.0
_DIGEST_MODULUS = 1 << 128


def summary_due(trials: int, finished: bool, since_last_s: float | None) -> bool:
    """Whether summary.json may be rewritten now (if its results changed); `since_last_s` is
    None when this operator has not written it yet."""
    if finished or since_last_s is None:
        return True
    return since_last_s >= min(SUMMARY_MAX_INTERVAL_S, trials * SUMMARY_SECONDS_PER_TRIAL)


def summary_document(*, trials: Sequence[TrialView], **head: Any) -> dict[str, Any]:
    """The whole document at once, from summary_head's keywords; summary_head and trial_line are
    its parts, for a writer that streams the trials (drive/documents.write_summary)."""
    return {**summary_head(trials=trials, **head), "trials": [trial_line(t) for t in sorted(trials, key=lambda t: t.name)]}


def summary_head(
    *,
    sweep: str,
    namespace: str,
    condition: str,
    condition_hash: str,
    rollup: SweepRollup,
    trials: Iterable[TrialView],
    attempts: int,
    now: datetime,
) -> dict[str, Any]:
    """Everything but the per-trial lines: a size that does not grow with trials."""
    return {
        "version": SUMMARY_VERSION,
        "sweep": sweep,
        "namespace": namespace,
        "condition": condition,
        "conditionHash": condition_hash,
        "updatedAt": now.isoformat().replace("+00:00", "Z"),
        "finished": rollup.finished,
        "counts": {
            "total": rollup.total, "pending": rollup.pending, "running": rollup.running,
            "succeeded": rollup.succeeded, "failed": rollup.failed, "broken": rollup.broken,
            "scored": rollup.scored,
        },
        "meanReward": rollup.mean_reward,
        "passAtK": dict(rollup.pass_at_k),
        "costUSD": {"floor": rollup.cost_floor, "ceiling": rollup.cost_ceiling},
        "rows": stack_rows(condition, condition_hash, trials, attempts),
    }


def trial_line(t: TrialView) -> dict[str, Any]:
    """One trial's entry of summary.json's `trials` (sorted by name there)."""
    return {
        "name": t.name, "task": t.task, "attempt": t.attempt, "state": t.state.value,
        "outcome": t.outcome, "reason": t.reason, "reward": t.reward, "scored": t.scored,
        "costUSD": {"floor": t.cost_floor, "ceiling": t.cost_ceiling}, "stackDigest": t.stack_digest,
    }


_TRIALS_SLOT = '"trials": []'


def summary_text(head: Mapping[str, Any], trials: Iterable[TrialView]) -> Iterator[str]:
    """summary.json as `json.dumps({**head, "trials": [...]}, indent=2, sort_keys=True)` writes it,
    a trial at a time, so a writer holds one trial's line and never the whole document: at
    100,000 trials the document of dicts and its text were a 104 MB transient
    (docs/performance.md#memory). `trials` must come sorted by name."""
    text = json.dumps({**head, "trials": []}, indent=2, sort_keys=True, ensure_ascii=False)
    before, _, after = text.partition(_TRIALS_SLOT)  # the head holds no other empty "trials" list
    yield before + '"trials": ['
    first = True
    for trial in trials:
        line = json.dumps(trial_line(trial), indent=2, sort_keys=True, ensure_ascii=False)
        yield ("\n" if first else ",\n") + "\n".join("    " + part for part in line.split("\n"))
        first = False
    yield ("]" if first else "\n  ]") + after + "\n"


def stack_rows(condition: str, condition_hash: str, trials: Iterable[TrialView], attempts: int) -> list[dict[str, Any]]:
    """The finished trials' figures keyed by (condition, conditionHash, stackDigest), one row per
    stack they ran; stackDigest null for trials whose stack is not known. Read in one pass, a
    tally per stack (those without one pooled at the end, api/stack.py `pooled_stack`)."""
    by_digest: dict[str | None, Tally] = {}
    for trial in trials:
        if not trial.active:
            digest = trial.stack_digest or None
            (by_digest.get(digest) or by_digest.setdefault(digest, Tally())).add(trial)
    known = {digest for digest in by_digest if digest}
    groups: dict[str | None, Tally] = {}
    for digest, counted in by_digest.items():
        pooled = pooled_stack(digest, known)
        if pooled in groups:
            groups[pooled].merge(counted)
        else:
            groups[pooled] = counted
    rows = []
    for digest, counted in sorted(groups.items(), key=lambda item: item[0] or ""):
        figures = counted.figures(attempts)
        rows.append({
            "condition": condition, "conditionHash": condition_hash, "stackDigest": digest,
            "trials": counted.created, "scored": figures.scored, "meanReward": figures.mean_reward,
            "passAtK": dict(figures.pass_at_k), "costUSD": {"floor": figures.cost_floor, "ceiling": figures.cost_ceiling},
        })
    return rows


def results_digest(trials: Iterable[TrialView]) -> str | None:
    """What summary.json says about finished trials, as a short digest; None while none has
    finished. summary.json is rewritten when it changes — a trial finished, was re-run or
    regraded — and only then: rewriting an unchanged file every tick would cost hours of I/O,
    and a failed write is retried because the recorded digest only moves with a write that landed.

    A sum of each finished trial's own hash, so it is read in one pass in any order and holds
    nothing: sorting and encoding every trial at once was a 38 MB transient at 100,000 trials on
    each tick it ran, and what a tick frees the allocator keeps (docs/performance.md#memory).
    Kubernetes names hold no \x1f, so the joined fields of two different trials never agree."""
    total = count = 0
    for t in trials:
        if t.active:
            continue
        fields = (t.name, t.state.value, t.outcome, t.reward, t.cost_floor, t.cost_ceiling, t.stack_digest or "")
        row = hashlib.sha256("\x1f".join(map(str, fields)).encode()).digest()
        total = (total + int.from_bytes(row[:16], "big")) % _DIGEST_MODULUS
        count += 1
    if not count:
        return None
    return hashlib.sha256(f"{count}:{total}".encode()).hexdigest()[:16]
