"""The corridor: facts move a trial forward, failures follow their class, patches are exact."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from buzz_operator.api.conditions import find_condition
from buzz_operator.api.sweep import RetryPolicy
from buzz_operator.api.trial import BuzzTrialStatus, FailureClass, Outcome, Phase
from buzz_operator.scoring.failures import StepFailure
from buzz_operator.trial.state import (
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
    next_phase,
    released,
    seconds_until_ready,
    status_patch,
)

T0 = datetime(2026, 1, 1, 12, 0, 0, tzinfo=UTC)
RETRY = RetryPolicy(max_retries=2, backoff_seconds=10, max_backoff_seconds=300)


def at(seconds: int) -> datetime:
    return T0 + timedelta(seconds=seconds)


def _through(status: BuzzTrialStatus, *facts: object, start: int = 1) -> BuzzTrialStatus:
    for offset, fact in enumerate(facts, start=start):
        status = advance(status, fact, at(offset))  # type: ignore[arg-type]
    return status


PROVISIONED = Provisioned(trial_id="tid-0", tenant_secret="demo-abc-seats", channel_id="chan-1")
LAUNCHED = Launched(pod="demo-abc")
RAN = Ran(task_event_id="ev-task", completion_message_id="ev-done")
COLLECTED = Collected(Spend(tokens_input=1000, tokens_output=200, cost_floor=0.5, cost_ceiling=0.75))
GRADED = Graded(reward=1.0, rewards={"reward": 1.0, "reply_found": 1.0})
BUNDLED = Bundled(bundle_url="file:///var/lib/b/demo/demo-abc")


def _running() -> BuzzTrialStatus:
    return _through(begin(BuzzTrialStatus(), T0), PROVISIONED, LAUNCHED)


def test_next_phase_walks_the_corridor() -> None:
    phases = [Phase.PENDING]
    while phases[-1] is not Phase.SUCCEEDED:
        phases.append(next_phase(phases[-1]))
    assert [p.value for p in phases] == [
        "Pending", "Provisioning", "Launching", "Running", "Collecting", "Grading", "Bundling", "Succeeded",
    ]  # fmt: skip
    with pytest.raises(ValueError, match="terminal"):
        next_phase(Phase.FAILED)


def test_happy_path_golden() -> None:
    status = _through(begin(BuzzTrialStatus(), T0), PROVISIONED, LAUNCHED, RAN, COLLECTED, GRADED, BUNDLED)
    api = status.to_api()
    conditions = api.pop("conditions")
    assert api == {
        "phase": "Succeeded",
        "phaseTimes": {
            "provisioning": "2026-01-01T12:00:00Z",
            "launching": "2026-01-01T12:00:01Z",
            "running": "2026-01-01T12:00:02Z",
            "collecting": "2026-01-01T12:00:03Z",
            "grading": "2026-01-01T12:00:04Z",
            "bundling": "2026-01-01T12:00:05Z",
            "finished": "2026-01-01T12:00:06Z",
        },
        "trialId": "tid-0",
        "tenantSecret": "demo-abc-seats",
        "channelId": "chan-1",
        "pod": "demo-abc",
        "taskEventId": "ev-task",
        "completionMessageId": "ev-done",
        "outcome": "ok",
        "reason": "Done",
        "reward": 1.0,
        "rewards": {"reward": 1.0, "reply_found": 1.0},
        "costUSD": {"floor": 0.5, "ceiling": 0.75},
        "tokens": {"input": 1000, "output": 200},
        "retries": 0,
        "stepRetries": 0,
        "failedTries": [],
        "bundleURL": "file:///var/lib/b/demo/demo-abc",
        "shown": {"reward": "1", "cost": "$0.50–0.75"},
    }
    assert [(c["type"], c["status"], c["reason"]) for c in conditions] == [
        ("Provisioned", "True", "TenantProvisioned"),
        ("Launched", "True", "AgentsSubscribed"),
        ("AgentsFinished", "True", "AgentsStopped"),
        ("Collected", "True", "EvidenceCollected"),
        ("Verified", "True", "VerifierFinished"),
        ("Bundled", "True", "BundleWritten"),
    ]


def test_a_fact_only_applies_in_its_phase() -> None:
    status = _running()
    with pytest.raises(ValueError, match="Launched is the result of Launching, but the trial is Running"):
        advance(status, LAUNCHED, at(9))


def test_agent_timeout_is_still_collected_graded_and_scored() -> None:
    status = _through(
        _running(), Ran(task_event_id="ev", completion_message_id=None, timed_out=True), start=3
    )
    assert (status.phase, status.outcome, status.reason) == (
        Phase.COLLECTING,
        Outcome.TIMEOUT,
        "AgentTimeout",
    )
    status = _through(status, COLLECTED, Graded(reward=0.0), BUNDLED, start=4)
    assert (status.phase, status.outcome, status.reward, status.failure_class) == (
        Phase.SUCCEEDED,
        Outcome.TIMEOUT,
        0.0,
        None,
    )


def test_stopping_without_done_is_recorded_not_failed() -> None:
    status = advance(_running(), Ran(task_event_id="ev", completion_message_id=None), at(3))
    assert (status.outcome, status.reason, status.completion_message_id) == (Outcome.OK, "NoDone", None)


def test_infra_failure_before_results_starts_a_fresh_try() -> None:
    status = _running()
    failed = fail(
        status, StepFailure("PodEvicted", "node drained", bundle_url="file:///b/r0"), at(10), retry=RETRY
    )
    assert failed.phase is Phase.PENDING
    assert failed.retries == 1
    assert failed.retry_after == at(20)  # backoffSeconds for the first retry
    assert (failed.pod, failed.channel_id, failed.trial_id, failed.tenant_secret) == (None, None, None, None)
    assert failed.phase_times.pending == at(10) and failed.phase_times.launching is None
    (record,) = failed.failed_tries
    assert record.model_dump(mode="json", by_alias=True) == {
        "retry": 0,
        "phase": "Running",
        "reason": "PodEvicted",
        "failureClass": "infra",
        "message": "node drained",
        "pod": "demo-abc",
        "bundleURL": "file:///b/r0",
        "finishedAt": "2026-01-01T12:00:10Z",
    }
    types = [c.type for c in failed.conditions]
    assert types == ["Retrying"]  # the failed try's step conditions are gone
    retrying = find_condition(failed.conditions, "Retrying")
    assert retrying is not None and retrying.message == "try 2 of 3 after PodEvicted"

    assert begin(failed, at(19)) is failed  # still backing off
    assert seconds_until_ready(failed, at(15)) == 5.0
    restarted = begin(failed, at(20))
    assert restarted.phase is Phase.PROVISIONING and restarted.retry_after is None
    retrying = find_condition(restarted.conditions, "Retrying")
    assert retrying is not None and retrying.status.value == "False"


def test_infra_retries_run_out_into_failed() -> None:
    status = begin(BuzzTrialStatus(), T0)
    for retry in range(3):
        status = fail(status, StepFailure("ErrImagePull"), at(100 * retry + 1), retry=RETRY)
        if status.phase is Phase.PENDING:
            status = begin(status, at(100 * retry + 99))
    assert status.phase is Phase.FAILED
    assert (status.failure_class, status.outcome, status.reason) == (
        FailureClass.INFRA,
        Outcome.LAUNCH,
        "ErrImagePull",
    )
    assert [record.retry for record in status.failed_tries] == [0, 1, 2]
    assert status.retries == 2
    failed = find_condition(status.conditions, "Failed")
    assert failed is not None and failed.reason == "ErrImagePull"
    assert status.phase_times.finished == at(201)


def test_infra_failure_after_the_run_retries_the_step_in_place() -> None:
    status = advance(_running(), RAN, at(3))
    failed = fail(status, StepFailure("ExecStreamBroken", "websocket closed"), at(4), retry=RETRY)
    assert (failed.phase, failed.step_retries, failed.retries, failed.retry_after) == (
        Phase.COLLECTING,
        1,
        0,
        at(14),
    )
    assert failed.pod == "demo-abc" and failed.failed_tries == []
    with pytest.raises(ValueError, match="backing off"):
        advance(failed, COLLECTED, at(5))
    done = advance(failed, COLLECTED, at(14))
    assert (done.phase, done.step_retries, done.retry_after) == (Phase.GRADING, 0, None)


def test_step_retries_run_out_but_the_bundle_is_still_written() -> None:
    status = advance(_running(), RAN, at(3))
    for second in (4, 40, 400):
        status = fail(status, StepFailure("ExecStreamBroken"), at(second), retry=RETRY)
    assert status.phase is Phase.BUNDLING
    assert (status.failure_class, status.outcome) == (FailureClass.INFRA, Outcome.ERROR)
    ended = advance(status, BUNDLED, at(500))
    assert ended.phase is Phase.FAILED
    assert ended.bundle_url == BUNDLED.bundle_url


def test_verifier_failure_is_an_outcome_bundled_and_ended_failed() -> None:
    status = _through(_running(), RAN, COLLECTED, start=3)
    failed = fail(status, StepFailure("RewardMissing", "no reward.txt"), at(6), retry=RETRY)
    assert (failed.phase, failed.failure_class, failed.outcome) == (
        Phase.BUNDLING,
        FailureClass.OUTCOME,
        Outcome.ERROR,
    )
    ended = advance(failed, BUNDLED, at(7))
    assert (ended.phase, ended.reason, ended.reward) == (Phase.FAILED, "RewardMissing", None)


def test_broken_evidence_skips_grading() -> None:
    status = advance(_running(), RAN, at(3))
    broken = fail(
        status,
        StepFailure("EvidenceExportFailed"),
        at(4),
        retry=RETRY,
        spend=Spend(tokens_input=5, tokens_output=1, cost_floor=0.1, cost_ceiling=0.1),
    )
    assert (broken.phase, broken.failure_class, broken.outcome) == (
        Phase.BUNDLING,
        FailureClass.BROKEN,
        Outcome.BROKEN,
    )
    assert (broken.tokens.input, broken.cost_usd.ceiling) == (5, 0.1)
    assert advance(broken, BUNDLED, at(5)).phase is Phase.FAILED


def test_first_failure_explains_the_trial() -> None:
    status = _through(_running(), RAN, COLLECTED, start=3)
    status = fail(status, StepFailure("VerifierBroken"), at(6), retry=RETRY)
    status = fail(status, StepFailure("StorageUnavailable"), at(7), retry=RETRY)  # step retry
    assert status.reason == "VerifierBroken"
    assert status.phase is Phase.BUNDLING and status.step_retries == 1


def test_spend_of_every_try_adds_up() -> None:
    status = fail(_running(), StepFailure("PodLost"), at(3), retry=RETRY, spend=Spend(100, 10, 0.25, 0.5))
    status = _through(begin(status, at(100)), PROVISIONED, LAUNCHED, RAN, COLLECTED, start=101)
    assert (status.tokens.input, status.tokens.output) == (1100, 210)
    assert (status.cost_usd.floor, status.cost_usd.ceiling) == (0.75, 1.25)


def test_terminal_trials_refuse_more_work() -> None:
    ended = _through(_running(), RAN, COLLECTED, GRADED, BUNDLED, start=3)
    with pytest.raises(ValueError, match="already ended"):
        fail(ended, StepFailure("PodLost"), at(9), retry=RETRY)
    with pytest.raises(ValueError, match="Pending"):
        begin(ended, at(9))


def test_release_only_after_the_end() -> None:
    with pytest.raises(ValueError, match="terminal"):
        released(_running(), at(9))
    ended = _through(_running(), RAN, COLLECTED, GRADED, BUNDLED, start=3)
    done = released(ended, at(9))
    condition = find_condition(done.conditions, "Released")
    assert condition is not None and condition.reason == "TornDown"


def test_status_patch_is_a_minimal_merge_patch() -> None:
    status = _running()
    failed = fail(status, StepFailure("PodLost"), at(10), retry=RETRY)
    patch = status_patch(status, failed)
    assert patch["phase"] == "Pending"
    assert patch["pod"] is None and patch["channelId"] is None and patch["trialId"] is None
    # A merge patch merges objects, so entries of the old try's phaseTimes must be nulled.
    assert patch["phaseTimes"] == {
        "pending": "2026-01-01T12:00:10Z",
        "provisioning": None,
        "launching": None,
        "running": None,
    }
    assert "tokens" not in patch and "costUSD" not in patch
    assert status_patch(failed, failed) == {}


def test_observed_generation_is_kept_unless_given() -> None:
    status = begin(BuzzTrialStatus(), T0, generation=4)
    assert status.observed_generation == 4
    assert advance(status, PROVISIONED, at(1)).observed_generation == 4
    assert advance(status, PROVISIONED, at(1), generation=5).observed_generation == 5
    assert fail(status, StepFailure("PodLost"), at(2), retry=RETRY).observed_generation == 4


def test_a_status_naming_its_failed_tries_attempts_is_read_and_written_anew() -> None:
    # `attempts` was the field's name until 2026-12-05; a trial running across the upgrade keeps
    # its record: read under the old name, written under the new one by the next patch, before
    # the API server prunes the field the CRD no longer has
    record = {"retry": 0, "phase": "Running", "reason": "PodLost", "failureClass": "infra"}
    legacy = BuzzTrialStatus.model_validate({"phase": "Pending", "retries": 1, "attempts": [record]})
    assert [t.reason for t in legacy.failed_tries] == ["PodLost"]
    assert status_patch(legacy, legacy.model_copy()) == {"failedTries": [record]}
    current = BuzzTrialStatus.model_validate(legacy.to_api())
    assert "attempts" not in legacy.to_api() and status_patch(current, current.model_copy()) == {}


def test_a_pod_lost_after_the_run_starts_a_fresh_try_not_a_step_retry() -> None:
    # the agents said DONE, then the pod went: nothing is left in it to collect or grade, and a
    # step retried in place would only fail again until its retries ran out
    for reason in ("PodDeleted", "PodEvicted", "OOMKilled"):
        collecting = advance(_running(), RAN, at(3))
        failed = fail(collecting, StepFailure(reason, "pod demo-abc was deleted"), at(4), retry=RETRY)
        assert (failed.phase, failed.retries, failed.step_retries) == (Phase.PENDING, 1, 0), reason
        assert [(t.phase, t.reason) for t in failed.failed_tries] == [(Phase.COLLECTING, reason)]
    grading = advance(advance(_running(), RAN, at(3)), COLLECTED, at(4))
    assert fail(grading, StepFailure("PodLost"), at(5), retry=RETRY).retries == 1
    # a broken stream to a pod that is still there is retried in place, as before
    assert fail(grading, StepFailure("ExecStreamBroken"), at(5), retry=RETRY).step_retries == 1
