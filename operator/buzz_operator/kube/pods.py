"""Waiting for a pod to run: its changes watched, and why it still waits read from Kueue and the
kubelet's Events. What a pod's state means is pod/state.py's and pod/waiting.py's to say; who
hears of the wait is the caller's `report` (a trial's is trial/drive/waiting.py)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from kubernetes_asyncio import watch
from kubernetes_asyncio.client.exceptions import ApiException

from buzz_operator.api.trial import PodWaiting
from buzz_operator.kube import kueue
from buzz_operator.kube.client import Kube
from buzz_operator.kube.objects import read_pod
from buzz_operator.pod.state import PodState, pod_state
from buzz_operator.pod.waiting import (
    classify_wait,
    exceeded_message,
    queue_name,
    queued,
    same_wait,
    waited_s,
)

log = logging.getLogger(__name__)


class RawWatch(watch.Watch):
    """A watch whose events carry the API's JSON only (`raw_object`, which is all this module
    reads). kubernetes_asyncio's Watch builds an ApiClient of its own, loading the system CA
    bundle (~44 ms of CPU), to turn each event into a typed model nobody here reads: a launching
    pod opens a watch per change, and those two were a third of the operator's CPU per trial
    (bench/profiled_operator.py)."""

    def __init__(self) -> None:  # no ApiClient: nothing is deserialized
        self._raw_return_type = None
        self._stop = False
        self.resource_version = None
        self.resp = None

    def get_return_type(self, func: object) -> str:
        return ""  # falsy: unmarshal_event leaves `object` the JSON it came as

    async def close(self) -> None:  # the response only: the API client is the operator's own
        if self.resp is not None:
            self.resp.release()
            self.resp = None

GONE = 410

async def wait_running(kube: Kube, namespace: str, name: str, *, timeout_s: float, poll: float = 0.5,
                       queue_s: float = 0.0, report: Report | None = None) -> PodState:
    """Until every container runs, or the pod is hopeless; TimeoutError after `timeout_s`.

    With `queue_s` (a pod queued through Kueue) or a `report` for the waiting reasons, it is
    wait_admitted_and_running.

    Watched, not polled: a 0.5 s poll added 0.25 s on average to every trial's launch
    (bench/trial.py). A read starts each watch, so a state reached between two watches is
    seen; `poll` only spaces out the retries when a watch cannot be opened.
    """
    if queue_s or report is not None:
        return await wait_admitted_and_running(kube, namespace, name, timeout_s=timeout_s, queue_s=queue_s,
                                               report=report, poll=poll)
    async with asyncio.timeout(timeout_s):
        while True:
            pod = await read_pod(kube, namespace, name)
            state = pod_state(pod)
            if state.ready or state.reason is not None:
                return state
            assert pod is not None  # pod_state(None) is hopeless (PodDeleted)
            async with RawWatch() as stream:
                try:
                    async for event in stream.stream(
                        kube.core.list_namespaced_pod, namespace, field_selector=f"metadata.name={name}",
                        resource_version=pod["metadata"]["resourceVersion"], timeout_seconds=30,
                    ):
                        obj = event.get("raw_object") or {}
                        state = pod_state(None if event["type"] == "DELETED" else obj)
                        if state.ready or state.reason is not None:
                            return state
                except ApiException as exc:
                    if exc.status != GONE:  # 410: the version is too old; read again and re-watch
                        raise
                    await asyncio.sleep(poll)


# What a waiting pod's reporter is given: why it waits now, or None once the wait is over.
Report = Callable[[PodWaiting | None], Awaitable[None]]
# A waiting pod's holder is asked again this often: a Workload's admission or a queue's length
# changes without the pod changing, so a pod watch alone would not see it.
WAIT_ROUND_S = 5
# The waited seconds in status are refreshed this often when nothing else changed.
REPORT_EVERY_S = 15.0
# A pod running within this long is not explained at all: the common case on a cluster with room,
# where a reason written and cleared again would be two status writes per trial for nothing.
REPORT_AFTER_S = 5


async def explain_wait(kube: Kube, pod: dict[str, Any], now: datetime) -> PodWaiting:
    """Why `pod` waits, asking Kueue only about a pod that came through it, and the kubelet's
    Events only once it is on a node. A read that fails leaves the pod's own word."""
    meta = pod.get("metadata") or {}
    namespace, queue = str(meta.get("namespace")), queue_name(pod)
    workloads: list[dict[str, Any]] = []
    lq: dict[str, Any] | None = None
    events: list[dict[str, Any]] = []
    try:
        if queue is not None:
            lq = await kueue.local_queue(kube, namespace, queue)
            if queued(pod):
                workloads = await kueue.workloads(kube, namespace)
        if (pod.get("spec") or {}).get("nodeName"):
            events = await kueue.pod_events(kube, namespace, str(meta.get("name")))
    except (ApiException, OSError, TimeoutError) as error:  # explaining must never fail the launch
        log.warning("pod %s/%s: reading why it waits failed: %s", namespace, meta.get("name"), error)
    return classify_wait(pod, now=now, workloads=workloads, local_queue=lq, events=events)


async def _changes(kube: Kube, namespace: str, name: str, version: str, round_s: int,
                   poll: float) -> AsyncIterator[dict[str, Any] | None]:
    """The pod as each change leaves it (None once deleted), for up to `round_s`."""
    async with RawWatch() as stream:
        try:
            async for event in stream.stream(
                kube.core.list_namespaced_pod, namespace, field_selector=f"metadata.name={name}",
                resource_version=version, timeout_seconds=round_s,
            ):
                yield None if event["type"] == "DELETED" else (event.get("raw_object") or {})
        except ApiException as exc:
            if exc.status != GONE:
                raise
            await asyncio.sleep(poll)


@dataclass
class _Wait:
    """One wait_admitted_and_running call: the pod, its limits and reporter, and (on the event
    loop's clock) when the wait started, when Kueue admitted the pod, and what was last reported."""

    kube: Kube
    namespace: str
    name: str
    timeout_s: float
    queue_s: float
    report: Report | None
    loop: asyncio.AbstractEventLoop
    started: float
    admitted_at: float | None = None
    last: PodWaiting | None = None
    written: float = 0.0


async def _judged(wait: _Wait, pod: dict[str, Any] | None) -> PodState | None:
    """The pod's state once it runs or is hopeless (QueueWaitExceeded included), else None, having
    explained a wait longer than REPORT_AFTER_S."""
    state = pod_state(pod)
    if state.ready or state.reason is not None:
        return state
    assert pod is not None  # pod_state(None) is hopeless (PodDeleted)
    now = datetime.now(UTC)
    if (exceeded := await _past_limit(wait, pod, now)) is not None:
        return exceeded
    if wait.loop.time() - wait.started >= REPORT_AFTER_S:
        await _explain(wait, pod, now)
    return None


async def _past_limit(wait: _Wait, pod: dict[str, Any], now: datetime) -> PodState | None:
    """QueueWaitExceeded for a pod Kueue has held longer than `queue_s`; TimeoutError for one not
    running `timeout_s` after its admission, counted from when this wait first saw it admitted."""
    if queued(pod):
        if wait.queue_s and waited_s(pod, now) > wait.queue_s:
            waiting = await explain_wait(wait.kube, pod, now)
            return PodState(False, "QueueWaitExceeded", exceeded_message(waiting, wait.name, wait.queue_s))
    else:
        wait.admitted_at = wait.loop.time() if wait.admitted_at is None else wait.admitted_at
        if wait.loop.time() - wait.admitted_at > wait.timeout_s:
            raise TimeoutError(f"pod {wait.name} not running {wait.timeout_s:.0f}s after admission")
    return None


async def _explain(wait: _Wait, pod: dict[str, Any], now: datetime) -> None:
    """Tells the reporter why the pod waits when the reason changed, or REPORT_EVERY_S after the
    last telling so the waited seconds in status stay fresh."""
    waiting = await explain_wait(wait.kube, pod, now)
    if not same_wait(wait.last, waiting):
        log.info("pod %s/%s waits (%s): %s: %s", wait.namespace, wait.name, waiting.source.value,
                 waiting.reason, waiting.message)
    if not same_wait(wait.last, waiting) or wait.loop.time() - wait.written >= REPORT_EVERY_S:
        await _tell(wait.report, waiting, f"{wait.namespace}/{wait.name}")
        wait.last, wait.written = waiting, wait.loop.time()


async def wait_admitted_and_running(
    kube: Kube, namespace: str, name: str, *, timeout_s: float, queue_s: float, report: Report | None,
    poll: float = 0.5,
) -> PodState:
    """wait_running for a pod that may wait in Kueue's queue first, saying why it waits.

    While Kueue's admission gate is on, the pod may wait `queue_s` from its creation, after
    which this returns QueueWaitExceeded (infra: the platform had no room, the team did
    nothing); once past the gate it has `timeout_s` to run, as any pod (TimeoutError after).
    A pod still waiting after REPORT_AFTER_S is explained to `report` (every change of the
    reason, and every REPORT_EVERY_S), and None is reported when the wait ends however it ends;
    a pod that runs at once costs no extra request.

    One watch per round, judged on each object it brings: a pod starting takes five or six
    changes (scheduled, each container started, ready), and a read and a new watch after each
    was 13 of a trial's 74 API requests (bench/trial.py). The read at each round's start sees
    a state reached between two watches, and the round's end asks a waiting pod's holder again.
    """
    loop = asyncio.get_running_loop()
    wait = _Wait(kube, namespace, name, timeout_s, queue_s, report, loop, started=loop.time())
    try:
        while True:
            pod = await read_pod(kube, namespace, name)
            if (state := await _judged(wait, pod)) is not None:
                return state
            assert pod is not None
            round_s = WAIT_ROUND_S if loop.time() - wait.started >= REPORT_AFTER_S else REPORT_AFTER_S
            # closed at once when a change ends the wait, so the watch's connection goes with it
            async with contextlib.aclosing(_changes(kube, namespace, name, pod["metadata"]["resourceVersion"],
                                                    round_s, poll)) as changes:
                async for changed in changes:
                    if (state := await _judged(wait, changed)) is not None:
                        return state
    finally:
        if wait.last is not None:
            await _tell(report, None, f"{namespace}/{name}")


async def _tell(report: Report | None, waiting: PodWaiting | None, pod: str) -> None:
    if report is None:
        return
    try:
        await report(waiting)
    except Exception as error:  # a missing or stale reason in status is no reason to fail the launch
        log.warning("pod %s: writing its waiting reason failed: %s", pod, error)
