"""A reconcile's creates run CREATES_AT_ONCE at a time and stop at the first failure. The create
itself is stood in for: how many requests are in flight at once is not something a real
apiserver can be asked (the creates against one are in tests/integration/operator)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from buzz_operator.sweep.drive import admit


def _bodies(n: int) -> list[dict[str, Any]]:
    return [{"metadata": {"name": f"t{i}"}, "spec": {"sweepName": "s"}} for i in range(n)]


async def test_creates_run_a_few_at_once_in_plan_order(monkeypatch: pytest.MonkeyPatch) -> None:
    started: list[str] = []
    in_flight, most = 0, 0

    async def create(_kube: object, _namespace: str, body: dict[str, Any]) -> None:
        nonlocal in_flight, most
        started.append(body["metadata"]["name"])
        in_flight += 1
        most = max(most, in_flight)
        await asyncio.sleep(0.01)
        in_flight -= 1

    monkeypatch.setattr(admit, "_create", create)
    count = 3 * admit.CREATES_AT_ONCE + 5
    await admit.create_all(None, "ns", _bodies(count))  # type: ignore[arg-type]
    assert sorted(started) == sorted(b["metadata"]["name"] for b in _bodies(count))
    assert most == admit.CREATES_AT_ONCE
    assert started[: admit.CREATES_AT_ONCE] == [f"t{i}" for i in range(admit.CREATES_AT_ONCE)]


async def test_the_first_failure_is_raised_as_it_came_and_the_rest_are_not_started(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    started: list[str] = []

    async def create(_kube: object, _namespace: str, body: dict[str, Any]) -> None:
        started.append(body["metadata"]["name"])
        await asyncio.sleep(0.01)
        if body["metadata"]["name"] == "t2":
            raise ValueError("refused")

    monkeypatch.setattr(admit, "_create", create)
    with pytest.raises(ValueError, match="refused"):
        await admit.create_all(None, "ns", _bodies(4 * admit.CREATES_AT_ONCE))  # type: ignore[arg-type]
    assert len(started) < 4 * admit.CREATES_AT_ONCE
