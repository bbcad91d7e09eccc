"""A task's `environment/docker-compose.yaml`, read as Harbor runs it and checked for one pod
(docs/task-toml.md#compose).

Harbor lays the task's compose file over its own, whose `main` service is the task image kept
alive (`sleep infinity`), and starts the stack with `docker compose up --detach --wait`: every
service running, and healthy where it has a healthcheck, before the agents start; services reach
each other by name on one network. A trial is one pod, so each service other than `main` becomes
a container of the trial pod (pod/services.py): the pod's network namespace is the shared network,
and each service name resolves to the pod's own loopback.

What Kubernetes cannot give a container of a restricted-enough pod (privileges, devices, host
paths, other networks) is refused naming the key; what only matters to Docker's own bookkeeping
(ports published on the host, restart policies, labels) is read and left, since in one pod every
port a service listens on is already reachable at `<service>:<port>`. Pure: reads nothing but the
text it is given, and the directories it is told about.
"""

from __future__ import annotations

import math
import re
import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from buzz_operator.api.compose import MAX_SERVICES

COMPOSE_FILE = "docker-compose.yaml"
# Harbor reads only docker-compose.yaml; the .yml spelling is a file it would silently skip.
IGNORED_COMPOSE_FILE = "docker-compose.yml"
MAIN = "main"
# Names the trial pod already gives its own containers (pod/trial_pod.py).
RESERVED_NAMES = ("task", "stack", "forwarder")
# What a service without limits gets: a pod's containers need requests to be scheduled fairly, and
# requests equal to limits keep the trial's QoS what the task container's own settings make it.
DEFAULT_SERVICE_CPUS = 0.5
DEFAULT_SERVICE_MEMORY_MB = 512
# Docker's healthcheck defaults (compose spec, healthcheck).
HEALTH_INTERVAL_S, HEALTH_TIMEOUT_S, HEALTH_RETRIES = 30, 30, 3

_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$")
_VARIABLE = re.compile(r"\$(?:\$|\{([^}]*)\}|([A-Za-z_][A-Za-z0-9_]*))")
_EXPRESSION = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-?+])(.*))?$", re.S)
_DURATION = re.compile(r"(\d+(?:\.\d+)?)(us|ms|s|m|h)")
_SIZE = re.compile(r"^(\d+(?:\.\d+)?)\s*([bkmg]?)i?b?$", re.IGNORECASE)
_USER = re.compile(r"^(\d+)(?::(\d+))?$")
# Harbor's compose variables (environments/docker/compose_env.py): its own base file uses them to
# build or name `main`, which the trial pod runs from the sweep's image instead.
HARBOR_VARIABLES = frozenset({"MAIN_IMAGE_NAME", "CONTEXT_DIR", "PREBUILT_IMAGE_NAME", "CPUS", "MEMORY",
                              "HOST_AGENT_LOGS_PATH", "ENV_AGENT_LOGS_PATH", "HOST_VERIFIER_LOGS_PATH",
                              "ENV_VERIFIER_LOGS_PATH", "HOST_ARTIFACTS_PATH", "ENV_ARTIFACTS_PATH"})

# Keys a service may carry that change nothing in one pod, and why.
_LEFT = {
    "container_name": "a container's Docker name; the pod's container is named after the service",
    "hostname": "resolves to the pod like the service name",
    "restart": "a service container is restarted whenever it stops",
    "labels": "Docker labels",
    "logging": "Docker's log driver",
    "ports": "every port a service listens on is reachable at <service>:<port> inside the pod",
    "expose": "every port is open inside the pod",
    "pull_policy": "the sweep's imagePullPolicy applies",
    "stop_grace_period": "the pod's grace period applies",
    "stop_signal": "containers stop on SIGTERM",
    "tty": "no terminal is attached",
    "stdin_open": "no terminal is attached",
    "init": "Kubernetes reaps the container's processes",
    "platform": "the node's platform runs the image",
    "shm_size": "the container runtime's /dev/shm",
    "depends_on": "",  # read for the start order
}
# Keys refused, and why (what a container of the trial pod cannot be given).
_REFUSED = {
    "privileged": "privileged containers break the trial namespace's Pod Security level",
    "cap_add": "capabilities beyond the task container's are refused by the pod's security settings",
    "devices": "host devices are not given to trial pods",
    "network_mode": "every service shares the trial pod's network",
    "networks": "every service shares the trial pod's network",
    "pid": "the pod's process namespace is its own",
    "ipc": "the pod's IPC namespace is its own",
    "userns_mode": "user namespaces are the runtime's",
    "security_opt": "the pod's seccomp profile applies",
    "sysctls": "sysctls are not set for trial pods",
    "ulimits": "ulimits are the node's",
    "cgroup_parent": "cgroups are the kubelet's",
    "runtime": "the sweep's runtimeClassName applies to the whole pod",
    "gpus": "accelerators are not supported",
    "secrets": "compose secrets are host files",
    "configs": "compose configs are host files",
    "extends": "extends reads other compose files",
    "env_file": "env_file reads host files; write the variables under environment",
    "tmpfs": "tmpfs mounts are not supported; use a named volume",
    "read_only": "read-only root filesystems are not supported",
    "dns": "the pod's DNS settings apply",
    "dns_search": "the pod's DNS settings apply",
    "links": "every service resolves by name already",
    "external_links": "services outside the trial are not reachable",
    "volumes_from": "use a named volume",
    "scale": "one container per service",
    "group_add": "supplementary groups are not supported",
    "mem_reservation": "write deploy.resources.limits",
    "cpu_shares": "write deploy.resources.limits",
    "cpuset": "CPU pinning is the kubelet's",
}
_MAIN_HARBOR_KEYS = ("build", "image", "command", "pull_policy")  # Harbor's own for `main`


class ComposeError(ValueError):
    """A compose file the operator cannot run as Harbor would; ``field`` is the dotted key."""

    def __init__(self, field: str, reason: str) -> None:
        self.field = field
        self.reason = reason
        super().__init__(f"{field}: {reason}" if field else reason)


@dataclass(frozen=True)
class Healthcheck:
    """A compose healthcheck as a probe: the command, Docker's timings, and how many failures
    in a row end it (start_period's tries are forgiven as Docker forgives them)."""

    command: tuple[str, ...]
    interval_s: int
    timeout_s: int
    failures: int


@dataclass(frozen=True)
class Mount:
    """A named volume at ``path``; ``volume`` is the compose name."""

    volume: str
    path: str
    read_only: bool = False


@dataclass(frozen=True)
class Build:
    """A service built from a directory of environment/ (``context``, relative to it)."""

    context: str
    dockerfile: str = "Dockerfile"


@dataclass(frozen=True)
class Service:
    name: str
    image: str | None
    build: Build | None
    entrypoint: tuple[str, ...] | None
    command: tuple[str, ...] | None
    environment: Mapping[str, str]
    working_dir: str | None
    user: tuple[int, int | None] | None
    cpus: float
    memory_mb: int
    healthcheck: Healthcheck | None
    mounts: tuple[Mount, ...]
    aliases: tuple[str, ...]


@dataclass(frozen=True)
class Compose:
    """Services in start order (depends_on first, then file order), the named volumes, and what
    the file adds to `main`: variables under the task's own, a working directory, mounts, aliases."""

    services: tuple[Service, ...]
    volumes: tuple[str, ...]
    main_environment: Mapping[str, str] = field(default_factory=dict)
    main_working_dir: str | None = None
    main_mounts: tuple[Mount, ...] = ()
    main_aliases: tuple[str, ...] = ()
    extra_hosts: Mapping[str, str] = field(default_factory=dict)


def interpolate(text: str, variables: Mapping[str, str], where: str, *, harbor: bool = False) -> str:
    """Compose's `${VAR}`, `${VAR:-default}`, `${VAR-default}`, `${VAR:?error}` and `$$`, from
    the task's own [environment] env, which Harbor hands to compose. Any other variable Harbor
    would read from the machine running it, which the operator never passes to a trial: refused,
    naming it, unless it has a default. With ``harbor``, Harbor's own variables read as empty (they
    only name `main`'s image, which the sweep decides)."""

    def one(match: re.Match[str]) -> str:
        whole, braced, bare = match.group(0), match.group(1), match.group(2)
        if whole == "$$":
            return "$"
        parsed = _EXPRESSION.match(braced if braced is not None else bare)
        if parsed is None:
            raise ComposeError(where, f"{whole!r} is not a compose variable")
        name, operator, default = parsed.group(1), parsed.group(2) or "", parsed.group(3) or ""
        value = variables.get(name)
        unset = value is None or (operator.startswith(":") and value == "")
        if operator.endswith("-"):
            return interpolate(default, variables, where, harbor=harbor) if unset else str(value)
        if operator.endswith("+"):
            return "" if unset else interpolate(default, variables, where, harbor=harbor)
        if value is not None and not unset:
            return value
        if harbor and name in HARBOR_VARIABLES:
            return ""
        if value is not None and not operator.endswith("?"):
            return value
        raise ComposeError(where, f"variable {name} is not set: Harbor would read it from the machine running the "
                                  "trial, and the operator passes its own environment to no trial; set it in "
                                  "task.toml [environment] env or give it a default (${" + name + ":-value})")

    return _VARIABLE.sub(one, text)


def _interpolated(value: Any, variables: Mapping[str, str], where: str, *, harbor: bool = False) -> Any:
    if isinstance(value, str):
        return interpolate(value, variables, where, harbor=harbor)
    if isinstance(value, list):
        return [_interpolated(item, variables, f"{where}[{i}]", harbor=harbor) for i, item in enumerate(value)]
    if isinstance(value, dict):
        return {key: _interpolated(item, variables, f"{where}.{key}", harbor=harbor) for key, item in value.items()}
    return value


def seconds(value: Any, where: str) -> float:
    """A compose duration ("1m30s", "500ms", "10s") or a number of seconds."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    text = str(value).strip()
    parts = _DURATION.findall(text)
    if not parts or "".join(number + unit for number, unit in parts) != text.replace(" ", ""):
        raise ComposeError(where, f"{value!r} is not a duration (like 10s, 1m30s, 500ms)")
    scale = {"us": 1e-6, "ms": 1e-3, "s": 1, "m": 60, "h": 3600}
    return sum(float(number) * scale[unit] for number, unit in parts)


def megabytes(value: Any, where: str) -> int:
    """A compose byte size ("512m", "1g", "1GB", 268435456) in MiB, rounded up."""
    if isinstance(value, int) and not isinstance(value, bool):
        return max(1, math.ceil(value / 2**20))
    match = _SIZE.match(str(value).strip())
    if not match:
        raise ComposeError(where, f"{value!r} is not a size (like 512m, 1g)")
    number, unit = float(match.group(1)), match.group(2).lower()
    scale = {"": 1, "b": 1, "k": 2**10, "m": 2**20, "g": 2**30}[unit]
    return max(1, math.ceil(number * scale / 2**20))


def _words(value: Any, where: str) -> tuple[str, ...]:
    """Compose's command forms: a list as it is, a string split as a shell would split it."""
    if isinstance(value, str):
        try:
            return tuple(shlex.split(value))
        except ValueError as error:
            raise ComposeError(where, f"cannot split {value!r}: {error}") from error
    if isinstance(value, list) and all(isinstance(item, (str, int, float)) for item in value):
        return tuple(str(item) for item in value)
    raise ComposeError(where, "must be a string or a list of strings")


def _environment(value: Any, where: str) -> dict[str, str]:
    """`environment` as a mapping or a list of NAME=value; a bare NAME (copied from the machine
    running compose) is refused, as the operator passes its own environment to no trial."""
    pairs: dict[str, str] = {}
    if isinstance(value, dict):
        items = [(str(key), item) for key, item in value.items()]
    elif isinstance(value, list):
        items = []
        for entry in value:
            name, sep, rest = str(entry).partition("=")
            items.append((name, rest if sep else None))
    else:
        raise ComposeError(where, "must be a mapping or a list of NAME=value")
    for name, item in items:
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_.-]*", name):
            raise ComposeError(f"{where}.{name}", "is not an environment variable name")
        if item is None:
            raise ComposeError(f"{where}.{name}", "has no value: compose would copy it from the machine running "
                                                  "the trial, and the operator passes its own environment to no trial")
        pairs[name] = "true" if item is True else "false" if item is False else str(item)
    return pairs


def _healthcheck(value: Any, where: str) -> Healthcheck | None:
    if not isinstance(value, dict):
        raise ComposeError(where, "must be a mapping")
    unknown = set(value) - {"test", "interval", "timeout", "retries", "start_period", "start_interval", "disable"}
    if unknown:
        raise ComposeError(f"{where}.{sorted(unknown)[0]}", "is not a healthcheck key")
    test = value.get("test")
    if value.get("disable") is True or test in (["NONE"], None):
        return None
    if isinstance(test, str):
        command: tuple[str, ...] = ("/bin/sh", "-c", test)
    elif isinstance(test, list) and test and test[0] == "CMD" and len(test) > 1:
        command = tuple(str(word) for word in test[1:])
    elif isinstance(test, list) and len(test) == 2 and test[0] == "CMD-SHELL":
        command = ("/bin/sh", "-c", str(test[1]))
    else:
        raise ComposeError(f"{where}.test", "must be a string, [CMD, ...], [CMD-SHELL, command] or [NONE]")
    interval = max(1, math.ceil(seconds(value.get("interval", HEALTH_INTERVAL_S), f"{where}.interval")))
    timeout = max(1, math.ceil(seconds(value.get("timeout", HEALTH_TIMEOUT_S), f"{where}.timeout")))
    retries = value.get("retries", HEALTH_RETRIES)
    if not isinstance(retries, int) or isinstance(retries, bool) or retries < 1:
        raise ComposeError(f"{where}.retries", "must be a whole number of 1 or more")
    # Docker does not count failures during start_period; the probe allows that many more tries
    grace = math.ceil(seconds(value.get("start_period", 0), f"{where}.start_period") / interval)
    return Healthcheck(command, interval, timeout, retries + grace)


def _volume_mounts(value: Any, where: str, volumes: Mapping[str, Any], *, main: bool) -> tuple[Mount, ...]:
    """Named volumes only (each an emptyDir of the pod, shared by every container that mounts
    it). On `main`, Harbor's own log mounts are left: the trial pod has /logs."""
    if not isinstance(value, list):
        raise ComposeError(where, "must be a list")
    mounts: list[Mount] = []
    for i, entry in enumerate(value):
        here = f"{where}[{i}]"
        if isinstance(entry, str):
            source, _, rest = entry.partition(":")
            target, _, mode = rest.partition(":")
            kind = "volume" if source in volumes else "bind" if source else "volume"
            read_only = "ro" in mode.split(",")
        elif isinstance(entry, dict):
            kind, source, target = entry.get("type", "volume"), entry.get("source", ""), entry.get("target", "")
            read_only = bool(entry.get("read_only", False))
        else:
            raise ComposeError(here, "must be a string or a mapping")
        if main and target.rstrip("/") in ("/logs/agent", "/logs/verifier", "/logs/artifacts"):
            continue  # Harbor's legacy log mounts: /logs is the pod's own
        if kind != "volume" or not source:
            raise ComposeError(here, f"{entry!r} is not supported: only named volumes are (a {kind} mount reads the "
                                     "machine running the trial, or leaves the volume unnamed)")
        if source not in volumes:
            raise ComposeError(here, f"volume {source!r} is not declared under the top-level volumes")
        if not str(target).startswith("/"):
            raise ComposeError(here, f"target {target!r} must be an absolute path")
        mounts.append(Mount(source, str(target), read_only))
    return tuple(mounts)


def _user(value: Any, where: str) -> tuple[int, int | None]:
    match = _USER.match(str(value))
    if not match:
        raise ComposeError(where, f"{value!r}: only a numeric uid[:gid] is supported (the pod sets the user by number)")
    return int(match.group(1)), int(match.group(2)) if match.group(2) else None


def _resources(service: Mapping[str, Any], where: str) -> tuple[float, int]:
    cpus: Any = service.get("cpus")
    memory: Any = service.get("mem_limit")
    deploy = service.get("deploy") or {}
    if not isinstance(deploy, dict):
        raise ComposeError(f"{where}.deploy", "must be a mapping")
    unknown = set(deploy) - {"resources", "restart_policy", "labels", "replicas"}
    if unknown:
        raise ComposeError(f"{where}.deploy.{sorted(unknown)[0]}", "is not supported")
    if deploy.get("replicas", 1) != 1:
        raise ComposeError(f"{where}.deploy.replicas", "one container per service")
    resources = deploy.get("resources") or {}
    unknown = set(resources) - {"limits", "reservations"}
    if unknown:
        raise ComposeError(f"{where}.deploy.resources.{sorted(unknown)[0]}", "is not supported")
    limits = resources.get("limits") or {}
    if set(limits) - {"cpus", "memory"}:
        raise ComposeError(f"{where}.deploy.resources.limits", "only cpus and memory are supported")
    reservations = resources.get("reservations") or {}
    if "devices" in reservations:
        raise ComposeError(f"{where}.deploy.resources.reservations.devices", "devices are not supported")
    cpus = limits.get("cpus", cpus)
    memory = limits.get("memory", memory)
    try:
        cpu_value = DEFAULT_SERVICE_CPUS if cpus is None else float(cpus)
    except (TypeError, ValueError):
        raise ComposeError(f"{where}.cpus", f"{cpus!r} is not a number of CPUs") from None
    if cpu_value <= 0:
        raise ComposeError(f"{where}.cpus", "must be more than 0")
    memory_mb = DEFAULT_SERVICE_MEMORY_MB if memory is None else megabytes(memory, f"{where}.memory")
    return cpu_value, memory_mb


def _build(value: Any, where: str, environment_dir: Path) -> Build:
    if isinstance(value, str):
        value = {"context": value}
    if not isinstance(value, dict):
        raise ComposeError(where, "must be a path or a mapping")
    unknown = set(value) - {"context", "dockerfile"}
    if unknown:
        raise ComposeError(f"{where}.{sorted(unknown)[0]}", "is not supported (the context and its Dockerfile are)")
    context = str(value.get("context", "."))
    dockerfile = str(value.get("dockerfile", "Dockerfile"))
    root = environment_dir.resolve()
    directory = (environment_dir / context).resolve()
    if not directory.is_relative_to(root) or not directory.is_dir():
        raise ComposeError(f"{where}.context", f"{context!r} must be a directory inside environment/")
    if not (directory / dockerfile).resolve().is_relative_to(directory) or not (directory / dockerfile).is_file():
        raise ComposeError(f"{where}.dockerfile", f"{dockerfile!r} is not a file of the context {context!r}")
    return Build(directory.relative_to(root).as_posix(), dockerfile)


def _dependencies(value: Any, where: str) -> list[str]:
    if isinstance(value, list):
        return [str(name) for name in value]
    if isinstance(value, dict):
        return [str(name) for name in value]
    raise ComposeError(where, "must be a list or a mapping")


def _check_keys(service: Mapping[str, Any], where: str, allowed: set[str]) -> None:
    for key in service:
        if key in _REFUSED:
            raise ComposeError(f"{where}.{key}", f"is not supported: {_REFUSED[key]}")
        if key not in allowed and key not in _LEFT and not str(key).startswith("x-"):
            raise ComposeError(f"{where}.{key}", "is not supported: not a compose service key the operator knows")


def _own_build(build: Any) -> bool:
    """`main`'s build as Harbor's own file writes it: environment/ (`.` or `${CONTEXT_DIR}`) and
    its Dockerfile — the task's own image, which the sweep already runs."""
    if isinstance(build, str):
        build = {"context": build}
    if not isinstance(build, dict) or set(build) - {"context", "dockerfile"}:
        return False
    return str(build.get("context", ".")).rstrip("/") in ("", ".") and build.get("dockerfile", "Dockerfile") == "Dockerfile"


def _main(raw: Mapping[str, Any], variables: Mapping[str, str], volumes: Mapping[str, Any]) -> dict[str, Any]:
    """What the task's compose adds to Harbor's `main`: its image and command are Harbor's (the
    sweep's task image, kept alive), so a literal one is refused; a healthcheck on `main` would
    test a container that runs nothing but the keep-alive."""
    where = f"services.{MAIN}"
    if not isinstance(raw, dict):
        raise ComposeError(where, "must be a mapping")
    _check_keys(raw, where, {*_MAIN_HARBOR_KEYS, "environment", "working_dir", "volumes", "extra_hosts",
                             "deploy", "cpus", "mem_limit", "healthcheck", "user", "entrypoint"})
    for key in ("healthcheck", "user", "entrypoint"):
        if key in raw:
            raise ComposeError(f"{where}.{key}", "is not supported: " + {
                "healthcheck": "main runs only the keep-alive; write [environment.healthcheck] in task.toml",
                "user": "write [agent] user and [verifier] user in task.toml",
                "entrypoint": "main runs the keep-alive, as in Harbor's own compose file"}[key])
    if "image" in raw and "${" not in str(raw["image"]):
        raise ComposeError(f"{where}.image", "is not supported: main's image is the task's own; write "
                                             "[environment] docker_image")
    if "build" in raw and not _own_build(_interpolated(raw["build"], variables, f"{where}.build", harbor=True)):
        raise ComposeError(f"{where}.build", "is not supported: main is built from environment/ and its Dockerfile, "
                                             "as Harbor's own compose file builds it")
    if "command" in raw and _words(_interpolated(raw["command"], variables, f"{where}.command", harbor=True),
                                   f"{where}.command") not in (("sh", "-c", "sleep infinity"), ("sleep", "infinity")):
        raise ComposeError(f"{where}.command", "is not supported: main runs the keep-alive (sleep infinity), as in "
                                               "Harbor's own compose file")
    for key in ("deploy", "cpus", "mem_limit"):
        if key in raw and "${" not in str(raw[key]):
            raise ComposeError(f"{where}.{key}", "is not supported: main's resources are task.toml's [environment] "
                                                 "cpus and memory_mb")
    kept = {k: v for k, v in raw.items() if k not in (*_MAIN_HARBOR_KEYS, "deploy", "cpus", "mem_limit")}
    if isinstance(kept.get("volumes"), list):  # Harbor's own log mounts, named by its variables: /logs is the pod's
        kept["volumes"] = [v for v in kept["volumes"] if not any(f"{{{name}" in str(v) for name in HARBOR_VARIABLES)]
    main = _interpolated(kept, variables, where, harbor=True)
    if main.get("working_dir") is not None and not str(main["working_dir"]).startswith("/"):
        raise ComposeError(f"{where}.working_dir", "must be an absolute path")
    return {
        "environment": _environment(main["environment"], f"{where}.environment") if "environment" in main else {},
        "working_dir": main.get("working_dir"),
        "mounts": _volume_mounts(main["volumes"], f"{where}.volumes", volumes, main=True) if "volumes" in main else (),
        "aliases": tuple(str(main[key]) for key in ("hostname", "container_name") if main.get(key)),
        "extra_hosts": main.get("extra_hosts"),
    }


def _service(name: str, raw: Any, variables: Mapping[str, str], volumes: Mapping[str, Any],
             environment_dir: Path) -> Service:
    where = f"services.{name}"
    if not isinstance(raw, dict):
        raise ComposeError(where, "must be a mapping")
    if not _DNS_LABEL.fullmatch(name):
        raise ComposeError(where, "a service name must be a DNS label (lowercase letters, digits and -), since it "
                                  "names a container of the trial pod and resolves as a host name")
    if name in RESERVED_NAMES:
        raise ComposeError(where, f"{name!r} names one of the trial pod's own containers ({', '.join(RESERVED_NAMES)})")
    _check_keys(raw, where, {"image", "build", "entrypoint", "command", "environment", "working_dir", "user",
                             "healthcheck", "volumes", "deploy", "cpus", "mem_limit", "extra_hosts", "profiles"})
    service = _interpolated(raw, variables, where)
    if "image" not in service and "build" not in service:
        raise ComposeError(where, "needs an image or a build")
    image = service.get("image")
    if image is not None and (not isinstance(image, str) or not image.strip()):
        raise ComposeError(f"{where}.image", "must be an image reference")
    build = _build(service["build"], f"{where}.build", environment_dir) if "build" in service else None
    working_dir = service.get("working_dir")
    if working_dir is not None and not str(working_dir).startswith("/"):
        raise ComposeError(f"{where}.working_dir", "must be an absolute path")
    cpus, memory_mb = _resources(service, where)
    aliases = tuple(str(service[key]) for key in ("hostname", "container_name") if service.get(key))
    return Service(
        name=name,
        image=image if build is None else None,
        build=build,
        entrypoint=_words(service["entrypoint"], f"{where}.entrypoint") if "entrypoint" in service else None,
        command=_words(service["command"], f"{where}.command") if "command" in service else None,
        environment=_environment(service["environment"], f"{where}.environment") if "environment" in service else {},
        working_dir=str(working_dir) if working_dir is not None else None,
        user=_user(service["user"], f"{where}.user") if "user" in service else None,
        cpus=cpus,
        memory_mb=memory_mb,
        healthcheck=_healthcheck(service["healthcheck"], f"{where}.healthcheck") if "healthcheck" in service else None,
        mounts=_volume_mounts(service["volumes"], f"{where}.volumes", volumes, main=False) if "volumes" in service else (),
        aliases=aliases,
    )


def _extra_hosts(value: Any, where: str) -> dict[str, str]:
    """`extra_hosts` as host → IP (list of "host:ip" / "host=ip", or a mapping)."""
    if value is None:
        return {}
    entries = list(value.items()) if isinstance(value, dict) else []
    if isinstance(value, list):
        for entry in value:
            text = str(entry)
            host, sep, ip = text.partition("=") if "=" in text else text.partition(":")
            if not sep:
                raise ComposeError(where, f"{text!r} is not host:ip")
            entries.append((host, ip))
    elif not isinstance(value, dict):
        raise ComposeError(where, "must be a list or a mapping")
    hosts = {}
    for host, ip in entries:
        ip = str(ip).strip("[]")
        if ip == "host-gateway":
            raise ComposeError(where, f"{host}: host-gateway reaches the machine running the trial")
        hosts[str(host)] = ip
    return hosts


def _start_order(services: dict[str, Service], needs: dict[str, list[str]]) -> list[Service]:
    """depends_on first, otherwise file order; a cycle or an unknown name is refused."""
    order: list[Service] = []
    state: dict[str, str] = {}

    def visit(name: str, path: tuple[str, ...]) -> None:
        if state.get(name) == "done":
            return
        if state.get(name) == "visiting":
            raise ComposeError(f"services.{name}.depends_on", f"depends_on forms a cycle: {' -> '.join((*path, name))}")
        state[name] = "visiting"
        for other in needs[name]:
            if other == MAIN:
                continue  # every service starts before main's keep-alive; see docs/task-toml.md#compose
            if other not in services:
                raise ComposeError(f"services.{name}.depends_on", f"{other!r} is not a service of this file")
            visit(other, (*path, name))
        state[name] = "done"
        order.append(services[name])

    for name in services:
        visit(name, ())
    return order


def parse_compose(text: str, *, task_env: Mapping[str, str], environment_dir: Path) -> Compose:
    """The compose file's services for one pod; ComposeError names the key that cannot be run."""
    try:
        document = yaml.safe_load(text)
    except yaml.YAMLError as error:
        raise ComposeError("", f"malformed YAML: {error}") from error
    if not isinstance(document, dict):
        raise ComposeError("", "must be a mapping with services")
    for key in document:
        if key in ("networks", "secrets", "configs", "include"):
            raise ComposeError(key, "is not supported: " + {"networks": "every service shares the trial pod's network",
                                                            "secrets": "compose secrets are host files",
                                                            "configs": "compose configs are host files",
                                                            "include": "include reads other compose files"}[key])
        if key not in ("version", "name", "services", "volumes") and not str(key).startswith("x-"):
            raise ComposeError(str(key), "is not supported: not a top-level compose key the operator knows")
    raw_services = document.get("services") or {}
    raw_volumes = document.get("volumes") or {}
    if not isinstance(raw_services, dict):
        raise ComposeError("services", "must be a mapping")
    if not isinstance(raw_volumes, dict):
        raise ComposeError("volumes", "must be a mapping")
    for volume, settings in raw_volumes.items():
        if settings and set(settings) - {"name", "labels"}:
            raise ComposeError(f"volumes.{volume}", "a named volume is an empty directory of the pod; drivers, "
                                                    "external volumes and options are not supported")
    main = _main(raw_services.get(MAIN) or {}, task_env, raw_volumes)
    services: dict[str, Service] = {}
    needs: dict[str, list[str]] = {}
    extra_hosts = _extra_hosts(main["extra_hosts"], f"services.{MAIN}.extra_hosts")
    for name, raw in raw_services.items():
        name = str(name)
        if name == MAIN:
            continue
        if isinstance(raw, dict) and raw.get("profiles"):
            continue  # compose starts a service with profiles only when asked for one, and Harbor never asks
        services[name] = _service(name, raw, task_env, raw_volumes, environment_dir)
        needs[name] = _dependencies(raw.get("depends_on", []), f"services.{name}.depends_on")
        extra_hosts.update(_extra_hosts(raw.get("extra_hosts"), f"services.{name}.extra_hosts"))
    if len(services) > MAX_SERVICES:  # refused as the task loads, not when a sweep plans its trials
        raise ComposeError("services", f"has {len(services)} services besides {MAIN}; a trial pod runs at most "
                                       f"{MAX_SERVICES} beside the task")
    names = [MAIN, *services, *main["aliases"], *(a for s in services.values() for a in s.aliases)]
    clash = sorted(set(extra_hosts) & set(names))
    if clash:
        raise ComposeError("extra_hosts", f"{clash[0]!r} names a service of the pod")
    return Compose(
        services=tuple(_start_order(services, needs)),
        volumes=tuple(str(volume) for volume in raw_volumes),
        main_environment=main["environment"],
        main_working_dir=main["working_dir"],
        main_mounts=main["mounts"],
        main_aliases=main["aliases"],
        extra_hosts=extra_hosts,
    )
