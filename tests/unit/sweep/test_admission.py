"""Lazy admission: three concurrency layers, suspend and budget, and why the rest waits."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from buzz_operator.sweep.admission import AdmissionDecision, admit
from buzz_operator.sweep.planner import plan_trials
from buzz_operator.sweep.trial_view import TrialState, TrialView

HASH = "cd" * 32
PLANNED = plan_trials("demo", "uid", HASH, [f"task-{n}" for n in range(6)], 1)


def _active(
    count: int, *, sweep: str = "demo", endpoints: tuple[str, ...] = ("m1",), state=TrialState.RUNNING
):
    return [
        TrialView(
            name=f"{sweep}-{n}", sweep=sweep, task=f"x{n}", attempt=1, state=state, endpoints=endpoints
        )
        for n in range(count)
    ]


def _admit(active: Sequence[TrialView] = (), **overrides: Any) -> AdmissionDecision:
    arguments = {
        "parallelism": 4,
        "endpoint_caps": {},
        "operator_cap": None,
        "cost_so_far": 0.0,
        "max_cost": None,
        "suspended": False,
        "endpoints": ("m1",),
    }
    arguments.update(overrides)
    return admit(PLANNED, list(active), **arguments)


def test_parallelism_bounds_this_sweep() -> None:
    decision = _admit(_active(1))
    assert [t.name for t in decision.admit] == [t.name for t in PLANNED[:3]]
    assert decision.waiting_reason == "ParallelismLimit"
    assert (
        decision.waiting_message == "3 trials waiting: 4/4 of this sweep's trials active (spec.parallelism)"
    )


def test_everything_fits() -> None:
    decision = _admit(parallelism=10)
    assert len(decision.admit) == 6
    assert (decision.waiting_reason, decision.waiting_message) == (None, "")


def test_pending_trials_hold_slots_but_terminal_ones_do_not() -> None:
    busy = _active(2, state=TrialState.PENDING) + _active(5, sweep="demo", state=TrialState.SUCCEEDED)
    assert len(_admit(busy).admit) == 2


def test_other_sweeps_do_not_count_against_parallelism() -> None:
    assert len(_admit(_active(10, sweep="other")).admit) == 4


def test_endpoint_cap_is_shared_across_sweeps() -> None:
    decision = _admit(_active(2, sweep="other"), endpoint_caps={"m1": 3, "unused": 1})
    assert len(decision.admit) == 1
    assert decision.waiting_reason == "EndpointLimit"
    assert decision.waiting_message == "5 trials waiting: endpoint m1: 3/3 trials active"


def test_endpoint_caps_ignore_trials_on_other_endpoints() -> None:
    decision = _admit(_active(5, sweep="other", endpoints=("m2",)), endpoint_caps={"m1": 2})
    assert len(decision.admit) == 2


def test_operator_cap_counts_every_sweep() -> None:
    decision = _admit(_active(4, sweep="other", endpoints=()), operator_cap=5)
    assert len(decision.admit) == 1
    assert decision.waiting_reason == "OperatorLimit"
    assert decision.waiting_message == "5 trials waiting: 5/5 trials active across the operator"


def test_nothing_starts_while_suspended() -> None:
    decision = _admit(suspended=True, cost_so_far=100.0, max_cost=1.0)
    assert decision.admit == []
    assert (decision.waiting_reason, decision.waiting_message) == (
        "Suspended",
        "6 trials waiting: spec.suspend is true",
    )


def test_nothing_starts_once_the_budget_is_spent() -> None:
    decision = _admit(cost_so_far=10.0, max_cost=10.0)
    assert decision.admit == []
    assert decision.waiting_reason == "BudgetExhausted"
    assert (
        decision.waiting_message == "6 trials not started: spend $10.00 reached spec.budget.maxCostUSD $10.00"
    )
    assert len(_admit(cost_so_far=9.99, max_cost=10.0).admit) == 4


def test_nothing_planned_nothing_waits() -> None:
    decision = admit(
        [],
        [],
        parallelism=1,
        endpoint_caps={},
        operator_cap=None,
        cost_so_far=0,
        max_cost=None,
        suspended=True,
    )
    assert (decision.admit, decision.waiting_reason) == ([], None)


def test_admission_follows_plan_order() -> None:
    assert _admit(parallelism=2).admit == PLANNED[:2]


def test_the_waiting_count_is_every_missing_trial_when_only_the_first_are_named() -> None:
    # the planner names only the first spec.parallelism missing trials of a large sweep
    decision = admit(PLANNED[:4], list(_active(1)), parallelism=4, endpoint_caps={}, operator_cap=None,
                     cost_so_far=0, max_cost=None, suspended=False, waiting=99_996)
    assert decision.admit == PLANNED[:3]
    assert decision.waiting_message == "99993 trials waiting: 4/4 of this sweep's trials active (spec.parallelism)"
    suspended = admit(PLANNED[:4], [], parallelism=4, endpoint_caps={}, operator_cap=None, cost_so_far=0,
                      max_cost=None, suspended=True, waiting=99_996)
    assert suspended.waiting_message == "99996 trials waiting: spec.suspend is true"


def test_the_trials_behind_the_named_ones_wait_on_the_limit_the_admitted_ones_reach() -> None:
    # parallelism 1, the last trial just finished: the one named is admitted, and the other four
    # wait on parallelism at once, so the sweep's waiting does not clear for a tick and come back
    decision = admit(PLANNED[:1], [], parallelism=1, endpoint_caps={}, operator_cap=None, cost_so_far=0,
                     max_cost=None, suspended=False, waiting=5)
    assert decision.admit == PLANNED[:1]
    assert decision.waiting_reason == "ParallelismLimit"
    assert decision.waiting_message == "4 trials waiting: 1/1 of this sweep's trials active (spec.parallelism)"


def test_the_trials_behind_the_named_ones_wait_on_nothing_while_room_is_left() -> None:
    # the planner named fewer than fit (an endpoint cap or the operator's is not reached): the
    # next tick admits more, and nothing is said to be waiting
    decision = admit(PLANNED[:2], [], parallelism=4, endpoint_caps={}, operator_cap=None, cost_so_far=0,
                     max_cost=None, suspended=False, waiting=6)
    assert decision.admit == PLANNED[:2]
    assert (decision.waiting_reason, decision.waiting_message) == (None, "")


def test_operator_settings_from_the_environment_name_a_bad_variable() -> None:
    import pytest
    from buzz_operator.sweep.settings import OperatorSettings

    settings = OperatorSettings.from_env({"BUZZ_MAX_ACTIVE_TRIALS": "8", "BUZZ_ENDPOINT_CAPS": "a/b=2, c=1"})
    assert settings.operator_cap == 8 and dict(settings.endpoint_caps or {}) == {"a/b": 2, "c": 1}
    assert OperatorSettings.from_env({}) == OperatorSettings()
    for env, name in (({"BUZZ_MAX_ACTIVE_TRIALS": "0"}, "BUZZ_MAX_ACTIVE_TRIALS"),
                      ({"BUZZ_ENDPOINT_CAPS": "a/b"}, "BUZZ_ENDPOINT_CAPS"),
                      ({"BUZZ_ENDPOINT_CAPS": "a=x"}, "BUZZ_ENDPOINT_CAPS")):
        with pytest.raises(ValueError, match=name):
            OperatorSettings.from_env(env)
