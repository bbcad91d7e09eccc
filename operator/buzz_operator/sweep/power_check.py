"""Whether a sweep's tasks × attempts detect the difference of the comparison it is for
(spec.comparison, docs/statistics.md#planning): judged at admission, reported in status.power and
an Event, never a reason to refuse the sweep. Pure: the baseline's summary.json is read by
sweep/drive/power_check.py."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any

from buzz_operator.api.sweep import Comparison, PowerStatus
from buzz_operator.results.power import Design, PlanError, beta_rates, default_spread, power_of, tasks_needed
from buzz_operator.scoring.passing import PASS_THRESHOLD

# a baseline still running is read again this often: its rates move as its trials finish
REREAD_S = 300


def assumed_spread(comparison: Comparison) -> float:
    """spec.comparison.spread, else 0.25 or less near a pass rate of 0 or 1, as buzzctl plan."""
    if comparison.spread is not None:
        return comparison.spread
    return default_spread(comparison.pass_rate or 0.0)


def baseline_counts(summary: Mapping[str, Any]) -> dict[str, tuple[int, int]]:
    """Per task, (scored, passed) of a sweep's summary.json trials (docs/bundle.md#sweep-summary)."""
    counts: dict[str, list[int]] = {}
    for trial in summary.get("trials") or []:
        if not isinstance(trial, Mapping) or not trial.get("scored") or not isinstance(trial.get("task"), str):
            continue
        task = counts.setdefault(trial["task"], [0, 0])
        task[0] += 1
        reward = trial.get("reward")
        task[1] += isinstance(reward, int | float) and reward >= PASS_THRESHOLD
    return {name: (n, passed) for name, (n, passed) in counts.items()}


def due(previous: PowerStatus | None, tasks: int, attempts: int, now: datetime) -> bool:
    """Whether to judge again: never judged, the size changed, or a baseline still running was
    last read REREAD_S ago. (A changed spec.comparison clears status.power: see judge's caller.)"""
    if previous is None or (previous.tasks, previous.attempts) != (tasks, attempts) or previous.checked_at is None:
        return True
    return previous.baseline_finished is False and now - previous.checked_at >= timedelta(seconds=REREAD_S)


def judge(comparison: Comparison, tasks: int, attempts: int, now: datetime, *,
          baseline: Mapping[str, tuple[int, int]] | None = None, baseline_finished: bool | None = None) -> PowerStatus:
    """The verdict for ``tasks`` × ``attempts``: from the baseline's per-task counts (only the
    tasks this sweep runs too, when it names them) or the assumed pass rate."""
    design = Design(comparison.alpha, comparison.power, comparison.effect_spread)
    head = {"tasks": tasks, "attempts": attempts, "checked_at": now}
    if baseline is not None:
        if not baseline:
            return PowerStatus(**head, baseline_scored=0, baseline_finished=baseline_finished,
                               message=f"cannot judge yet: baseline {comparison.baseline} has no scored trial of the tasks this sweep runs")
        rates = tuple(passed / n for n, passed in baseline.values())
        count = len(baseline)
        source = (f"baseline {comparison.baseline}'s {count} task{'s' if count != 1 else ''} "
                  f"({sum(n for n, _ in baseline.values())} scored trials)")
        scored: int | None = sum(n for n, _ in baseline.values())
    else:
        rates = beta_rates(comparison.pass_rate or 0.0, assumed_spread(comparison))
        source = f"an assumed pass rate of {comparison.pass_rate}"
        scored = None
    try:
        need = tasks_needed(rates, comparison.difference, attempts, design)
        power = power_of(rates, comparison.difference, tasks, attempts, design) if tasks else 0.0
    except PlanError as error:
        return PowerStatus(**head, baseline_scored=scored, baseline_finished=baseline_finished,
                           message=f"cannot judge: {str(error).replace('--difference', 'spec.comparison.difference')}")
    enough = need.tasks is not None and tasks >= need.tasks
    needed = "out of reach" if need.tasks is None else f"{need.tasks} tasks are needed"
    message = (f"{tasks} task{'s' if tasks != 1 else ''} × {attempts} attempt{'s' if attempts != 1 else ''} "
               f"{'detect' if enough else 'do not detect'} a difference of "
               f"{comparison.difference:+g} at power {comparison.power} (α {comparison.alpha}): power ≈ {power:.2f}; "
               f"at {attempts} attempts {needed}; rates from {source}")
    return PowerStatus(**head, enough=enough, tasks_needed=need.tasks, power=round(power, 4), baseline_scored=scored,
                       baseline_finished=baseline_finished, message=message)
