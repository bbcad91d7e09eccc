"""A trial's compose services, as the sweep planned them from the task's
`environment/docker-compose.yaml` (dataset/compose.py; docs/task-toml.md#compose).

Each service is a container of the trial pod beside the task container: started before it, in the
compose file's depends_on order, and — where the service has a healthcheck — healthy before it,
as `docker compose up --wait` has them for Harbor. Every name resolves to the pod itself.
"""

from __future__ import annotations

from pydantic import Field

from buzz_operator.api.common import SpecModel

DNS_LABEL = r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$"
MAX_SERVICES = 16


class ServiceProbe(SpecModel):
    """The service's compose healthcheck, run as the container's startup probe."""

    command: list[str] = Field(min_length=1, description="The healthcheck command (exec form).")
    period_seconds: int = Field(ge=1, description="healthcheck interval.")
    timeout_seconds: int = Field(ge=1, description="healthcheck timeout.")
    failure_threshold: int = Field(ge=1, description="retries, plus the tries start_period forgives.")


class VolumeMount(SpecModel):
    """A compose named volume (an emptyDir of the pod) mounted at ``path``."""

    volume: str = Field(min_length=1, description="The compose volume's name.")
    path: str = Field(pattern=r"^/", description="Where the container sees it.")
    read_only: bool = Field(False, description="Mounted read-only (:ro).")


class TaskService(SpecModel):
    """One compose service: its image (by digest where the sweep pinned it) and how it runs."""

    name: str = Field(pattern=DNS_LABEL, description="The service name: the container's, and a host name.")
    image: str = Field(min_length=1, description="The service's image.")
    command: list[str] | None = Field(None, description="compose entrypoint (the container's command).")
    args: list[str] | None = Field(None, description="compose command (the container's args).")
    env: dict[str, str] | None = Field(None, description="compose environment.")
    working_dir: str | None = Field(None, pattern=r"^/", description="compose working_dir.")
    run_as_user: int | None = Field(None, ge=0, description="compose user's uid.")
    run_as_group: int | None = Field(None, ge=0, description="compose user's gid.")
    cpus: float = Field(gt=0, le=512, description="CPU request and limit (deploy.resources.limits.cpus).")
    memory_mb: int = Field(gt=0, alias="memoryMB", description="Memory request and limit, MiB.")
    probe: ServiceProbe | None = Field(None, description="The compose healthcheck as a startup probe.")
    mounts: list[VolumeMount] | None = Field(None, description="Named volumes the service mounts.")


class TaskCompose(SpecModel):
    """The services, the pod's named volumes, what the task container mounts, and the host names
    the pod resolves (every service's, `main` and its aliases to 127.0.0.1; extra_hosts as written)."""

    services: list[TaskService] = Field(default_factory=list, max_length=MAX_SERVICES,
                                        description="In start order.")
    volumes: list[str] | None = Field(None, description="compose named volumes, each an emptyDir.")
    task_mounts: list[VolumeMount] | None = Field(None, description="Named volumes the task container mounts.")
    host_aliases: dict[str, str] = Field(default_factory=dict,
                                         description="Host name → IP every container of the pod resolves.")
