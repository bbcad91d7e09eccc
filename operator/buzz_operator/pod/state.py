"""A trial pod's state as read from the API: running and ready for exec, or why not (the reason
words of scoring/failures.py), so a stuck image pull surfaces at once instead of at the deadline."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

# Waiting reasons that will not resolve by waiting longer.
PULL_FAILURES = frozenset({"ErrImagePull", "ImagePullBackOff", "ErrImageNeverPull", "InvalidImageName"})
# Why a pull failed, from the runtime's words in the kubelet's message (docs/registry.md#failed-pulls).
PULL_DENIED = "the registry refused the login"
PULL_NOT_FOUND = "the registry has no such image or tag"
PULL_UNREACHABLE = "the registry cannot be reached"
PULL_UNTRUSTED = "the node does not trust the registry's TLS certificate"
PULL_NEVER = "not on the node, and imagePullPolicy Never forbids a pull"
# first match wins: a TLS failure also says "dial", a refused login may also say "not found"
_PULL_CAUSES = (
    (PULL_NEVER, ("ErrImageNeverPull",)),
    (PULL_UNTRUSTED, ("x509:", "certificate signed by unknown authority", "tls: failed to verify")),
    (PULL_DENIED, ("401 Unauthorized", "403 Forbidden", "authorization failed", "failed to authorize",
                   "no basic auth credentials", "pull access denied")),
    (PULL_NOT_FOUND, (": not found", "manifest unknown", "NotFound", "name unknown")),
    (PULL_UNREACHABLE, ("connection refused", "no such host", "i/o timeout", "no route to host",
                        "network is unreachable", "TLS handshake timeout", "dial tcp", "server misbehaving")),
)


def pull_cause(message: str) -> str | None:
    """The cause of a failed pull the kubelet's waiting message names (None: none recognised)."""
    for cause, words in _PULL_CAUSES:
        if any(word in message for word in words):
            return cause
    return None


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


def _service_names(pod: dict[str, Any]) -> set[str]:
    """A compose task's services (pod/services.py): the sidecars that are not the forwarder."""
    return _sidecar_names(pod) - {"forwarder"}


def _failed(pod: dict[str, Any], name: str | None, reason: str, detail: str) -> PodState:
    """A container's failure; a compose service's is the task environment's (ServiceFailed)."""
    if name in _service_names(pod):
        return PodState(False, "ServiceFailed", f"compose service {detail}")
    return PodState(False, reason, detail)


def _oom_killed(pod: dict[str, Any]) -> PodState | None:
    """A container the kernel killed for memory, now or in its last run: the box's limit decided,
    not the team (docs/resources.md#oom), and it comes before any other container's crash, which
    may follow from it — under gVisor the pod's containers share one sandbox, whose death for
    memory leaves the sidecars crash-looping beside the task (docs/isolation.md#telemetry)."""
    for container in _statuses(pod):
        for state in ("state", "lastState"):
            terminated = (container.get(state) or {}).get("terminated") or {}
            if terminated.get("reason") == "OOMKilled":
                return PodState(False, "OOMKilled", f"{container.get('name')} was OOM-killed at its memory limit "
                                                    f"(exit {terminated.get('exitCode')})")
    return None


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
    if (killed := _oom_killed(pod)) is not None:
        return killed
    for container in _statuses(pod):
        waiting = (container.get("state") or {}).get("waiting") or {}
        reason = waiting.get("reason")
        detail = f"{container.get('name')}: {reason}: {waiting.get('message') or ''}".rstrip(": ")
        if reason in PULL_FAILURES:
            return PodState(False, "ImagePullFailed", detail)
        if reason in CRASHES:
            return _failed(pod, container.get("name"), "ContainerCrashed", detail)
        terminated = (container.get("state") or {}).get("terminated") or {}
        if terminated and terminated.get("exitCode", 0) != 0:
            # the last line of its termination message: the stack install says there why it
            # refused the image (pod/stack_install.py)
            said = ([line for line in str(terminated.get("message") or "").splitlines() if line.strip()] or [""])[-1]
            return _failed(pod, container.get("name"),
                           "ContainerCrashed" if container.get("name") != "stack" else "StackInstallFailed",
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
