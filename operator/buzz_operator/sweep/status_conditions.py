"""The sweep's status conditions (Kubernetes `status.conditions`, not an experiment's team
condition): one per aspect, each with a stable CamelCase reason (B7).

Accepted     the spec (and its condition manifest) passed admission checks
Running      some trials are between creation and a terminal phase
Suspended    spec.suspend holds new trials back
BudgetExhausted  spend reached spec.budget.maxCostUSD; no more trials start
Complete     every planned trial reached a terminal phase
Failed       the sweep cannot finish: invalid spec, or budget exhausted with nothing left running
Ready        written only by handlers.py when an error escapes the reconcile (False, the error
             classified by api/escapes.py) and set True by the next reconcile that succeeds;
             JanitorReady is the janitor's own

Failed trials do not fail the sweep: they are results, counted in status.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from buzz_operator.api.common import Condition
from buzz_operator.api.conditions import set_condition
from buzz_operator.sweep.admission import AdmissionDecision
from buzz_operator.sweep.rollup import SweepRollup

ACCEPTED = "Accepted"
RUNNING = "Running"
SUSPENDED = "Suspended"
BUDGET_EXHAUSTED = "BudgetExhausted"
COMPLETE = "Complete"
FAILED = "Failed"


def budget_exhausted(rollup: SweepRollup, max_cost: float | None) -> bool:
    return max_cost is not None and rollup.cost_ceiling >= max_cost


def sweep_conditions(
    previous: Sequence[Condition],
    *,
    rollup: SweepRollup,
    decision: AdmissionDecision,
    suspended: bool,
    max_cost: float | None,
    invalid: str | None,
    now: datetime,
    generation: int | None = None,
    invalid_reason: str = "InvalidSpec",
) -> list[Condition]:
    """The full condition list for the sweep's next status (transition times kept when unchanged)."""
    conditions = list(previous)

    def put(type_: str, status: bool, reason: str, message: str = "") -> None:
        nonlocal conditions
        conditions = set_condition(conditions, type_, status, reason, message, now=now, generation=generation)

    if invalid is not None:
        put(ACCEPTED, False, invalid_reason, invalid)
    else:
        put(ACCEPTED, True, "SpecValid")

    finished = rollup.finished
    if rollup.active > 0:
        put(RUNNING, True, "TrialsActive", f"{rollup.running} running, {rollup.pending} pending")
    elif finished:
        put(RUNNING, False, "AllTrialsFinished")
    else:
        put(RUNNING, False, decision.waiting_reason or "NoTrialsActive", decision.waiting_message)

    put(SUSPENDED, suspended, "SuspendRequested" if suspended else "NotSuspended")

    exhausted = budget_exhausted(rollup, max_cost)
    if exhausted:
        put(BUDGET_EXHAUSTED, True, "MaxCostReached", f"spend ${rollup.cost_ceiling:.2f} of ${max_cost:.2f}")
    else:
        put(BUDGET_EXHAUSTED, False, "WithinBudget")

    done = rollup.total - rollup.pending - rollup.running
    if finished:
        put(
            COMPLETE,
            True,
            "AllTrialsFinished",
            f"{rollup.succeeded} succeeded, {rollup.failed} failed, {rollup.broken} broken",
        )
    else:
        put(COMPLETE, False, "TrialsRemaining", f"{done} of {rollup.total} trials finished")

    if invalid is not None:
        put(FAILED, True, invalid_reason, invalid)
    elif exhausted and not finished and rollup.active == 0:
        put(FAILED, True, "BudgetExhausted", f"{rollup.pending} trials never started")
    else:
        put(FAILED, False, "NoFailure")
    return conditions
