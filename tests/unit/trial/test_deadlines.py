from __future__ import annotations

import math

import pytest
from buzz_operator.api.trial import TrialDeadlines
from buzz_operator.trial.deadlines import step_deadlines


def _deadlines(**overrides: float) -> TrialDeadlines:
    values = {
        "agent_timeout_sec": 600.0,
        "verifier_timeout_sec": 600.0,
        "build_timeout_sec": 600.0,
        "manifest_timeout_seconds": 1800,
        "multiplier": 1.0,
        **overrides,
    }
    return step_deadlines(**values)  # type: ignore[arg-type]


def test_task_limit_wins_when_shorter() -> None:
    assert _deadlines() == TrialDeadlines(
        schedule_seconds=600,
        setup_seconds=120,
        agent_seconds=600,
        agent_source="task",
        collect_seconds=300,
        verifier_seconds=600,
        upload_seconds=300,
    )


def test_manifest_budget_wins_when_shorter_and_is_not_scaled() -> None:
    deadlines = _deadlines(manifest_timeout_seconds=300, multiplier=2.0)
    assert (deadlines.agent_seconds, deadlines.agent_source) == (300, "manifest")
    assert deadlines.verifier_seconds == 1200


def test_multiplier_scales_the_tasks_agent_and_verifier_limits_only() -> None:
    deadlines = _deadlines(multiplier=1.5, manifest_timeout_seconds=36000)
    assert (deadlines.agent_seconds, deadlines.agent_source) == (900, "task")
    assert deadlines.verifier_seconds == 900
    # the pod's start and the setup measure the cluster, not the task
    assert (deadlines.schedule_seconds, deadlines.setup_seconds) == (600, 120)
    assert (deadlines.collect_seconds, deadlines.upload_seconds) == (300, 300)


def test_a_tiny_multiplier_leaves_the_pod_time_to_start() -> None:
    deadlines = _deadlines(multiplier=0.0001)
    assert (deadlines.agent_seconds, deadlines.verifier_seconds) == (1, 1)
    assert (deadlines.schedule_seconds, deadlines.setup_seconds) == (600, 120)


def test_the_sweep_sets_the_pod_start_and_setup_deadlines() -> None:
    deadlines = _deadlines(pod_start_seconds=45, setup_seconds=300, multiplier=3.0)
    assert (deadlines.schedule_seconds, deadlines.setup_seconds) == (45, 300)


def test_fractions_round_up_to_whole_seconds() -> None:
    assert _deadlines(agent_timeout_sec=10.2, multiplier=0.5).agent_seconds == 6


def test_equal_limits_are_attributed_to_the_task() -> None:
    assert _deadlines(manifest_timeout_seconds=600).agent_source == "task"


@pytest.mark.parametrize(
    "overrides",
    [
        {"multiplier": 0.0},
        {"agent_timeout_sec": -1.0},
        {"verifier_timeout_sec": math.inf},
        {"manifest_timeout_seconds": 0},
        {"pod_start_seconds": 0},
        {"setup_seconds": -5},
    ],
)
def test_bad_numbers_name_themselves(overrides: dict[str, float]) -> None:
    (name,) = overrides
    with pytest.raises(ValueError, match=name):
        _deadlines(**overrides)
