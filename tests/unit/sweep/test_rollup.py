"""Counts, mean reward over scored trials, pass@k and pass^k (checked against brute-force
enumeration), cost."""

from __future__ import annotations

from fractions import Fraction
from itertools import combinations
from math import comb

import pytest
from buzz_operator.scoring.passing import k_values, pass_at_k, pass_hat_k
from buzz_operator.sweep.rollup import rollup, tally
from buzz_operator.sweep.trial_view import TrialState, TrialView
from hypothesis import given
from hypothesis import strategies as st


def _trial(
    task: str,
    attempt: int,
    state: TrialState,
    reward: float | None = None,
    *,
    scored: bool | None = None,
    cost: tuple[float, float] = (0.0, 0.0),
) -> TrialView:
    return TrialView(
        name=f"{task}-{attempt}",
        sweep="s",
        task=task,
        attempt=attempt,
        state=state,
        reward=reward,
        scored=state is TrialState.SUCCEEDED if scored is None else scored,
        cost_floor=cost[0],
        cost_ceiling=cost[1],
    )


def test_pass_at_k_known_values() -> None:
    assert pass_at_k(2, 1, 1) == 0.5
    assert pass_at_k(2, 1, 2) == 1.0
    assert pass_at_k(5, 0, 3) == 0.0
    assert pass_at_k(4, 1, 2) == pytest.approx(0.5)  # 1 - C(3,2)/C(4,2) = 1 - 3/6
    assert pass_at_k(10, 3, 5) == pytest.approx(1 - 21 / 252)


@pytest.mark.parametrize("estimator", [pass_at_k, pass_hat_k])
@pytest.mark.parametrize(("n", "c", "k"), [(3, 4, 1), (3, -1, 1), (3, 1, 0), (3, 1, 4)])
def test_estimators_refuse_impossible_counts(estimator, n: int, c: int, k: int) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ValueError):
        estimator(n, c, k)


@given(st.lists(st.booleans(), min_size=1, max_size=9), st.data())
def test_estimators_equal_the_subset_averages(outcomes: list[bool], data: st.DataObject) -> None:
    # pass@k is the chance that a random k-subset of the n attempts holds a pass, pass^k that it
    # holds only passes; pass^k is never above pass@1 (a k-subset that all passes holds a pass)
    # nor pass@1 above pass@k
    n, c = len(outcomes), sum(outcomes)
    k = data.draw(st.integers(1, n))
    subsets = list(combinations(outcomes, k))
    assert pass_at_k(n, c, k) == pytest.approx(sum(1 for subset in subsets if any(subset)) / len(subsets))
    assert pass_hat_k(n, c, k) == pytest.approx(sum(1 for subset in subsets if all(subset)) / len(subsets))
    assert pass_hat_k(n, c, k) <= c / n + 1e-12 <= pass_at_k(n, c, k) + 2e-12


def test_pass_hat_k_known_values() -> None:
    assert pass_hat_k(2, 1, 1) == 0.5
    assert pass_hat_k(2, 1, 2) == 0.0  # one of two failed: no pair of both passes
    assert pass_hat_k(5, 5, 5) == 1.0
    assert pass_hat_k(4, 3, 2) == pytest.approx(0.5)  # C(3,2)/C(4,2) = 3/6
    assert pass_hat_k(10, 7, 5) == pytest.approx(21 / 252)


@pytest.mark.parametrize(("n", "k"), [(1, 1), (3, 2), (5, 3), (8, 8)])
@pytest.mark.parametrize("p", [Fraction(1, 3), Fraction(1, 2), Fraction(9, 10)])
def test_pass_hat_k_is_unbiased_for_p_to_the_k(n: int, k: int, p: Fraction) -> None:
    # Over c ~ Binomial(n, p), E[C(c,k)/C(n,k)] = p^k exactly: the reason to use it rather than
    # (c/n)^k, which is biased high (Jensen: x^k is convex) at few attempts.
    mean = sum(comb(n, c) * p**c * (1 - p) ** (n - c) * Fraction(comb(c, k), comb(n, k)) for c in range(n + 1))
    assert mean == p**k
    plug_in = sum(comb(n, c) * p**c * (1 - p) ** (n - c) * Fraction(c, n) ** k for c in range(n + 1))
    assert k == 1 or plug_in > p**k


def test_k_values_are_powers_of_two_and_attempts() -> None:
    assert k_values(1) == [1]
    assert k_values(2) == [1, 2]
    assert k_values(5) == [1, 2, 4, 5]
    assert k_values(8) == [1, 2, 4, 8]


def test_rollup_golden() -> None:
    trials = [
        _trial("a", 1, TrialState.SUCCEEDED, 1.0, cost=(0.1, 0.2)),
        _trial("a", 2, TrialState.SUCCEEDED, 0.0, cost=(0.1, 0.1)),
        _trial("b", 1, TrialState.FAILED, None, scored=True, cost=(0.3, 0.3)),  # outcome failure → 0
        _trial("b", 2, TrialState.BROKEN, 1.0, scored=False, cost=(0.2, 0.4)),  # excluded
        _trial("c", 1, TrialState.RUNNING),
        _trial("c", 2, TrialState.PENDING),
    ]
    result = rollup(trials, 2, planned=8)
    assert (result.pending, result.running, result.succeeded, result.failed, result.broken, result.total) == (
        3,
        1,
        2,
        1,
        1,
        8,
    )
    assert (result.not_created, result.active, result.scored) == (2, 2, 3)
    assert result.mean_reward == pytest.approx(1 / 3)
    # a: n=2, c=1; b: n=1, c=0 (the broken attempt does not count).
    assert result.pass_at_k == {"1": pytest.approx((0.5 + 0.0) / 2), "2": 1.0}
    assert (result.cost_floor, result.cost_ceiling) == (pytest.approx(0.7), pytest.approx(1.0))
    assert not result.finished


def test_infra_failures_are_counted_but_not_scored() -> None:
    result = rollup([_trial("a", 1, TrialState.FAILED, None, scored=False)], 1, planned=1)
    assert (result.failed, result.scored, result.mean_reward, result.pass_at_k) == (1, 0, None, {})
    assert result.finished


def test_partial_rewards_count_toward_the_mean_not_pass() -> None:
    result = rollup([_trial("a", 1, TrialState.SUCCEEDED, 0.75)], 1)
    assert (result.mean_reward, result.pass_at_k) == (0.75, {"1": 0.0})


def test_empty_sweep_is_not_finished() -> None:
    result = rollup([], 3, planned=0)
    assert (result.total, result.finished, result.mean_reward) == (0, False, None)


trial_lists = st.lists(
    st.builds(_trial, task=st.sampled_from(["a", "b", "c"]), attempt=st.integers(1, 4),
              state=st.sampled_from(list(TrialState)), reward=st.sampled_from([None, 0.0, 0.5, 1.0]),
              scored=st.booleans(), cost=st.tuples(st.floats(0, 5), st.floats(0, 5))),
    max_size=30)


@given(trial_lists, st.integers(0, 30))
def test_a_tally_read_once_or_in_parts_merged_gives_the_same_figures(trials: list[TrialView], cut: int) -> None:
    # the reconcile reads the sweep's trials once, as a stream; summary.json pools stacks by merging
    whole = rollup(iter(trials), 4, planned=20)
    left, right = tally(trials[:cut]), tally(trials[cut:])
    left.merge(right)
    merged = left.figures(4, planned=20)
    assert (merged.pending, merged.running, merged.succeeded, merged.failed, merged.broken, merged.total,
            merged.scored, merged.not_created) == (whole.pending, whole.running, whole.succeeded, whole.failed,
                                                   whole.broken, whole.total, whole.scored, whole.not_created)
    assert merged.pass_at_k == pytest.approx(whole.pass_at_k)
    assert (merged.mean_reward is None) == (whole.mean_reward is None)
    if whole.mean_reward is not None:
        assert merged.mean_reward == pytest.approx(whole.mean_reward)
    assert (merged.cost_floor, merged.cost_ceiling) == (pytest.approx(whole.cost_floor), pytest.approx(whole.cost_ceiling))
    # scored rewards as the list-based figures had them: passes are rewards of 1.0 or more
    scored = [t for t in trials if t.scored]
    assert whole.scored == len(scored)
    if scored:
        assert whole.mean_reward == pytest.approx(sum(t.reward or 0.0 for t in scored) / len(scored))
