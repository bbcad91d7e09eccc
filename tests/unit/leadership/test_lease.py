"""Who may lead, from a Lease (leadership/lease.py; docs/leadership.md)."""

from __future__ import annotations

from datetime import UTC, datetime

from buzz_operator.leadership.lease import (
    DURATION_S,
    RENEW_S,
    Holding,
    Watch,
    holding_of,
    may_take,
    released,
    taken,
)

T0 = datetime(2026, 12, 6, 0, 0, 0, 123456, tzinfo=UTC)


def held_by(holder: str | None, renewed: datetime = T0, transitions: int = 1) -> Holding:
    return Holding(holder, T0, renewed, DURATION_S, transitions)


def test_a_free_or_own_lease_may_be_taken_at_once() -> None:
    assert may_take(Watch(), "a", now=0.0)  # no Lease yet
    for holding in (held_by(None), held_by("a")):
        watch = Watch()
        watch.observe(holding, 100.0)
        assert may_take(watch, "a", now=100.0)


def test_anothers_lease_is_taken_only_after_it_stood_still_for_its_duration_by_the_candidates_clock() -> None:
    watch = Watch()
    watch.observe(held_by("b"), 100.0)
    assert not may_take(watch, "a", now=100.0 + DURATION_S - 0.1)
    # the leader renews: the record changes, and the wait starts again from when it was seen
    watch.observe(held_by("b", renewed=datetime(2026, 12, 6, 0, 0, 2, tzinfo=UTC)), 102.0)
    assert not may_take(watch, "a", now=100.0 + DURATION_S)
    assert may_take(watch, "a", now=102.0 + DURATION_S)
    # seeing the very same record again does not restart the wait
    watch.observe(held_by("b", renewed=datetime(2026, 12, 6, 0, 0, 2, tzinfo=UTC)), 105.0)
    assert watch.since == 102.0


def test_the_renew_times_another_machine_wrote_are_never_compared_with_this_clock() -> None:
    # a leader whose clock runs an hour behind still holds its Lease while it renews
    watch = Watch()
    watch.observe(held_by("b", renewed=datetime(2026, 12, 5, 23, 0, tzinfo=UTC)), 10.0)
    assert not may_take(watch, "a", now=10.0 + RENEW_S)


def test_taking_counts_a_transition_and_renewing_keeps_the_acquire_time() -> None:
    first = taken(None, "a", T0)
    assert first == {"holderIdentity": "a", "leaseDurationSeconds": DURATION_S,
                     "acquireTime": "2026-12-06T00:00:00.123456Z", "renewTime": "2026-12-06T00:00:00.123456Z",
                     "leaseTransitions": 1}
    later = datetime(2026, 12, 6, 0, 0, 4, tzinfo=UTC)
    mine = holding_of(first)
    assert mine is not None and mine.holder == "a" and mine.renewed == T0
    renewed = taken(mine, "a", later)
    assert renewed["acquireTime"] == first["acquireTime"] and renewed["renewTime"] == "2026-12-06T00:00:04.000000Z"
    assert renewed["leaseTransitions"] == 1
    assert taken(held_by("b", transitions=3), "a", later)["leaseTransitions"] == 4


def test_a_released_lease_has_no_holder_and_reads_as_free() -> None:
    spec = released(held_by("a", transitions=2), T0)
    assert spec["holderIdentity"] is None and spec["leaseTransitions"] == 2
    watch = Watch()
    watch.observe(holding_of(spec), 50.0)
    assert may_take(watch, "b", now=50.0)
    assert holding_of(None) is None
