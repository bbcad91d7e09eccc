"""Resource use recorded by phase, and ResourcePressure when the agents' container had processes
OOM-killed (docs/resources.md#pressure): the score stands, the trial carries the condition, its
Events warn."""

from __future__ import annotations

from buzz_operator.api.conditions import find_condition
from buzz_operator.api.trial import BuzzTrialStatus, ResourceUsage
from buzz_operator.observability.events import trial_events
from buzz_operator.trial.state import Collected, Graded, Spend, advance

from tests.unit.trial.test_state import BUNDLED, RAN, _running, _through, at

CALM = ResourceUsage(cgroup=1, peak_memory_mb=300.0, memory_limit_mb=1024.0, oom_kills=0, cpu_seconds=12.5)
PRESSED = CALM.model_copy(update={"oom_kills": 2, "peak_memory_mb": 1023.9})
VERIFIER = ResourceUsage(cgroup=1, peak_memory_mb=300.0, oom_kills=0, cpu_seconds=0.4)


def _collected(agents: ResourceUsage | None) -> BuzzTrialStatus:
    return _through(_running(), RAN, Collected(Spend(), resources=agents), start=3)


def test_each_phase_is_recorded_and_a_calm_one_earns_no_condition() -> None:
    status = _through(_collected(CALM), Graded(reward=1.0, resources=VERIFIER), BUNDLED, start=5)
    assert status.resource_usage is not None
    assert (status.resource_usage.agents, status.resource_usage.verifier) == (CALM, VERIFIER)
    assert find_condition(status.conditions, "ResourcePressure") is None
    assert status.to_api()["resourceUsage"]["agents"] == {"cgroup": 1, "peakMemoryMB": 300.0,
                                                          "memoryLimitMB": 1024.0, "oomKills": 0, "cpuSeconds": 12.5}


def test_oom_kills_in_the_agents_phase_flag_the_trial_and_keep_its_score() -> None:
    before = _through(_running(), RAN, start=3)
    collected = advance(before, Collected(Spend(), resources=PRESSED), at(4))
    found = find_condition(collected.conditions, "ResourcePressure")
    assert found is not None and found.status.value == "True" and found.reason == "ProcessesOOMKilled"
    assert "killed 2 processes for memory" in found.message and "1023.9 MiB of 1024 MiB" in found.message
    warned = [e for e in trial_events(before, collected) if e.reason == "ProcessesOOMKilled"]
    assert len(warned) == 1 and warned[0].type == "Warning"
    done = _through(collected, Graded(reward=1.0), BUNDLED, start=5)
    assert done.phase.value == "Succeeded" and done.reward == 1.0


def test_an_unreadable_cgroup_records_nothing() -> None:
    status = _through(_collected(None), Graded(reward=0.5), start=5)
    assert status.resource_usage is None and "resourceUsage" not in status.to_api()
