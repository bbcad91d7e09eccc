"""The preflight gate: a sweep with trials keeps the preflight it recorded and runs no canary
(the canary itself runs on a real cluster in tests/integration/operator/test_preflight.py)."""

from __future__ import annotations

import asyncio

from buzz_operator.sweep.drive.preflight_gate import pass_preflight

from tests.support.sweep_ticks import inputs, sweep_body, tick, trial


def test_a_sweep_with_trials_keeps_its_recorded_preflight(tmp_path) -> None:  # type: ignore[no-untyped-def]
    recorded = {"passed": True, "checkedAt": "2026-12-05T11:00:00Z", "checks": []}
    ticked = tick(sweep_body(status={"preflight": recorded}), mine=[trial("s-a", "reply-to-thread", 1)])
    kept = asyncio.run(pass_preflight(ticked, inputs(tmp_path)))
    assert kept is ticked.previous.preflight and kept is not None and kept.passed


def test_a_sweep_whose_trials_predate_preflight_goes_on_without_one(tmp_path) -> None:  # type: ignore[no-untyped-def]
    assert asyncio.run(pass_preflight(tick(mine=[trial("s-a", "reply-to-thread", 1)]), inputs(tmp_path))) is None
