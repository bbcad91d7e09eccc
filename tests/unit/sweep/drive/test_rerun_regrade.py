"""The rerun and regrade policies do nothing unless the spec asks, and a generation asks once
(the selection is sweep/rerun.py's, tested in tests/unit/sweep/test_rerun_lifecycle.py; the
deletes and relabels run against a real API server in tests/integration/operator)."""

from __future__ import annotations

import asyncio

from buzz_operator.sweep.drive.regrade import regrade
from buzz_operator.sweep.drive.rerun import rerun
from buzz_operator.sweep.trial_view import TrialState

from tests.support.sweep_ticks import SPEC, inputs, sweep_body, tick, trial

FAILED = [trial("s-a", "reply-to-thread", 1, TrialState.FAILED)]


def test_nothing_is_rerun_or_regraded_unless_asked(tmp_path) -> None:  # type: ignore[no-untyped-def]
    # kube is None in these ticks: a delete or relabel would fail the test
    ticked = tick(mine=FAILED)
    asyncio.run(rerun(ticked, inputs(tmp_path)))
    asyncio.run(regrade(ticked, inputs(tmp_path)))


def test_a_sweep_without_a_generation_reruns_nothing(tmp_path) -> None:  # type: ignore[no-untyped-def]
    spec = {**SPEC, "rerun": {"reasons": ["AgentTimeout"]}, "regrade": True}
    ticked = tick(sweep_body(spec, generation=0), mine=FAILED)
    asyncio.run(rerun(ticked, inputs(tmp_path, spec)))
    asyncio.run(regrade(ticked, inputs(tmp_path, spec)))
