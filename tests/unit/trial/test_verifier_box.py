"""A verifier cut short by its box is broken, never a 0 (docs/resources.md#verifier): processes
OOM-killed during its run, or a timeout while throttled in most of its CPU periods."""

from __future__ import annotations

from buzz_operator.api.trial import ResourceUsage
from buzz_operator.scoring.failures import classify_reason
from buzz_operator.trial.steps.verifier import box_failure

RUN = ResourceUsage(cgroup=2, peak_memory_mb=900.0, memory_limit_mb=1024.0, oom_kills=0, cpu_seconds=30.0,
                    periods=600, throttled_periods=100, throttled_seconds=4.0)


def test_oom_kills_in_the_verifiers_run_are_broken_whatever_its_exit() -> None:
    for timed_out in (False, True):
        failure = box_failure(RUN.model_copy(update={"oom_kills": 1}), timed_out=timed_out)
        assert failure is not None and failure.reason == "VerifierOutOfMemory"
        assert classify_reason(failure.reason).value == "broken"
        assert "900.0 MiB of 1024.0 MiB" in failure.message


def test_a_timeout_throttled_in_most_periods_is_starved_and_a_calm_one_is_the_answers() -> None:
    starved = box_failure(RUN.model_copy(update={"throttled_periods": 450}), timed_out=True)
    assert starved is not None and starved.reason == "VerifierStarved"
    assert classify_reason("VerifierStarved").value == "broken"
    assert box_failure(RUN, timed_out=True) is None  # 100 of 600 periods: the timeout stands
    assert box_failure(RUN.model_copy(update={"throttled_periods": 450}), timed_out=False) is None
    assert box_failure(None, timed_out=True) is None  # no reading: the verifier's own word stands
