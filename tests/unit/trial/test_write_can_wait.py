"""Fewer status writes without losing restart exactness (trial/state.write_can_wait): entering
Provisioning, Launching and Grading rides on the next write, because beginning a try,
provisioning and collecting are redone exactly by an operator that restarts in the phase before;
the finish the bundle led to rides on the Released write, because a restarted bundle step reads
the committed bundle back; every other transition, and every failure, is written before the next
step starts.

drive() is walked here with stand-in steps (the real steps need a pod and a relay; their
restart behaviour is tests/integration/pod/test_trial_resume.py and tests/faults) to show which
transitions it writes, and that the status it hands on is whole."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime
from types import SimpleNamespace
from typing import Any

import pytest
from buzz_operator.api.sweep import RetryPolicy
from buzz_operator.api.trial import BuzzTrialStatus, FailureClass, Phase
from buzz_operator.observability import metrics
from buzz_operator.scoring.failures import StepFailure
from buzz_operator.trial.drive import driver
from buzz_operator.trial.state import (
    RELEASED,
    Bundled,
    Collected,
    Graded,
    Launched,
    Provisioned,
    Ran,
    Spend,
    advance,
    begin,
    fail,
    released,
    write_can_wait,
)

T0 = datetime(2026, 1, 1, 12, 0, 0, tzinfo=UTC)
FACTS: dict[Phase, Any] = {
    Phase.PROVISIONING: Provisioned("id-1", "t1-tenant-0", "c" * 36),
    Phase.LAUNCHING: Launched("t1-try0"),
    Phase.RUNNING: Ran("e" * 64, "m" * 64),
    Phase.COLLECTING: Collected(Spend(tokens_input=10, tokens_output=5, cost_floor=0.5, cost_ceiling=0.6)),
    Phase.GRADING: Graded(1.0, {"reward": 1.0}),
    Phase.BUNDLING: Bundled("file:///b/s1/t1"),
}


def test_a_plain_step_into_launching_or_grading_can_wait() -> None:
    pending = BuzzTrialStatus()
    provisioning = begin(pending, T0)
    launching = advance(provisioning, FACTS[Phase.PROVISIONING], T0)
    running = advance(launching, FACTS[Phase.LAUNCHING], T0)
    collecting = advance(running, FACTS[Phase.RUNNING], T0)
    grading = advance(collecting, FACTS[Phase.COLLECTING], T0)
    bundling = advance(grading, FACTS[Phase.GRADING], T0)
    assert write_can_wait(provisioning, launching) and write_can_wait(collecting, grading)
    # a trial's first write is its Running: beginning and provisioning ride on it
    assert write_can_wait(pending, provisioning) and write_can_wait(pending, launching)
    succeeded = advance(bundling, FACTS[Phase.BUNDLING], T0)
    assert write_can_wait(bundling, succeeded)  # until released: one write says both
    for written, new in [(launching, running), (provisioning, running), (pending, running),
                         (running, collecting), (grading, bundling), (collecting, bundling),
                         (bundling, released(succeeded, T0)), (provisioning, provisioning)]:
        assert not write_can_wait(written, new), (written.phase, new.phase)


def test_a_failure_never_waits() -> None:
    retry = RetryPolicy(max_retries=2, backoff_seconds=10, max_backoff_seconds=300)
    collecting = BuzzTrialStatus.model_validate({"phase": "Collecting", "trialId": "id-1"})
    # a step retried in place, and a broken run carried on, are written at once
    retried = fail(collecting, StepFailure("RelayUnavailable", "down"), T0, retry=retry)
    assert retried.step_retries == 1 and not write_can_wait(collecting, retried)
    broken = fail(collecting, StepFailure("EvidenceExportFailed", "no evidence"), T0, retry=retry)
    assert broken.failure_class is FailureClass.BROKEN and not write_can_wait(collecting, broken)
    # a try failed for good outside bundling finishes at once: a restarted run could not redo it
    running = BuzzTrialStatus.model_validate({"phase": "Running", "trialId": "id-1"})
    ended = fail(running, StepFailure("PodEvicted", "evicted"), T0, retry=RetryPolicy(max_retries=0))
    assert ended.phase is Phase.FAILED and not write_can_wait(running, ended)


@pytest.fixture
def stand_in_corridor(monkeypatch: pytest.MonkeyPatch) -> list[Phase]:
    ran: list[Phase] = []

    def step(phase: Phase):  # type: ignore[no-untyped-def]
        async def run(ctx: Any, status: BuzzTrialStatus) -> Any:
            ran.append(phase)
            return FACTS[phase]
        return run

    async def nothing(*_: Any) -> None:
        return None

    monkeypatch.setattr(driver, "STEPS", {phase: step(phase) for phase in FACTS})
    monkeypatch.setattr(driver, "_committed", nothing)
    monkeypatch.setattr(driver.teardown, "teardown", nothing)
    return ran


def test_a_new_try_rides_too_but_not_the_failure_before_it() -> None:
    retry = RetryPolicy(max_retries=2, backoff_seconds=0, max_backoff_seconds=0)
    running = BuzzTrialStatus.model_validate({"phase": "Running", "trialId": "id-1", "pod": "t1-try0"})
    again = fail(running, StepFailure("PodEvicted", "evicted"), T0, retry=retry)
    assert again.phase is Phase.PENDING and again.retries == 1 and not write_can_wait(running, again)
    assert write_can_wait(again, begin(again, T0))


async def test_drive_writes_every_transition_but_the_four_that_can_wait(stand_in_corridor: list[Phase]) -> None:
    writes: list[tuple[BuzzTrialStatus, BuzzTrialStatus]] = []
    final = await _drive(writes)
    assert stand_in_corridor == list(FACTS)  # every step ran once
    assert [(old.phase, new.phase) for old, new in writes] == [
        (Phase.PENDING, Phase.RUNNING),
        (Phase.RUNNING, Phase.COLLECTING), (Phase.COLLECTING, Phase.BUNDLING),
        (Phase.BUNDLING, Phase.SUCCEEDED)]
    assert any(c.type == RELEASED for c in writes[-1][1].conditions)  # the finish and its release, at once
    # each write's old is the status last written, so the patch between them is whole
    for (_, before), (after, _) in itertools.pairwise(writes):
        assert before == after
    carried = writes[0][1]
    assert carried.pod == "t1-try0" and carried.trial_id == "id-1" and carried.tenant_secret == "t1-tenant-0"
    assert carried.phase_times.provisioning is not None and carried.phase_times.launching is not None
    assert writes[2][1].tokens.input == 10 and writes[2][1].phase_times.grading is not None
    assert any(c.type == RELEASED for c in final.conditions) and final.reward == 1.0


def test_a_write_that_carries_two_phases_times_both() -> None:
    def value(phase: str) -> float:
        return metrics.REGISTRY.get_sample_value("buzz_trial_phase_duration_seconds_sum", {"phase": phase}) or 0.0

    at = lambda s: datetime(2026, 1, 1, 12, 0, s, tzinfo=UTC)  # noqa: E731
    old = BuzzTrialStatus.model_validate({"phase": "Provisioning", "phaseTimes": {"provisioning": at(0)}})
    new = BuzzTrialStatus.model_validate({"phase": "Running", "phaseTimes": {
        "provisioning": at(0), "launching": at(2), "running": at(7)}})
    before = value("Provisioning"), value("Launching")
    metrics.phase_change(old, new, namespace="ns", condition_hash=None)
    assert (value("Provisioning"), value("Launching")) == (before[0] + 2, before[1] + 5)


async def test_a_finish_whose_teardown_fails_is_written_before_the_teardown_is_tried_again(
    stand_in_corridor: list[Phase], monkeypatch: pytest.MonkeyPatch
) -> None:
    # the relay is down at the finish: the trial is counted finished meanwhile, released later
    tries = {"n": 0}

    async def flaky_teardown(*_: Any) -> None:
        tries["n"] += 1
        if tries["n"] == 1:
            raise ConnectionError("relay down")

    monkeypatch.setattr(driver.teardown, "teardown", flaky_teardown)
    monkeypatch.setattr(driver, "TEARDOWN_RETRY_S", 0.0)
    writes: list[tuple[BuzzTrialStatus, BuzzTrialStatus]] = []
    await _drive(writes)
    finish, release = writes[-2][1], writes[-1][1]
    assert (writes[-2][0].phase, finish.phase) == (Phase.BUNDLING, Phase.SUCCEEDED)
    assert not any(c.type == RELEASED for c in finish.conditions)
    assert any(c.type == RELEASED for c in release.conditions) and tries["n"] == 2


async def _drive(writes: list[tuple[BuzzTrialStatus, BuzzTrialStatus]]) -> BuzzTrialStatus:
    """A fresh trial driven to its end through the stand-in steps, each write kept in `writes`."""
    deadlines = SimpleNamespace(schedule_seconds=60, setup_seconds=60, collect_seconds=60, verifier_seconds=60,
                                upload_seconds=60, queue_wait_s=lambda queued: 0)
    ctx = SimpleNamespace(name="t1", spec=SimpleNamespace(deadlines=deadlines, queue_name=None,
                                                          retry=RetryPolicy()))

    async def write(old: BuzzTrialStatus, new: BuzzTrialStatus) -> None:
        writes.append((old, new))

    return await driver.drive(ctx, BuzzTrialStatus(), write)  # type: ignore[arg-type]
