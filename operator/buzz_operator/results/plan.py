"""The document `buzzctl plan` prints (docs/statistics.md#planning): what a paired comparison of
two conditions on the same tasks needs, from assumed or pilot pass rates. Pure; the figures come
from results/power.py."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .power import ATTEMPTS_SHOWN, Design, PlanError, detectable, power_of, tasks_needed

PLAN_VERSION = 1


@dataclass(frozen=True)
class Rates:
    """The baseline's per-task pass rates and where they came from."""

    rates: tuple[float, ...]
    source: str  # "assumed" or "pilot"
    sweep: str | None = None  # the pilot sweep
    suite_tasks: int | None = None  # the pilot's task count: more tasks than that need a bigger suite

    def document(self) -> dict[str, Any]:
        mean = sum(self.rates) / len(self.rates)
        spread = (sum((p - mean) ** 2 for p in self.rates) / len(self.rates)) ** 0.5
        return {"source": self.source, "sweep": self.sweep, "tasks": self.suite_tasks,
                "mean": round(mean, 6), "spread": round(spread, 6)}


def plan_document(rates: Rates, design: Design, *, difference: float | None, tasks: int | None,
                  attempts: int | None) -> dict[str, Any]:
    """With ``difference``: the tasks needed at each attempts count (``attempts``, else 1, 2, 3, 5,
    10). With ``tasks`` and ``attempts``: that size's power for the difference and the smallest
    differences it detects either way."""
    if difference is None and (tasks is None or attempts is None):
        raise PlanError("--difference is needed unless both --tasks and --attempts give a size to judge")
    needs = []
    if difference is not None:
        for n in [attempts] if attempts is not None else list(ATTEMPTS_SHOWN):
            need = tasks_needed(rates.rates, difference, n, design)
            needs.append({
                "attempts": n, "tasks": need.tasks,
                "trials_per_condition": None if need.tasks is None else need.tasks * n,
                "power": None if need.power is None else round(need.power, 4),
                "task_sd": round(need.sd, 6), "untied": round(need.untied, 6),
                "beyond_suite": bool(rates.suite_tasks and need.tasks and need.tasks > rates.suite_tasks),
            })
    size = None
    if tasks is not None and attempts is not None:
        size = {
            "tasks": tasks, "attempts": attempts,
            "power": None if difference is None else round(power_of(rates.rates, difference, tasks, attempts, design), 4),
            "detectable": {
                "better": _rounded(detectable(rates.rates, tasks, attempts, design, 1)),
                "worse": _rounded(detectable(rates.rates, tasks, attempts, design, -1)),
            },
        }
    return {
        "version": PLAN_VERSION,
        "method": "paired by task, exact sign-flip test (normal approximation), two-sided",
        "design": {"alpha": design.alpha, "power": design.power, "effect_spread": design.effect_spread,
                   "fewest_untied_tasks": design.fewest_untied},
        "rates": rates.document(),
        "difference": difference,
        "needs": needs,
        "size": size,
    }


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 4)
