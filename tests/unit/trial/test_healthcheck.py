"""The healthcheck wait as Harbor's run_healthcheck runs it (trial/healthcheck.py): the first pass
ends it, start-period failures only wait, then `retries` consecutive failures fail the trial as
infra (HealthcheckFailed), a timed-out run counting as a failure. A fake clock: no real waiting."""

from __future__ import annotations

import asyncio

import pytest
from buzz_operator.dataset.config import HealthcheckSection
from buzz_operator.scoring.failures import StepFailure, classify_reason
from buzz_operator.trial.healthcheck import await_healthy


class Box:
    def __init__(self, answers: list[int | None]) -> None:
        self.answers, self.clock, self.slept, self.seen = list(answers), 0.0, [], []

    async def run(self, command: str, timeout_s: float) -> int | None:
        self.seen.append((command, timeout_s))
        self.clock += 1.0  # each run takes a second
        return self.answers.pop(0)

    async def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.clock += seconds


def wait(check: HealthcheckSection, box: Box) -> int:
    return asyncio.run(await_healthy(check, box.run, lambda: box.clock, box.sleep))


def test_the_first_pass_ends_the_wait() -> None:
    box = Box([1, 0])
    assert wait(HealthcheckSection(command="true"), box) == 2
    assert box.seen == [("true", 30.0), ("true", 30.0)] and box.slept == [5.0]


def test_start_period_failures_do_not_count() -> None:
    check = HealthcheckSection(command="c", start_period_sec=10, start_interval_sec=2, interval_sec=7, retries=2)
    # runs start at t=0, 3, 6, 9 inside the period (2 s apart), then t=12 and t=20 count: two
    # consecutive failures end it at the sixth run; a pass at the sixth would have ended the wait
    assert wait(check, Box([1, 1, 1, 1, 1, 0])) == 6
    box = Box([1] * 6)
    with pytest.raises(StepFailure) as caught:
        wait(check, box)
    assert box.slept == [2, 2, 2, 2, 7] and len(box.seen) == 6
    assert caught.value.reason == "HealthcheckFailed" and classify_reason("HealthcheckFailed").value == "infra"


def test_retries_consecutive_failures_fail_the_trial_naming_the_command() -> None:
    box = Box([2, None, 2])
    with pytest.raises(StepFailure) as caught:
        wait(HealthcheckSection(command="pg_isready", retries=3, interval_sec=1), box)
    assert "3 consecutive times (3 runs, the last exit 2): pg_isready" in caught.value.message
    assert box.slept == [1.0, 1.0]
