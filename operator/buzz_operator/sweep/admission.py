"""Which planned trials may start now: lazy creation under three concurrency layers.

Trials are created only as capacity frees (Kueue-style admission, docs/design.md#admission)
rather than thousands up front, under (a) the sweep's spec.parallelism, (b) a cap per model
endpoint shared by every sweep that uses it (Harbor's concurrency_group), (c) an
operator-wide cap (docs/design.md#admission). Nothing starts while the sweep is suspended or once its
spend has reached spec.budget.maxCostUSD. Whenever something waits, the decision says why and
how many, so `kubectl describe` answers "why is my sweep not moving" (Kueue #2833).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from itertools import islice

from buzz_operator.sweep.planner import PlannedTrial
from buzz_operator.sweep.trial_view import TrialView

SUSPENDED = "Suspended"
BUDGET_EXHAUSTED = "BudgetExhausted"
PARALLELISM_LIMIT = "ParallelismLimit"
ENDPOINT_LIMIT = "EndpointLimit"
OPERATOR_LIMIT = "OperatorLimit"


@dataclass(frozen=True)
class AdmissionDecision:
    admit: list[PlannedTrial] = field(default_factory=list)
    waiting_reason: str | None = None
    waiting_message: str = ""


def _plural(count: int) -> str:
    return f"{count} trial{'s' if count != 1 else ''}"


def admit(
    planned: Sequence[PlannedTrial],
    active: Sequence[TrialView],
    *,
    parallelism: int,
    endpoint_caps: Mapping[str, int],
    operator_cap: int | None,
    cost_so_far: float,
    max_cost: float | None,
    suspended: bool,
    endpoints: Sequence[str] = (),
    namespace: str = "",
    waiting: int | None = None,
) -> AdmissionDecision:
    """Pick the trials to create now from ``planned``.

    ``planned``: this sweep's trials that have no BuzzTrial yet, in plan order.
    ``active``: every non-terminal BuzzTrial the operator knows, across sweeps.
    ``endpoints``: the model endpoints this sweep's roster uses.
    ``cost_so_far``: the sweep's spend ceiling, so the cap is never overshot by unpriced usage.
    ``waiting``: how many trials have no BuzzTrial yet when ``planned`` is only the first of them
    (planner.plan_missing); len(planned) when not given.
    """
    if parallelism < 1:
        raise ValueError(f"parallelism must be >= 1, not {parallelism}")
    if not planned:
        return AdmissionDecision()
    waiting = len(planned) if waiting is None else waiting
    held = _sweep_hold(waiting, suspended=suspended, cost_so_far=cost_so_far, max_cost=max_cost)
    if held is not None:
        return held
    seats = _seats_taken(planned[0].sweep, namespace, active, parallelism, endpoint_caps, endpoints, operator_cap)
    count, limit = _seats_free(seats, len(planned))
    admitted = list(islice(planned, count))
    left = waiting - count
    # `planned` may be only the first few of those waiting: the ones left behind it wait on the
    # same limit, which must be named now, or the sweep's waiting flips off and on again with
    # every trial admitted (an Event and a status write each time)
    if limit is None and left > 0:
        limit = _seat_limit(seats, count)
    if limit is not None:
        reason, detail = limit
        return AdmissionDecision(admitted, reason, f"{_plural(left)} waiting: {detail}")
    return AdmissionDecision(admitted)


def _sweep_hold(
    waiting: int, *, suspended: bool, cost_so_far: float, max_cost: float | None
) -> AdmissionDecision | None:
    """Nothing starts while the sweep itself says stop, whatever seats are free."""
    if suspended:
        return AdmissionDecision([], SUSPENDED, f"{_plural(waiting)} waiting: spec.suspend is true")
    if max_cost is not None and cost_so_far >= max_cost:
        return AdmissionDecision(
            [],
            BUDGET_EXHAUSTED,
            f"{_plural(waiting)} not started: spend ${cost_so_far:.2f} reached spec.budget.maxCostUSD "
            f"${max_cost:.2f}",
        )
    return None


@dataclass(frozen=True)
class _Seats:
    """Trials already active under each concurrency layer, beside that layer's cap."""

    own: int
    parallelism: int
    # only the capped endpoints this sweep's roster uses: name -> (active trials, cap)
    endpoints: Mapping[str, tuple[int, int]]
    total: int
    operator_cap: int | None


def _seats_taken(
    sweep: str,
    namespace: str,
    active: Sequence[TrialView],
    parallelism: int,
    endpoint_caps: Mapping[str, int],
    endpoints: Sequence[str],
    operator_cap: int | None,
) -> _Seats:
    live = [summary for summary in active if summary.active]
    capped = {name: cap for name, cap in endpoint_caps.items() if name in set(endpoints)}
    return _Seats(
        own=sum(1 for summary in live if summary.sweep == sweep and summary.namespace == namespace),
        parallelism=parallelism,
        endpoints={name: (sum(1 for s in live if name in s.endpoints), cap) for name, cap in capped.items()},
        total=len(live),
        operator_cap=operator_cap,
    )


def _seat_limit(seats: _Seats, extra: int) -> tuple[str, str] | None:
    """The first layer full once ``extra`` more trials start, as (reason, detail); None while all have room."""
    if seats.own + extra >= seats.parallelism:
        return (
            PARALLELISM_LIMIT,
            f"{seats.own + extra}/{seats.parallelism} of this sweep's trials active (spec.parallelism)",
        )
    for name, (taken, cap) in sorted(seats.endpoints.items()):
        if taken + extra >= cap:
            return ENDPOINT_LIMIT, f"endpoint {name}: {taken + extra}/{cap} trials active"
    if seats.operator_cap is not None and seats.total + extra >= seats.operator_cap:
        return OPERATOR_LIMIT, f"{seats.total + extra}/{seats.operator_cap} trials active across the operator"
    return None


def _seats_free(seats: _Seats, wanted: int) -> tuple[int, tuple[str, str] | None]:
    """How many of ``wanted`` trials fit, and the limit that stopped the next one (None if all fit)."""
    for extra in range(wanted):
        if (limit := _seat_limit(seats, extra)) is not None:
            return extra, limit
    return wanted, None
