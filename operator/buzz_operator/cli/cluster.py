"""buzzctl's cluster access: BuzzSweeps, BuzzTrials and their pods through kubernetes_asyncio
(kube/client.py's connect: KUBECONFIG, or the ServiceAccount in a pod).

Every failure to reach or use the API server exits 2; an object that is not there exits 1.
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from kubernetes_asyncio.client.exceptions import ApiException
from kubernetes_asyncio.config import ConfigException

from buzz_operator.api.common import SWEEPS, TRIALS
from buzz_operator.api.labels import SWEEP
from buzz_operator.cli.exits import fail, unreachable
from buzz_operator.inputs.fetch.resolve import DEFAULT_STORAGE_URL, STORAGE_URL_ENV
from buzz_operator.kube import resources
from buzz_operator.kube.client import Kube, connect

# A CLI must not hang on a dead API server: every request gets this long
REQUEST_TIMEOUT = 15.0

T = TypeVar("T")


async def with_kube(work: Callable[[Kube], Awaitable[T]]) -> T:
    """Run ``work`` with a connected client; connection and API failures exit 2."""
    try:
        kube = await connect()
    except (ConfigException, OSError, ValueError) as error:
        unreachable(f"cannot load a Kubernetes configuration: {error}")
    try:
        async with kube:
            return await work(kube)
    except ApiException as error:
        unreachable(f"Kubernetes API: {error.status} {error.reason}")
    except (TimeoutError, OSError) as error:
        unreachable(f"Kubernetes API server: {error or type(error).__name__}")


async def get_sweep(kube: Kube, namespace: str, name: str) -> dict[str, Any]:
    sweep = await resources.get(kube, SWEEPS, namespace, name, timeout_s=REQUEST_TIMEOUT)
    if sweep is None:
        fail(f"no BuzzSweep {name!r} in namespace {namespace!r}")
    return sweep


async def list_trials(kube: Kube, namespace: str, sweep: str) -> list[dict[str, Any]]:
    return await resources.list_objects(kube, TRIALS, namespace, selector=f"{SWEEP}={sweep}",
                                        timeout_s=REQUEST_TIMEOUT)


async def get_trial(kube: Kube, namespace: str, name: str) -> dict[str, Any] | None:
    return await resources.get(kube, TRIALS, namespace, name, timeout_s=REQUEST_TIMEOUT)


async def pod_waiting_reason(kube: Kube, namespace: str, pod: str) -> str | None:
    """Why a trial's pod is not running yet: PodScheduled=False (Unschedulable and its message)
    or a container waiting reason (ImagePullBackOff…); None when it is running or gone."""
    try:
        body = await kube.core.read_namespaced_pod(pod, namespace, _request_timeout=REQUEST_TIMEOUT)
    except ApiException as error:
        if error.status == 404:
            return None
        raise
    status = body.status
    for condition in status.conditions or []:
        if condition.type == "PodScheduled" and condition.status == "False":
            return f"{condition.reason}: {condition.message or ''}".strip(": ")
    for container in [*(status.init_container_statuses or []), *(status.container_statuses or [])]:
        waiting = container.state.waiting if container.state else None
        if waiting and waiting.reason not in (None, "ContainerCreating", "PodInitializing"):
            return f"{container.name} {waiting.reason}"
    return None


async def sweep_store_url(namespace: str, sweep: str) -> str:
    """The store a sweep writes to, from its spec (the operator's default when unset)."""
    body = await with_kube(lambda kube: get_sweep(kube, namespace, sweep))
    url = ((body.get("spec") or {}).get("storage") or {}).get("url")
    return str(url or os.environ.get(STORAGE_URL_ENV) or DEFAULT_STORAGE_URL)


# While a trial is in these phases its pod holds the seats' logs; later they are in the bundle.
LIVE_PHASES = frozenset({"Launching", "Running", "Collecting", "Grading", "Bundling"})
TASK_CONTAINER = "task"


async def live_seat_logs(kube: Kube, namespace: str, trial: dict[str, Any]) -> tuple[str, dict[str, bytes]] | None:
    """(pod, the seats' log files by name) read from the trial's pod while it runs; None when
    the trial has no live pod (not started, finished, or its pod already gone)."""
    from buzz_operator.condition.paths import REMOTE_LOGS
    from buzz_operator.kube import exec as kexec
    from buzz_operator.kube import tar

    status = trial.get("status") or {}
    pod = status.get("pod")
    if status.get("phase") not in LIVE_PHASES or not pod:
        return None
    try:
        files = await tar.download(kube, namespace, pod, TASK_CONTAINER, REMOTE_LOGS, timeout_s=REQUEST_TIMEOUT)
    except ApiException as error:
        if error.status in (400, 404):  # the pod is gone or its container no longer runs
            return None
        raise
    except (tar.TarError, kexec.ExecError):  # the pod went away under the exec: read the bundle
        return None
    return pod, files
