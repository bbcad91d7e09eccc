from __future__ import annotations

import pytest
from buzz_operator.trial.backoff import retry_delay
from hypothesis import given
from hypothesis import strategies as st


def test_doubles_from_base_until_the_cap() -> None:
    assert [retry_delay(n, 10, 300) for n in range(1, 8)] == [10, 20, 40, 80, 160, 300, 300]


def test_zero_base_means_no_wait() -> None:
    assert retry_delay(5, 0, 300) == 0.0


def test_huge_retry_counts_stay_at_the_cap() -> None:
    assert retry_delay(10_000, 1, 60) == 60


@pytest.mark.parametrize(("retry", "base", "cap"), [(0, 10, 300), (1, -1, 300), (1, 10, -5)])
def test_bad_arguments_are_refused(retry: int, base: float, cap: float) -> None:
    with pytest.raises(ValueError):
        retry_delay(retry, base, cap)


@given(st.integers(1, 200), st.integers(0, 600), st.integers(0, 3600))
def test_delay_is_monotonic_and_bounded(retry: int, base: int, cap: int) -> None:
    delay = retry_delay(retry, base, cap)
    assert 0 <= delay <= cap
    assert retry_delay(retry + 1, base, cap) >= delay
