"""BuzzTrial objects → summaries: state, scoring and the fields admission needs."""

from __future__ import annotations

from typing import Any

import pytest
from buzz_operator.sweep.trial_view import TrialState, view_trial


def _body(status: dict[str, Any]) -> dict[str, Any]:
    return {
        "metadata": {"name": "demo-0123456789", "namespace": "bench"},
        "spec": {"sweepName": "demo", "task": "t", "attempt": 2, "endpoints": ["m1"]},
        "status": status,
    }


@pytest.mark.parametrize(
    ("status", "state", "scored", "reward"),
    [
        ({}, TrialState.PENDING, False, None),
        ({"phase": "Running"}, TrialState.RUNNING, False, None),
        ({"phase": "Bundling"}, TrialState.RUNNING, False, None),
        ({"phase": "Succeeded", "reward": 0.5}, TrialState.SUCCEEDED, True, 0.5),
        ({"phase": "Failed", "failureClass": "outcome"}, TrialState.FAILED, True, 0.0),
        ({"phase": "Failed", "failureClass": "infra"}, TrialState.FAILED, False, None),
        ({"phase": "Failed", "failureClass": "broken", "reward": 1.0}, TrialState.BROKEN, False, 1.0),
    ],
)
def test_states_and_scoring(
    status: dict[str, Any], state: TrialState, scored: bool, reward: float | None
) -> None:
    summary = view_trial(_body(status))
    assert (summary.state, summary.scored, summary.reward) == (state, scored, reward)


def test_fields_come_from_metadata_spec_and_status() -> None:
    summary = view_trial(
        _body(
            {
                "phase": "Running",
                "costUSD": {"floor": 0.1, "ceiling": 0.2},
                "outcome": "timeout",
                "kopf": {"x": 1},
            }
        )
    )
    assert (summary.name, summary.namespace, summary.sweep, summary.task, summary.attempt) == (
        "demo-0123456789",
        "bench",
        "demo",
        "t",
        2,
    )
    assert (summary.endpoints, summary.cost_floor, summary.cost_ceiling, summary.outcome) == (
        ("m1",),
        0.1,
        0.2,
        "timeout",
    )
    assert summary.active
