"""Why a trial pod waits, from the pod, its Kueue Workload, the LocalQueue and the pod's Events as
the API returns them (shapes as Kueue v0.17 and the kubelet write them)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from buzz_operator.api.trial import DEFAULT_QUEUE_SECONDS, TrialDeadlines, WaitSource
from buzz_operator.pod.waiting import (
    classify_wait,
    exceeded_message,
    position,
    pulling,
    same_wait,
    waited_s,
    workload_of,
)
from buzz_operator.scoring.failures import FailureClass, classify_reason, failure_outcome

NOW = datetime(2026, 12, 1, 22, 0, 0, tzinfo=UTC)
GATE = {"name": "kueue.x-k8s.io/admission"}
QUOTA_MESSAGE = ("couldn't assign flavors to pod set main: insufficient unused quota for pods in flavor "
                 "buzz-default, 1 more needed")


def pod(*, gates: list[dict[str, str]] | None = None, queue: str | None = "team-a", uid: str = "u1",
        node: str | None = None, **status: Any) -> dict[str, Any]:
    labels = {"kueue.x-k8s.io/queue-name": queue} if queue else {}
    return {
        "metadata": {"name": "t1-r0", "namespace": "ns", "uid": uid, "labels": labels,
                     "creationTimestamp": "2026-12-01T21:58:30Z"},
        "spec": {"schedulingGates": gates or [], **({"nodeName": node} if node else {})},
        "status": {"phase": "Pending", **status},
    }


def workload(name: str, owner: str, created: str, *, priority: int = 0, queue: str = "team-a",
             conditions: list[dict[str, Any]] | None = None, admission: dict[str, Any] | None = None) -> dict[str, Any]:
    return {
        "metadata": {"name": name, "creationTimestamp": created, "ownerReferences": [{"kind": "Pod", "uid": owner}]},
        "spec": {"queueName": queue, "priority": priority},
        "status": {"conditions": conditions or [], **({"admission": admission} if admission else {})},
    }


def pending(message: str = QUOTA_MESSAGE, reason: str = "Pending") -> list[dict[str, Any]]:
    return [{"type": "QuotaReserved", "status": "False", "reason": reason, "message": message}]


LOCAL_QUEUE = {"spec": {"clusterQueue": "shared"}, "status": {"pendingWorkloads": 3, "admittedWorkloads": 2}}


def test_kueue_quota_wait_names_queue_cluster_queue_place_and_kueues_words() -> None:
    workloads = [
        workload("pod-t0-r0-a", "u0", "2026-12-01T21:58:00Z", conditions=pending()),
        workload("pod-t1-r0-b", "u1", "2026-12-01T21:58:30Z", conditions=pending()),
        workload("pod-t2-r0-c", "u2", "2026-12-01T21:58:40Z", conditions=pending()),
        workload("pod-run-d", "u9", "2026-12-01T21:50:00Z",
                 conditions=[{"type": "QuotaReserved", "status": "True"}, {"type": "Admitted", "status": "True"}]),
    ]
    waiting = classify_wait(pod(gates=[GATE]), now=NOW, workloads=workloads, local_queue=LOCAL_QUEUE)
    assert waiting.source is WaitSource.KUEUE
    assert waiting.reason == "QueuedInKueue"
    assert waiting.message == QUOTA_MESSAGE
    assert (waiting.queue, waiting.cluster_queue, waiting.workload) == ("team-a", "shared", "pod-t1-r0-b")
    assert (waiting.position, waiting.pending) == (2, 3)  # behind the older one; the admitted one is not counted
    assert waiting.seconds == 90


def test_queue_order_is_priority_then_age_within_the_local_queue() -> None:
    old = workload("old", "a", "2026-12-01T21:00:00Z", conditions=pending())
    urgent = workload("urgent", "b", "2026-12-01T21:30:00Z", priority=10, conditions=pending())
    other_queue = workload("other", "c", "2026-12-01T20:00:00Z", queue="team-b", conditions=pending())
    assert position(old, [old, urgent, other_queue]) == 2
    assert position(urgent, [old, urgent, other_queue]) == 1


def test_inadmissible_workload_is_its_own_reason() -> None:
    workloads = [workload("w", "u1", "2026-12-01T21:58:30Z",
                          conditions=pending("LocalQueue team-a doesn't exist", "Inadmissible"))]
    waiting = classify_wait(pod(gates=[GATE]), now=NOW, workloads=workloads, local_queue=None)
    assert (waiting.reason, waiting.message) == ("QueueInadmissible", "LocalQueue team-a doesn't exist")


def test_before_kueue_made_the_workload() -> None:
    waiting = classify_wait(pod(gates=[GATE]), now=NOW, workloads=[], local_queue=None)
    assert waiting.reason == "QueuedInKueue"
    assert "create the pod's Workload" in waiting.message and "LocalQueue team-a not found" in waiting.message


def test_admitted_but_gate_still_on() -> None:
    workloads = [workload("w", "u1", "2026-12-01T21:58:30Z",
                          conditions=[{"type": "QuotaReserved", "status": "True"}, {"type": "Admitted", "status": "True"}],
                          admission={"clusterQueue": "shared"})]
    waiting = classify_wait(pod(gates=[GATE]), now=NOW, workloads=workloads, local_queue=LOCAL_QUEUE)
    assert (waiting.reason, waiting.cluster_queue, waiting.position) == ("KueueAdmitting", "shared", None)


def test_scheduler_failure_after_admission_keeps_the_queue() -> None:
    message = "0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available"
    scheduled = {"conditions": [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
                                 "message": message}]}
    waiting = classify_wait(pod(**scheduled), now=NOW, local_queue=LOCAL_QUEUE)
    assert (waiting.source, waiting.reason, waiting.message) == (WaitSource.SCHEDULER, "Unschedulable", message)
    assert (waiting.queue, waiting.cluster_queue) == ("team-a", "shared")


def test_without_kueue_a_taint_is_the_schedulers_reason() -> None:
    message = "0/1 nodes are available: 1 node(s) had untolerated taint {dedicated: gpu}."
    scheduled = {"conditions": [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
                                 "message": message}]}
    waiting = classify_wait(pod(queue=None, **scheduled), now=NOW)
    assert (waiting.reason, waiting.message, waiting.queue) == ("Unschedulable", message, None)


def test_other_scheduling_gates() -> None:
    waiting = classify_wait(pod(queue=None, gates=[{"name": "example.com/wait"}]), now=NOW)
    assert (waiting.source, waiting.reason, waiting.message) == (
        WaitSource.SCHEDULER, "SchedulingGated", "scheduling gates: example.com/wait")


def event(reason: str, message: str, at: str) -> dict[str, Any]:
    return {"reason": reason, "message": message, "lastTimestamp": at}


def test_image_pull_in_progress_from_the_kubelets_events() -> None:
    events = [
        event("Scheduled", "Successfully assigned ns/t1-r0 to node", "2026-12-01T21:58:31Z"),
        event("Pulled", 'Container image "docker.io/buzz/stack:dev" already present on machine', "2026-12-01T21:58:32Z"),
        event("Pulling", 'Pulling image "docker.io/buzz-tasks/big:1"', "2026-12-01T21:58:33Z"),
    ]
    scheduled = {"conditions": [{"type": "PodScheduled", "status": "True"}]}
    waiting = classify_wait(pod(queue=None, node="n1", **scheduled), now=NOW, events=events)
    assert (waiting.source, waiting.reason, waiting.message) == (
        WaitSource.KUBELET, "PullingImage", 'Pulling image "docker.io/buzz-tasks/big:1"')
    done = [*events, event("Pulled", 'Successfully pulled image "docker.io/buzz-tasks/big:1" in 3s',
                           "2026-12-01T21:58:36Z")]
    assert pulling(done) is None


def test_containers_starting() -> None:
    status = {"conditions": [{"type": "PodScheduled", "status": "True"}],
              "initContainerStatuses": [{"name": "stack", "state": {"waiting": {"reason": "PodInitializing"}}}]}
    waiting = classify_wait(pod(queue=None, node="n1", **status), now=NOW)
    assert (waiting.reason, waiting.message) == ("StartingContainers", "stack: PodInitializing")


def test_reporter_writes_again_only_on_a_change_of_reason() -> None:
    first = classify_wait(pod(gates=[GATE]), now=NOW, workloads=[], local_queue=None)
    later = classify_wait(pod(gates=[GATE]), now=NOW.replace(minute=1), workloads=[], local_queue=None)
    assert later.seconds > first.seconds and same_wait(first, later)
    assert not same_wait(first, classify_wait(pod(queue=None), now=NOW))
    assert same_wait(None, None) and not same_wait(first, None)


def test_the_workload_is_the_one_the_pod_owns() -> None:
    mine = workload("mine", "u1", "2026-12-01T21:58:30Z")
    assert workload_of(pod(), [workload("theirs", "u2", "2026-12-01T21:58:30Z"), mine]) is mine
    assert workload_of(pod(), []) is None


def test_queue_wait_bound_is_infra_never_the_agents() -> None:
    assert classify_reason("QueueWaitExceeded") is FailureClass.INFRA
    assert failure_outcome("QueueWaitExceeded", timed_out=False).value == "launch"
    deadlines = TrialDeadlines(schedule_seconds=600, setup_seconds=120, agent_seconds=600, agent_source="task",
                               collect_seconds=300, verifier_seconds=600, upload_seconds=300)
    assert deadlines.queue_wait_s(queued=False) == 0
    assert deadlines.queue_wait_s(queued=True) == DEFAULT_QUEUE_SECONDS
    assert deadlines.model_copy(update={"queue_seconds": 30}).queue_wait_s(queued=True) == 30
    waiting = classify_wait(pod(gates=[GATE]), now=NOW, workloads=[], local_queue=LOCAL_QUEUE)
    text = exceeded_message(waiting, "t1-r0", 60)
    assert text.startswith("pod t1-r0 waited 90s for admission in LocalQueue team-a (ClusterQueue shared)")
    assert "spec.queueWaitSeconds" in text and waited_s(pod(), NOW) == 90
