from __future__ import annotations

import uuid

import pytest
from buzz_operator.api.naming import is_dns_label
from buzz_operator.api.trial_names import TRIAL_NAME_MAX, pod_name, relay_trial_id, tenant_secret_name
from hypothesis import given
from hypothesis import strategies as st


def test_first_try_uses_the_trial_name() -> None:
    assert pod_name("demo-0123456789", 0) == "demo-0123456789"
    assert pod_name("demo-0123456789", 2) == "demo-0123456789-r2"
    assert tenant_secret_name("demo-0123456789", 0) == "demo-0123456789-seats"
    assert tenant_secret_name("demo-0123456789", 1) == "demo-0123456789-r1-seats"


def test_relay_trial_id_is_a_stable_uuid5_per_try() -> None:
    first = relay_trial_id("uid-1", "demo-0123456789", 0)
    assert first == relay_trial_id("uid-1", "demo-0123456789", 0)
    assert uuid.UUID(first).version == 5
    assert (
        len(
            {
                first,
                relay_trial_id("uid-1", "demo-0123456789", 1),
                relay_trial_id("uid-2", "demo-0123456789", 0),
            }
        )
        == 3
    )


@pytest.mark.parametrize("retry", [-1, 1000])
def test_retry_index_is_bounded(retry: int) -> None:
    with pytest.raises(ValueError, match="retry"):
        pod_name("t", retry)


def test_empty_sweep_uid_is_refused() -> None:
    with pytest.raises(ValueError, match="sweep_uid"):
        relay_trial_id("", "t", 0)


@given(st.integers(0, 999))
def test_pod_names_of_the_longest_trial_names_stay_dns_labels(retry: int) -> None:
    assert is_dns_label(pod_name("a" * TRIAL_NAME_MAX, retry))
