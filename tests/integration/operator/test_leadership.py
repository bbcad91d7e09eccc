"""Leader election over a real Lease (leadership/drive/elector.py; docs/leadership.md): of two
candidates one leads; the other takes over only once the leader stopped renewing for the lease's
duration, or at once when it released the Lease; a leader that finds the Lease taken gives up
leading; and a candidate whose write races another's loses on the API server's conflict."""

from __future__ import annotations

import asyncio
import contextlib
import time

from buzz_operator.kube import leases
from buzz_operator.kube.client import Kube
from buzz_operator.leadership.drive.elector import Elector, Try

NAME = "buzz-operator"


def _pair(kube: Kube, namespace: str) -> tuple[Elector, Elector]:
    # short timings keep the test brief; the proportions are the operator's (renew < duration)
    return (Elector(kube, namespace, NAME, "a", duration_s=3, renew_s=1, retry_s=0.2),
            Elector(kube, namespace, NAME, "b", duration_s=3, renew_s=1, retry_s=0.2))


async def _holder(kube: Kube, namespace: str) -> str | None:
    lease = await leases.read_lease(kube, namespace, NAME, timeout_s=5)
    return ((lease or {}).get("spec") or {}).get("holderIdentity")


async def test_one_leads_and_the_other_waits_for_the_lease_to_stand_still(kube: Kube, namespace: str) -> None:
    a, b = _pair(kube, namespace)
    await a.acquire()  # creates the Lease
    assert await _holder(kube, namespace) == "a"
    assert await b.try_take() is Try.HELD
    lost: list[str] = []
    holding = asyncio.create_task(a.hold(lost.append))
    # while a renews, b never leads
    started = time.monotonic()
    while time.monotonic() - started < 5:
        assert await b.try_take() is Try.HELD
        await asyncio.sleep(0.5)
    holding.cancel()  # a dies without a word (SIGKILL): the Lease stops changing
    with contextlib.suppress(asyncio.CancelledError):
        await holding
    # b's own clock decides: held until the Lease stood still for its duration since b saw it change
    ticks = [0.0]
    b.clock = lambda: ticks[0]
    b.watch.since, b.watch.seen = 0.0, None
    assert await b.try_take() is Try.HELD  # b sees the record (it changed, for b, at tick 0)
    ticks[0] = b.duration_s - 0.1
    assert await b.try_take() is Try.HELD
    ticks[0] = b.duration_s
    assert await b.try_take() is Try.TAKEN
    assert await _holder(kube, namespace) == "b"
    lease = await leases.read_lease(kube, namespace, NAME, timeout_s=5)
    assert lease is not None and lease["spec"]["leaseTransitions"] == 2
    # a, back from the dead, finds the Lease taken: it stands by, and a holder that finds it so stops leading
    assert await a.try_take() is Try.HELD
    a.renewed_at = time.monotonic()
    await a.hold(lost.append)
    assert lost and "another replica" in lost[0]


async def test_a_released_lease_is_taken_at_once(kube: Kube, namespace: str) -> None:
    a, b = _pair(kube, namespace)
    await a.acquire()
    assert await b.try_take() is Try.HELD
    await a.release()
    assert await _holder(kube, namespace) is None
    # no duration to wait out: b takes it on its very next read, its clock unmoved
    ticks = [0.0]
    b.clock = lambda: ticks[0]
    assert await b.try_take() is Try.TAKEN
    assert await _holder(kube, namespace) == "b"


async def test_a_write_over_a_stale_version_loses(kube: Kube, namespace: str) -> None:
    a, _ = _pair(kube, namespace)
    await a.acquire()
    stale = await leases.read_lease(kube, namespace, NAME, timeout_s=5)
    assert stale is not None
    assert await a.try_take() is Try.TAKEN  # a renews: the version moves on
    # b writes over what it read before the renewal: the API server refuses it
    assert not await leases.patch_lease(kube, stale, {"holderIdentity": "b"}, timeout_s=5)
    assert await _holder(kube, namespace) == "a"
