"""Why a trial pod is not running yet, and who holds it (docs/queueing.md#waiting-reasons).

Pure: it reads the pod, Kueue's Workload for it, the LocalQueue and the pod's Events as the API
returned them (plain dicts) and names the holder, in the holder's own words:

- kueue: the pod carries Kueue's admission scheduling gate — its Workload waits for quota
  (QuotaReserved=False, Kueue's message: "couldn't assign flavors … insufficient unused quota"),
  cannot be admitted at all (QueueInadmissible: no such LocalQueue, an inactive ClusterQueue),
  or is admitted and Kueue is lifting the gate;
- scheduler: another scheduling gate, PodScheduled=False (insufficient cpu or memory, taints,
  affinity), or not yet looked at;
- kubelet: scheduled, and pulling an image or creating containers.

Hopeless states (a failed pull, a crash) are kube/pods.py's pod_state; this only explains a
wait that may still end well.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from buzz_operator.api.labels import KUEUE_ADMISSION_GATE, KUEUE_QUEUE_NAME
from buzz_operator.api.trial import PodWaiting, WaitSource

MESSAGE_MAX = 300
# Kueue's Workload condition reasons that mean "not admissible as things are", not "wait your turn"
INADMISSIBLE = frozenset({"Inadmissible"})
_QUOTED = re.compile(r'"([^"]+)"')


def _time(text: Any) -> datetime | None:
    if not text:
        return None
    try:
        moment = datetime.fromisoformat(str(text).replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def _condition(obj: Mapping[str, Any] | None, kind: str) -> Mapping[str, Any] | None:
    for condition in ((obj or {}).get("status") or {}).get("conditions") or []:
        if condition.get("type") == kind:
            return condition
    return None


def _true(obj: Mapping[str, Any] | None, kind: str) -> bool:
    return (_condition(obj, kind) or {}).get("status") == "True"


def _gates(pod: Mapping[str, Any]) -> list[str]:
    return [g.get("name", "") for g in (pod.get("spec") or {}).get("schedulingGates") or []]


def queued(pod: Mapping[str, Any]) -> bool:
    """The pod waits for Kueue's admission (its gate is still on)."""
    return KUEUE_ADMISSION_GATE in _gates(pod)


def queue_name(pod: Mapping[str, Any]) -> str | None:
    return ((pod.get("metadata") or {}).get("labels") or {}).get(KUEUE_QUEUE_NAME)


def workload_of(pod: Mapping[str, Any], workloads: Sequence[Mapping[str, Any]]) -> Mapping[str, Any] | None:
    """Kueue's Workload for a plain pod: the one the pod owns (Kueue makes it with an
    ownerReference to the pod)."""
    uid = (pod.get("metadata") or {}).get("uid")
    for workload in workloads:
        if any(ref.get("uid") == uid for ref in (workload.get("metadata") or {}).get("ownerReferences") or []):
            return workload
    return None


def _pending(workload: Mapping[str, Any]) -> bool:
    return not (_true(workload, "QuotaReserved") or _true(workload, "Admitted") or _true(workload, "Finished"))


def _order(workload: Mapping[str, Any]) -> tuple[int, datetime, str]:
    # Kueue's queue order (BestEffortFIFO and StrictFIFO alike): higher priority first, then older
    meta = workload.get("metadata") or {}
    priority = int((workload.get("spec") or {}).get("priority") or 0)
    created = _time(meta.get("creationTimestamp")) or datetime.max.replace(tzinfo=UTC)
    return (-priority, created, str(meta.get("name", "")))


def position(workload: Mapping[str, Any], workloads: Sequence[Mapping[str, Any]]) -> int | None:
    """1-based place of `workload` among the pending Workloads of its LocalQueue that are listed
    (those of its namespace: a LocalQueue lives in one), None once it is not pending."""
    if not _pending(workload):
        return None
    queue = (workload.get("spec") or {}).get("queueName")
    ahead = sorted((w for w in workloads if (w.get("spec") or {}).get("queueName") == queue and _pending(w)),
                   key=_order)
    name = (workload.get("metadata") or {}).get("name")
    for index, other in enumerate(ahead, start=1):
        if (other.get("metadata") or {}).get("name") == name:
            return index
    return None


def _kueue_wait(pod: Mapping[str, Any], workload: Mapping[str, Any] | None,
                local_queue: Mapping[str, Any] | None, workloads: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    queue = queue_name(pod)
    where = {
        "source": WaitSource.KUEUE,
        "queue": queue,
        "cluster_queue": ((local_queue or {}).get("spec") or {}).get("clusterQueue"),
        "pending": ((local_queue or {}).get("status") or {}).get("pendingWorkloads"),
    }
    if workload is None:
        lq = "" if local_queue is not None or queue is None else f" (LocalQueue {queue} not found)"
        return {**where, "reason": "QueuedInKueue",
                "message": f"waiting for Kueue to create the pod's Workload{lq}"}
    name = (workload.get("metadata") or {}).get("name")
    where = {**where, "workload": name, "position": position(workload, workloads)}
    if _true(workload, "Admitted") or _true(workload, "QuotaReserved"):
        admission = (workload.get("status") or {}).get("admission") or {}
        cq = admission.get("clusterQueue") or where["cluster_queue"]
        return {**where, "cluster_queue": cq, "reason": "KueueAdmitting",
                "message": f"admitted by ClusterQueue {cq}; Kueue is removing the pod's scheduling gate"}
    reserved = _condition(workload, "QuotaReserved")
    if reserved is None:
        return {**where, "reason": "QueuedInKueue", "message": f"Workload {name} waits for Kueue to consider it"}
    reason = "QueueInadmissible" if reserved.get("reason") in INADMISSIBLE else "QueuedInKueue"
    return {**where, "reason": reason, "message": str(reserved.get("message") or reserved.get("reason") or "")}


def _event_time(event: Mapping[str, Any]) -> datetime:
    return (_time(event.get("lastTimestamp")) or _time(event.get("eventTime"))
            or _time((event.get("metadata") or {}).get("creationTimestamp")) or datetime.min.replace(tzinfo=UTC))


def pulling(events: Sequence[Mapping[str, Any]]) -> str | None:
    """The image the kubelet is pulling now: a Pulling event with no Pulled after it for that image."""
    open_pulls: dict[str, str] = {}
    for event in sorted(events, key=_event_time):
        message = str(event.get("message") or "")
        images = _QUOTED.findall(message)
        if not images:
            continue
        if event.get("reason") == "Pulling":
            open_pulls[images[0]] = message
        elif event.get("reason") in ("Pulled", "Failed", "BackOff"):
            open_pulls.pop(images[0], None)
    return next(reversed(open_pulls.values()), None)


def _node_wait(pod: Mapping[str, Any], events: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    gates = [g for g in _gates(pod) if g != KUEUE_ADMISSION_GATE]
    if gates:
        return {"source": WaitSource.SCHEDULER, "reason": "SchedulingGated",
                "message": f"scheduling gates: {', '.join(gates)}"}
    scheduled = _condition(pod, "PodScheduled") or {}
    if scheduled.get("status") != "True":
        if scheduled.get("reason") == "Unschedulable":
            return {"source": WaitSource.SCHEDULER, "reason": "Unschedulable",
                    "message": str(scheduled.get("message") or "unschedulable")}
        return {"source": WaitSource.SCHEDULER, "reason": "Scheduling", "message": "waiting for the scheduler"}
    if (image := pulling(events)) is not None:
        return {"source": WaitSource.KUBELET, "reason": "PullingImage", "message": image}
    status = pod.get("status") or {}
    waits = [f"{c.get('name')}: {(c.get('state') or {}).get('waiting', {}).get('reason')}"
             for c in [*(status.get("initContainerStatuses") or []), *(status.get("containerStatuses") or [])]
             if (c.get("state") or {}).get("waiting")]
    return {"source": WaitSource.KUBELET, "reason": "StartingContainers",
            "message": "; ".join(waits) or f"pod {status.get('phase') or 'Pending'}, containers starting"}


def classify_wait(
    pod: Mapping[str, Any],
    *,
    now: datetime,
    workloads: Sequence[Mapping[str, Any]] = (),
    local_queue: Mapping[str, Any] | None = None,
    events: Sequence[Mapping[str, Any]] = (),
) -> PodWaiting:
    """Why `pod` is not running: `workloads` are the Kueue Workloads of its namespace (its own
    among them), `local_queue` its LocalQueue, `events` the pod's Events."""
    if queued(pod):
        found = _kueue_wait(pod, workload_of(pod, workloads), local_queue, workloads)
    else:
        found = _node_wait(pod, events)
        if queue_name(pod):  # admitted through Kueue: still say which queue it came from
            found = {**found, "queue": queue_name(pod),
                     "cluster_queue": ((local_queue or {}).get("spec") or {}).get("clusterQueue")}
    since = _time((pod.get("metadata") or {}).get("creationTimestamp")) or now
    found["message"] = str(found.get("message") or "")[:MESSAGE_MAX]
    return PodWaiting(since=since, seconds=max(0, int((now - since).total_seconds())), **found)


def waited_s(pod: Mapping[str, Any], now: datetime) -> int:
    """Seconds since the pod was created (0 when it does not say)."""
    since = _time((pod.get("metadata") or {}).get("creationTimestamp"))
    return 0 if since is None else max(0, int((now - since).total_seconds()))


def same_wait(a: PodWaiting | None, b: PodWaiting | None) -> bool:
    """Equal but for the seconds waited: what a reporter need not write again at once."""
    if a is None or b is None:
        return a is b
    return a.model_copy(update={"seconds": 0}) == b.model_copy(update={"seconds": 0})


def exceeded_message(waiting: PodWaiting, pod: str, bound_s: float) -> str:
    """QueueWaitExceeded's message: how long, where, and Kueue's last word."""
    where = f"LocalQueue {waiting.queue}" + (f" (ClusterQueue {waiting.cluster_queue})" if waiting.cluster_queue else "")
    return (f"pod {pod} waited {waiting.seconds}s for admission in {where}, past the "
            f"{int(bound_s)}s bound (spec.queueWaitSeconds): {waiting.reason}: {waiting.message}")[:MESSAGE_MAX]
