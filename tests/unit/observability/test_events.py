"""Events for every trial phase change and failure, sweep condition changes; no secret leaks."""

from __future__ import annotations

from buzz_operator.api.trial import BuzzTrialStatus
from buzz_operator.observability.events import (
    MESSAGE_LIMIT,
    Event,
    admitted,
    regraded,
    sweep_events,
    trial_events,
)


def st(**fields: object) -> BuzzTrialStatus:
    return BuzzTrialStatus.model_validate(fields)


def test_each_phase_change_is_one_normal_event() -> None:
    events = trial_events(st(phase="Pending"), st(phase="Provisioning", pod="t1-try0"))
    assert events == [Event("Normal", "Provisioning", "Pending -> Provisioning; pod t1-try0")]
    assert trial_events(st(phase="Running"), st(phase="Running", taskEventId="e" * 64)) == []


def test_success_names_outcome_reward_and_bundle() -> None:
    [event] = trial_events(
        st(phase="Bundling"), st(phase="Succeeded", outcome="ok", reward=1.0, bundleURL="file:///b/s1/t1")
    )
    assert event.type == "Normal" and event.reason == "Succeeded"
    assert "outcome ok, reward 1" in event.message and "bundle file:///b/s1/t1" in event.message


def test_a_failure_is_a_warning_with_its_reason_then_the_phase() -> None:
    events = trial_events(
        st(phase="Running"),
        st(
            phase="Failed",
            reason="AgentTimeout",
            failureClass="outcome",
            outcome="timeout",
            message="no DONE within 600s",
        ),
    )
    assert events[0] == Event("Warning", "AgentTimeout", "outcome failure in Running: no DONE within 600s")
    assert (
        events[1].type == "Warning" and events[1].reason == "Failed" and "AgentTimeout" in events[1].message
    )


def test_an_infra_retry_says_which_try() -> None:
    new = st(
        phase="Pending",
        retries=1,
        reason="PodLost",
        message="node went away",
        attempts=[{"retry": 0, "phase": "Running", "reason": "PodLost", "failureClass": "infra"}],
    )
    events = trial_events(st(phase="Running"), new)
    assert events[0] == Event("Warning", "PodLost", "infra failure in Running: node went away (retry 1)")
    assert events[1].reason == "Pending"


def test_long_messages_are_clipped() -> None:
    [warning, _] = trial_events(
        st(phase="Grading"),
        st(phase="Failed", reason="VerifierFailed", failureClass="outcome", message="x" * 5000),
    )
    assert len(warning.message) == MESSAGE_LIMIT


def test_admitted_names_sweep_task_and_attempt() -> None:
    assert admitted({"sweepName": "s1", "task": "hello-file", "attempt": 2}).message == (
        "sweep s1 admitted task hello-file attempt 2"
    )


def test_sweep_condition_transitions_only() -> None:
    old = {"conditions": [{"type": "Accepted", "status": "True", "reason": "Valid"}], "total": 2}
    same = {"conditions": [{"type": "Accepted", "status": "True", "reason": "Valid"}]}
    assert sweep_events(old, same) == []
    done = {
        "conditions": [
            {"type": "Complete", "status": "True", "reason": "AllTrialsFinished", "message": "2/2"}
        ]
    }
    assert sweep_events(old, done) == [Event("Normal", "AllTrialsFinished", "Complete=True: 2/2")]
    refused = {
        "conditions": [{"type": "Accepted", "status": "False", "reason": "InvalidSpec", "message": "spec.x"}]
    }
    assert sweep_events(old, refused)[0].type == "Warning"
    # conditions first written False are not news; their later change is
    quiet = {"conditions": [{"type": "Suspended", "status": "False", "reason": "NotSuspended"}]}
    assert sweep_events(old, quiet) == []
    suspended = {"conditions": [{"type": "Suspended", "status": "True", "reason": "SpecSuspend"}]}
    assert sweep_events(quiet, suspended) == [Event("Normal", "SpecSuspend", "Suspended=True")]


def test_sweep_waiting_and_progress() -> None:
    old = {"total": 2, "pending": 2}
    events = sweep_events(old, {"waiting": {"reason": "ParallelismLimit", "message": "1 trial waits"}})
    assert events == [Event("Normal", "Waiting", "ParallelismLimit: 1 trial waits")]
    events = sweep_events(
        {"total": 2, "running": 1, "pending": 1}, {"running": 0, "succeeded": 1, "pending": 1}
    )
    assert events == [
        Event("Normal", "TrialsFinished", "1/2 done: pending 1, running 0, succeeded 1, failed 0, broken 0")
    ]


def test_no_secret_material_reaches_a_message() -> None:
    # the status never holds secret values; the tenant Secret's *name* is fine, its keys never appear
    new = st(phase="Running", tenantSecret="t1-tenant", channelId="c" * 36, trialId="i" * 36)
    [event] = trial_events(st(phase="Launching"), new)
    assert "t1-tenant" not in event.message and "nsec" not in event.message


def test_a_regrade_is_announced_once() -> None:
    before = st(phase="Succeeded", reward=0.0)
    done = st(phase="Succeeded", reward=1.0,
              regrade={"generation": 3, "result": "regraded", "previousReward": 0.0})
    assert regraded(before, done) == [Event("Normal", "Regraded", "generation 3: reward 0 -> 1")]
    assert regraded(done, done) == []  # the same record again (a resumed timer) is no news
    refused = st(phase="Succeeded", reward=1.0, regrade={
        "generation": 4, "result": "not-regradable", "reason": "ReadsContainerState",
        "message": "the verifier reads the container"})
    assert regraded(done, refused) == [Event(
        "Warning", "ReadsContainerState",
        "regrade for generation 4 not-regradable: the verifier reads the container")]
