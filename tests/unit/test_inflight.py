"""The operator's cleanup closes the API client only after the handler runs in flight end
(kube/inflight.py): kopf leaves a timer in mid-run orphaned at shutdown, and a client closed
under it broke a sweep reconcile half way ("Connector is closed")."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any

import pytest
from buzz_operator import handlers
from buzz_operator.kube.client import Kube
from buzz_operator.kube.inflight import InFlight


class RecordingKube(Kube):
    def __init__(self, closed: list[str]) -> None:
        super().__init__(api=None, ws=None)  # type: ignore[arg-type]
        self.closed = closed

    async def close(self) -> None:
        self.closed.append("kube")


async def test_idle_is_drained_at_once() -> None:
    assert await InFlight().drained(0.0)


async def test_drained_waits_for_every_run_to_end() -> None:
    inflight = InFlight()
    first, second = asyncio.Event(), asyncio.Event()

    async def run(gate: asyncio.Event) -> None:
        async with inflight.hold():
            await gate.wait()

    tasks = [asyncio.create_task(run(first)), asyncio.create_task(run(second))]
    await asyncio.sleep(0)
    assert inflight.count == 2
    assert not await inflight.drained(0.01)
    first.set()
    await asyncio.sleep(0)
    assert inflight.count == 1 and not await inflight.drained(0.01)
    second.set()
    assert await inflight.drained(1.0)
    assert inflight.count == 0
    await asyncio.gather(*tasks)


async def test_a_run_that_raises_still_leaves() -> None:
    inflight = InFlight()
    with pytest.raises(RuntimeError):
        async with inflight.hold():
            raise RuntimeError("boom")
    assert await inflight.drained(0.0)


async def test_cleanup_closes_the_client_after_the_held_run() -> None:
    order: list[str] = []
    memo: Any = SimpleNamespace(inflight=InFlight(), kube=RecordingKube(order), settled=None)
    gate = asyncio.Event()

    @handlers._held
    async def reconcile(*, memo: Any, **_: Any) -> None:
        await gate.wait()
        order.append("reconcile")

    running = asyncio.create_task(reconcile(memo=memo))
    await asyncio.sleep(0)
    stopping = asyncio.create_task(handlers.cleanup(memo=memo))
    await asyncio.sleep(0.05)
    assert order == []  # the client is still open under the run
    gate.set()
    await asyncio.gather(running, stopping)
    assert order == ["reconcile", "kube"]


async def test_cleanup_gives_up_on_a_run_that_does_not_end(monkeypatch: pytest.MonkeyPatch,
                                                           caplog: pytest.LogCaptureFixture) -> None:
    monkeypatch.setattr(handlers, "DRAIN_S", 0.05)
    order: list[str] = []
    memo: Any = SimpleNamespace(inflight=InFlight(), kube=RecordingKube(order), settled=None)

    @handlers._held
    async def stuck(*, memo: Any, **_: Any) -> None:
        await asyncio.Event().wait()

    running = asyncio.create_task(stuck(memo=memo))
    await asyncio.sleep(0)
    await handlers.cleanup(memo=memo)
    assert order == ["kube"]
    assert "1 handler runs still in flight" in caplog.text
    running.cancel()
