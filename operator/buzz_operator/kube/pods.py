"""Reading a trial pod's state: running and ready for exec, or why not (the reason words of
trial/failures.py), so a stuck image pull surfaces at once instead of at the deadline."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from kubernetes_asyncio import watch
from kubernetes_asyncio.client.exceptions import ApiException

from buzz_operator.kube.client import Kube
from buzz_operator.kube.objects import read_pod

GONE = 410

# Waiting reasons that will not resolve by waiting longer.
PULL_FAILURES = frozenset({"ErrImagePull", "ImagePullBackOff", "ErrImageNeverPull", "InvalidImageName"})
CRASHES = frozenset({"CrashLoopBackOff", "CreateContainerError", "CreateContainerConfigError", "RunContainerError"})


@dataclass(frozen=True)
class PodState:
    """`ready`: every container runs; otherwise `reason` (a failures.py word) if it is hopeless."""

    ready: bool
    reason: str | None = None
    message: str = ""


def _statuses(pod: dict[str, Any]) -> list[dict[str, Any]]:
    status = pod.get("status") or {}
    return [*(status.get("initContainerStatuses") or []), *(status.get("containerStatuses") or [])]


def _sidecar_names(pod: dict[str, Any]) -> set[str]:
    """Native sidecars: init containers with restartPolicy Always, which must run as well."""
    inits = ((pod.get("spec") or {}).get("initContainers")) or []
    return {c.get("name") for c in inits if c.get("restartPolicy") == "Always"}


def pod_state(pod: dict[str, Any] | None) -> PodState:
    """Pure: classify a pod as read from the API."""
    if pod is None:
        return PodState(False, "PodDeleted", "the trial pod no longer exists")
    if (pod.get("metadata") or {}).get("deletionTimestamp"):
        return PodState(False, "PodDeleted", "the trial pod is being deleted")
    status = pod.get("status") or {}
    phase = status.get("phase")
    if status.get("reason") == "Evicted":
        return PodState(False, "PodEvicted", status.get("message") or "evicted")
    for container in _statuses(pod):
        waiting = (container.get("state") or {}).get("waiting") or {}
        reason = waiting.get("reason")
        detail = f"{container.get('name')}: {reason}: {waiting.get('message') or ''}".rstrip(": ")
        if reason in PULL_FAILURES:
            return PodState(False, "ImagePullFailed", detail)
        if reason in CRASHES:
            return PodState(False, "ContainerCrashed", detail)
        terminated = (container.get("state") or {}).get("terminated") or {}
        if terminated and terminated.get("exitCode", 0) != 0:
            # the last line of its termination message: the stack install says there why it
            # refused the image (trial/stack_install.py)
            said = ([line for line in str(terminated.get("message") or "").splitlines() if line.strip()] or [""])[-1]
            return PodState(False, "ContainerCrashed" if container.get("name") != "stack" else "StackInstallFailed",
                            f"{container.get('name')} exited {terminated.get('exitCode')}: {terminated.get('reason')}"
                            + (f": {said.strip()[:200]}" if said else ""))
    if phase in ("Succeeded", "Failed"):
        return PodState(False, "PodLost", f"the trial pod ended ({phase})")
    if phase == "Running":
        main = status.get("containerStatuses") or []
        sidecars = _sidecar_names(pod)
        running = [c for c in _statuses(pod) if c in main or c.get("name") in sidecars]
        if main and len(running) == len(main) + len(sidecars) and all(
            (c.get("state") or {}).get("running") for c in running
        ):
            return PodState(True)
    for condition in status.get("conditions") or []:
        if condition.get("type") == "PodScheduled" and condition.get("reason") == "Unschedulable":
            return PodState(False, None, condition.get("message") or "unschedulable")
    return PodState(False)


async def wait_running(kube: Kube, namespace: str, name: str, *, timeout_s: float, poll: float = 0.5) -> PodState:
    """Until every container runs, or the pod is hopeless; TimeoutError after `timeout_s`.

    Watched, not polled: a 0.5 s poll added 0.25 s on average to every trial's launch
    (bench/trial.py). A read starts each watch, so a state reached between two watches is
    seen; `poll` only spaces out the retries when a watch cannot be opened.
    """
    async with asyncio.timeout(timeout_s):
        while True:
            pod = await read_pod(kube, namespace, name)
            state = pod_state(pod)
            if state.ready or state.reason is not None:
                return state
            assert pod is not None  # pod_state(None) is hopeless (PodDeleted)
            # closed, not only stopped: every Watch owns an ApiClient (an aiohttp session) of
            # its own, and one leaked per trial launch was an "Unclosed client session" each
            async with watch.Watch() as stream:
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
