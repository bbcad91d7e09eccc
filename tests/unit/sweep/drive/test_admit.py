"""The admit policy: the planned trials the caps let start become BuzzTrial objects owned by the
sweep, and count as pending at once. The create call is stood in for (it records the bodies);
the creates against a real API server are in tests/integration/operator."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from buzz_operator.sweep.drive import admit
from buzz_operator.sweep.drive.plan import plan

from tests.support.sweep_ticks import SPEC, inputs, sweep_body, tick


def _created(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    bodies: list[dict[str, Any]] = []

    async def create(_kube: object, _namespace: str, body: dict[str, Any]) -> None:
        bodies.append(body)

    monkeypatch.setattr(admit, "_create", create)
    return bodies


def test_admitted_trials_are_created_owned_and_counted_pending(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    created = _created(monkeypatch)
    ticked, read = tick(), inputs(tmp_path)
    planned = plan(ticked, read)
    decision = asyncio.run(admit.admit_trials(ticked, read, planned))
    assert len(decision.admit) == 3 == len(created)  # spec.parallelism
    owner = created[0]["metadata"]["ownerReferences"][0]
    assert owner["kind"] == "BuzzSweep" and owner["uid"] == "uid-1" and owner["controller"] is True
    assert {b["spec"]["sweepName"] for b in created} == {"s"}
    figures = planned.counted.figures(2, planned=4)
    # 3 created now count as pending trials that exist; 1 of the 4 planned is not created yet
    assert figures.pending == 4 and figures.not_created == 1 and planned.created == 0


def test_a_suspended_sweep_creates_nothing_and_says_why(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    created = _created(monkeypatch)
    spec = {**SPEC, "suspend": True}
    ticked, read = tick(sweep_body(spec)), inputs(tmp_path, spec)
    decision = asyncio.run(admit.admit_trials(ticked, read, plan(ticked, read)))
    assert created == [] and decision.admit == [] and decision.waiting_reason is not None
