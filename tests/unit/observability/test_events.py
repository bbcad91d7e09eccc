"""Events for a trial's failures and finish, sweep condition changes; no secret leaks."""

from __future__ import annotations

from datetime import UTC, datetime
from itertools import pairwise

from buzz_operator.api.trial import BuzzTrialStatus
from buzz_operator.observability.events import (
    MESSAGE_LIMIT,
    Event,
    admitted,
    announcement,
    regraded,
    sweep_events,
    trial_events,
)


def st(**fields: object) -> BuzzTrialStatus:
    return BuzzTrialStatus.model_validate(fields)


def test_only_the_finish_is_a_phase_event() -> None:
    # the phases between start (admitted) and finish are status and metrics, not API writes
    corridor = ["Pending", "Provisioning", "Launching", "Running", "Collecting", "Grading", "Bundling"]
    for old, new in pairwise(corridor):
        assert trial_events(st(phase=old), st(phase=new, pod="t1-try0")) == [], new
    assert trial_events(st(phase="Running"), st(phase="Running", taskEventId="e" * 64)) == []
    [event] = trial_events(st(phase="Bundling"), st(phase="Succeeded", outcome="ok"))
    assert event == Event("Normal", "Succeeded", "Bundling -> Succeeded; outcome ok")


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
        failed_tries=[{"retry": 0, "phase": "Running", "reason": "PodLost", "failureClass": "infra"}],
    )
    # the Warning is the whole story: the fresh try's Pending is no news of its own
    assert trial_events(st(phase="Running"), new) == [
        Event("Warning", "PodLost", "infra failure in Running: node went away (retry 1)")]


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


def test_a_trials_announcement_is_named_by_trial_and_uid_so_a_second_post_meets_the_first() -> None:
    trial = {"apiVersion": "bench.buzz.dev/v1alpha1", "kind": "BuzzTrial",
             "metadata": {"namespace": "ns", "name": "s1-hello-0", "uid": "u-1"},
             "spec": {"sweepName": "s1", "task": "hello", "attempt": 0}}
    now = datetime(2026, 12, 3, 10, 0, tzinfo=UTC)
    body = announcement(trial, admitted(trial["spec"]), now=now, component="kopf", instance="dev")
    assert body["metadata"] == {"namespace": "ns", "name": "s1-hello-0.admitted.u-1"}
    assert (body["type"], body["reason"], body["message"]) == ("Normal", "Admitted", "sweep s1 admitted task hello attempt 0")
    assert body["involvedObject"] == {"apiVersion": "bench.buzz.dev/v1alpha1", "kind": "BuzzTrial",
                                      "namespace": "ns", "name": "s1-hello-0", "uid": "u-1"}
    assert body["source"] == {"component": "kopf"} and body["eventTime"] == now.isoformat()
    # the same trial recreated under the same name is another uid, and another announcement
    again = {**trial, "metadata": {**trial["metadata"], "uid": "u-2"}}
    other = announcement(again, admitted(trial["spec"]), now=now, component="kopf", instance="dev")
    assert other["metadata"]["name"] != body["metadata"]["name"]


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


def test_sweep_progress_is_told_by_tenths() -> None:
    def told(before: int, after: int, total: int) -> bool:
        return bool(sweep_events({"total": total, "succeeded": before}, {"succeeded": after}))

    assert [n for n in range(1, 1001) if told(n - 1, n, 1000)] == list(range(100, 1001, 100))
    assert all(told(n - 1, n, 7) for n in range(1, 8))  # ten or fewer: every finish
    assert told(0, 250, 1000) and not told(250, 260, 1000) and not told(990, 999, 1000)
    assert told(999, 1000, 1000)


def test_no_secret_material_reaches_a_message() -> None:
    # the status never holds secret values; the tenant Secret's *name* is fine, its keys never appear
    new = st(phase="Succeeded", tenantSecret="t1-tenant", channelId="c" * 36, trialId="i" * 36, outcome="ok")
    [event] = trial_events(st(phase="Bundling"), new)
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
