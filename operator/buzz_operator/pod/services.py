"""A task's compose services as containers of its trial pod (pure; docs/task-toml.md#compose).

Each service is a native sidecar — an init container with `restartPolicy: Always` — because that
is what `docker compose up --wait` gives Harbor's `main`: the kubelet starts the sidecars one by
one, in the compose file's depends_on order, waits for each one's startup probe (its compose
healthcheck) before the next, and starts the task container only when all of them are up; they
outlive it, and one that stops is started again. They run their own images at the task
container's Baseline level (root allowed, nothing privileged). The pod's network namespace is the
compose network: every service name (and `main`) is an /etc/hosts entry for the pod's own
loopback, so `postgres:5432` reaches the service as it does under Docker. Named volumes are
emptyDirs the containers that name them share.
"""

from __future__ import annotations

import copy
import math
from collections import defaultdict
from typing import Any

from buzz_operator.api.compose import TaskCompose, TaskService, VolumeMount
from buzz_operator.pod.base import TASK_SECURITY_CONTEXT, guaranteed

VOLUME_PREFIX = "compose-"


def volume_name(compose: TaskCompose, volume: str) -> str:
    """The pod volume of a compose volume: compose names allow `_` and capitals, pod volume names
    are DNS labels, so each is named by its place in the file."""
    return f"{VOLUME_PREFIX}{(compose.volumes or []).index(volume)}"


def _cpu(cpus: float) -> str:
    millis = math.ceil(cpus * 1000)
    return str(millis // 1000) if millis % 1000 == 0 else f"{millis}m"


def mounts(compose: TaskCompose, wanted: list[VolumeMount] | None) -> list[dict[str, Any]]:
    return [{"name": volume_name(compose, m.volume), "mountPath": m.path, **({"readOnly": True} if m.read_only else {})}
            for m in wanted or []]


def service_container(compose: TaskCompose, service: TaskService, pull_policy: str) -> dict[str, Any]:
    security = copy.deepcopy(TASK_SECURITY_CONTEXT)
    if service.run_as_user is not None:
        security["runAsUser"] = service.run_as_user
    if service.run_as_group is not None:
        security["runAsGroup"] = service.run_as_group
    container: dict[str, Any] = {
        "name": service.name,
        "image": service.image,
        "imagePullPolicy": pull_policy,
        **({"command": list(service.command)} if service.command is not None else {}),
        **({"args": list(service.args)} if service.args is not None else {}),
        **({"env": [{"name": k, "value": v} for k, v in service.env.items()]} if service.env else {}),
        **({"workingDir": service.working_dir} if service.working_dir else {}),
        "resources": guaranteed({"cpu": _cpu(service.cpus), "memory": f"{service.memory_mb}Mi"}),
        "securityContext": security,
        # a service that cannot start says why in its last log lines, which the failure quotes
        "terminationMessagePolicy": "FallbackToLogsOnError",
        "restartPolicy": "Always",
    }
    if service.probe is not None:
        container["startupProbe"] = {
            "exec": {"command": list(service.probe.command)},
            "periodSeconds": service.probe.period_seconds,
            "timeoutSeconds": service.probe.timeout_seconds,
            "failureThreshold": service.probe.failure_threshold,
        }
    if service.mounts:
        container["volumeMounts"] = mounts(compose, service.mounts)
    return container


def service_containers(compose: TaskCompose | None, pull_policy: str) -> list[dict[str, Any]]:
    """The sidecars, in start order (none without a compose file)."""
    return [] if compose is None else [service_container(compose, s, pull_policy) for s in compose.services]


def service_volumes(compose: TaskCompose | None) -> list[dict[str, Any]]:
    return [] if compose is None else [{"name": volume_name(compose, v), "emptyDir": {}} for v in compose.volumes or []]


def host_aliases(compose: TaskCompose | None) -> list[dict[str, Any]]:
    """The pod's /etc/hosts entries, one per IP, names in the order the file gives them."""
    by_ip: dict[str, list[str]] = defaultdict(list)
    for name, ip in (compose.host_aliases if compose is not None else {}).items():
        by_ip[ip].append(name)
    return [{"ip": ip, "hostnames": names} for ip, names in by_ip.items()]
