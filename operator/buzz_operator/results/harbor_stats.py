"""Harbor ``JobStats`` of a sweep's committed trials, computed as a given Harbor release computes
them (docs/harbor.md#job-statistics), and the project's own figures beside them under names of
their own.

Harbor builds a finished job's stats in ``JobPlan.aggregate_stats``: ``JobStats.increment`` per
trial, then per eval (``<agent>__<model>__<source>``) its default ``Mean`` metric over the trials'
rewards — a trial without rewards counts 0, and with more than one reward key the mean is taken
per key — and ``compute_pass_at_k_by_evals``, which is defined only when every trial counted has
a single 0/1 reward and uses k = 2, 4, 8, … and 5, 10, 15, … up to the fewest trials of any task.
The releases differ in which trials they count:

- 0.25 counts every committed trial (a trial without rewards as 0), and files a trial's error
  under its ``exception_info`` alone;
- 0.26 counts only trials whose ``reward_valid`` holds (ledger/harbor_policy.py: rewards written
  and no exception whose policy voids them), and files every recorded exception.

So one export's stats are one release's (``buzzctl sweep export --harbor``). The project's pass@k
(k from 1, on ``reward`` ≥ 1 of scored trials) and mean ``reward`` go under ``buzz_*`` keys, which
Harbor's models ignore. Pure; trial order is kept, so float sums add up as Harbor's.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from buzz_operator.ledger.harbor_errors import recorded_reason
from buzz_operator.ledger.harbor_policy import recorded_exceptions, reward_valid
from buzz_operator.scoring.passing import PASS_THRESHOLD, k_values, pass_at_k

from .trial import number

Rewards = Mapping[str, Any]
CANCELLED = "CancelledError"
TOTALS = ("n_input_tokens", "n_cache_tokens", "n_output_tokens", "cost_usd")
HarborRelease = Literal["0.25", "0.26"]
# Oldest first; an export is made for the newest unless asked otherwise.
HARBOR_RELEASES: tuple[HarborRelease, ...] = ("0.25", "0.26")
NEWEST: HarborRelease = HARBOR_RELEASES[-1]


def eval_key(result: Mapping[str, Any]) -> str:
    """``JobStats.format_agent_evals_key``: agent, model when known, source or ``adhoc``."""
    info = result.get("agent_info") or {}
    model = (info.get("model_info") or {}).get("name")
    dataset = result.get("source") or "adhoc"
    agent = info.get("name") or "unknown"
    return f"{agent}__{model}__{dataset}" if model else f"{agent}__{dataset}"


def reward_key(value: float | int) -> str:
    # JSON object keys are strings; Harbor's pydantic dump writes float keys as e.g. "1.0"
    return repr(float(value)) if isinstance(value, float) else str(value)


def _rewards(result: Mapping[str, Any]) -> Rewards | None:
    verifier = result.get("verifier_result")
    rewards = verifier.get("rewards") if isinstance(verifier, Mapping) else None
    return rewards if isinstance(rewards, Mapping) else None


def harbor_mean(rewards: Sequence[Rewards | None]) -> dict[str, float]:
    """Harbor's ``Mean`` metric (``aggregate_reward_dicts``), step for step."""
    keys = sorted({key for reward in rewards if reward is not None for key in reward})
    if len(keys) <= 1:
        values = [0 if reward is None else next(iter(reward.values()), 0) for reward in rewards]
        return {"mean": sum(values) / len(values)}
    return {key: sum([0 if r is None else r.get(key, 0) for r in rewards]) / len(rewards) for key in keys}


def _harbor_k_values(most: int) -> list[int]:
    found: set[int] = set()
    k = 2
    while k <= most:
        found.add(k)
        k *= 2
    k = 5
    while k <= most:
        found.add(k)
        k += 5
    return sorted(found)


def _harbor_pass_at_k_for_task(n: int, c: int, k: int) -> float:
    if n - c < k:
        return 1.0
    product = 1.0
    for i in range(k):
        product *= (n - c - i) / (n - i)
    return 1.0 - product


def counted(result: Mapping[str, Any], release: HarborRelease) -> bool:
    """Whether the release counts the trial's rewards in its metrics and pass@k."""
    return release == "0.25" or reward_valid(result)


def error_types(result: Mapping[str, Any], release: HarborRelease) -> list[str]:
    """The exception names the release files the trial under: 0.25 its ``exception_info``'s, 0.26
    every recorded exception's (sorted, each once)."""
    if release == "0.25":
        exception = result.get("exception_info")
        return [str(exception.get("exception_type"))] if isinstance(exception, Mapping) else []
    return sorted({str(e.get("exception_type")) for e in recorded_exceptions(result)})


def harbor_pass_at_k(results: Sequence[Mapping[str, Any]], release: HarborRelease = NEWEST) -> dict[str, float]:
    """Harbor's ``_compute_pass_at_k_for_trials`` of one eval; {} where Harbor defines none."""
    successes: dict[str, list[int]] = defaultdict(list)
    for result in results:
        if not counted(result, release):
            continue
        rewards = _rewards(result)
        if rewards is None:
            successes[str(result.get("task_name"))].append(0)
            continue
        if len(rewards) != 1:
            return {}
        value = next(iter(rewards.values()))
        if not isinstance(value, int | float) or value not in (0, 1):
            return {}
        successes[str(result.get("task_name"))].append(int(value))
    if not successes:
        return {}
    fewest = min(len(s) for s in successes.values())
    return {
        str(k): sum(_harbor_pass_at_k_for_task(len(s), sum(s), k) for s in successes.values()) / len(successes)
        for k in _harbor_k_values(fewest)
    }


def _buzz_figures(results: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The project's own pass@k and mean ``reward`` (sweep.rollup's definitions) over the
    eval's trials with rewards; a missing ``reward`` counts 0."""
    by_task: dict[str, list[float]] = defaultdict(list)
    for result in results:
        if (rewards := _rewards(result)) is not None:
            reward = number(rewards.get("reward"))
            by_task[str(result.get("task_name"))].append(reward if reward is not None else 0.0)
    scores = [r for values in by_task.values() for r in values]
    most = max((len(v) for v in by_task.values()), default=0)
    passes: dict[str, float] = {}
    for k in k_values(most) if most else []:
        estimates = [pass_at_k(len(v), sum(1 for r in v if r >= PASS_THRESHOLD), k) for v in by_task.values()
                     if len(v) >= k]  # fmt: skip
        if estimates:
            passes[str(k)] = sum(estimates) / len(estimates)
    return {"buzz_mean_reward": sum(scores) / len(scores) if scores else None, "buzz_pass_at_k": passes}


def _eval_stats(results: Sequence[Mapping[str, Any]], release: HarborRelease) -> dict[str, Any]:
    stats: dict[str, Any] = {"n_trials": 0, "n_errors": 0, "metrics": [], "pass_at_k": {}, "reward_stats": {},
                             "exception_stats": {}}  # fmt: skip
    reasons: dict[str, list[str]] = {}
    for result in results:
        name = str(result.get("trial_name"))
        if (rewards := _rewards(result)) is not None and counted(result, release):
            stats["n_trials"] += 1
            for key, value in rewards.items():
                stats["reward_stats"].setdefault(key, {}).setdefault(reward_key(value), []).append(name)
        if types := error_types(result, release):
            for exception_type in types:
                stats["exception_stats"].setdefault(exception_type, []).append(name)
            stats["n_errors"] += 1
        if exception := result.get("exception_info"):
            reasons.setdefault(recorded_reason(exception) or "", []).append(name)
    rewards_counted = [_rewards(r) for r in results if counted(r, release)]
    # 0.26 computes an eval's metrics only from the trials it counts: none counted, no metric
    stats["metrics"] = [harbor_mean(rewards_counted)] if rewards_counted else []
    stats["pass_at_k"] = harbor_pass_at_k(results, release)
    return {**stats, **_buzz_figures(results), "buzz_exception_stats": reasons}


def job_stats(
    results: Sequence[Mapping[str, Any]], *, n_total_trials: int, n_running_trials: int = 0, n_retries: int = 0,
    release: HarborRelease = NEWEST,
) -> dict[str, Any]:
    """Harbor ``JobStats`` of the committed trial results, in the order given, as ``release`` computes them."""
    by_eval: dict[str, list[Mapping[str, Any]]] = {}
    totals: dict[str, float | int | None] = dict.fromkeys(TOTALS)
    errored = cancelled = 0
    for result in results:
        by_eval.setdefault(eval_key(result), []).append(result)
        if types := error_types(result, release):
            errored += 1
            cancelled += CANCELLED in types
        agent = result.get("agent_result") or {}
        for field in TOTALS:  # TrialResult.compute_token_cost_totals: summed where reported
            value = number(agent.get(field))
            if value is not None:
                totals[field] = (totals[field] or 0) + (value if field == "cost_usd" else int(value))
    return {
        "n_completed_trials": len(results),
        "n_errored_trials": errored,
        "n_running_trials": n_running_trials,
        "n_pending_trials": max(n_total_trials - len(results) - n_running_trials, 0),
        "n_cancelled_trials": cancelled,
        "n_retries": n_retries,
        "evals": {key: _eval_stats(group, release) for key, group in by_eval.items()},
        **totals,
    }
