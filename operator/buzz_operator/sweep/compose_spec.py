"""A task's compose file as its trials' spec.compose (api/compose.py): each service with the
image it runs, the order and probes it starts with, and the names the pod resolves
(docs/task-toml.md#compose). Pure: the task was read and checked by dataset/compose.py."""

from __future__ import annotations

from buzz_operator.api.compose import ServiceProbe, TaskCompose, TaskService, VolumeMount
from buzz_operator.dataset.compose import Mount, Service
from buzz_operator.dataset.task import Task

LOOPBACK = "127.0.0.1"


def _mounts(mounts: tuple[Mount, ...]) -> list[VolumeMount] | None:
    return [VolumeMount(volume=m.volume, path=m.path, read_only=m.read_only) for m in mounts] or None


def _service(task: Task, service: Service, registry: str, dataset: str) -> TaskService:
    health = service.healthcheck
    return TaskService(
        name=service.name,
        image=task.service_image_ref(service, registry, dataset),
        command=list(service.entrypoint) if service.entrypoint is not None else None,
        args=list(service.command) if service.command is not None else None,
        env=dict(service.environment) or None,
        working_dir=service.working_dir,
        run_as_user=service.user[0] if service.user else None,
        run_as_group=service.user[1] if service.user else None,
        cpus=service.cpus,
        memory_mb=service.memory_mb,
        probe=None if health is None else ServiceProbe(command=list(health.command), period_seconds=health.interval_s,
                                                       timeout_seconds=health.timeout_s,
                                                       failure_threshold=health.failures),
        mounts=_mounts(service.mounts),
    )


def task_compose(task: Task, registry: str, dataset: str) -> TaskCompose | None:
    """None for a task without a compose file, so its trials' spec is what it always was."""
    compose = task.compose
    if compose is None:
        return None
    names = ["main", *compose.main_aliases, *(name for s in compose.services for name in (s.name, *s.aliases))]
    return TaskCompose(
        services=[_service(task, service, registry, dataset) for service in compose.services],
        volumes=list(compose.volumes) or None,
        task_mounts=_mounts(compose.main_mounts),
        host_aliases={**dict.fromkeys(names, LOOPBACK), **compose.extra_hosts},
    )


def task_environment(task: Task) -> dict[str, str] | None:
    """The task container's variables: compose's `main` environment under task.toml's own, as
    Harbor sets task.toml's on every command it runs in `main`."""
    below = dict(task.compose.main_environment) if task.compose is not None else {}
    return {**below, **task.config.environment.env} or None


def task_working_dir(task: Task) -> str | None:
    """task.toml's workdir, else `main`'s compose working_dir."""
    compose_dir = task.compose.main_working_dir if task.compose is not None else None
    return task.config.environment.workdir or compose_dir
