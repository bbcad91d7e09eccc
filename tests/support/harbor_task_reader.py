"""Asks Harbor's own code how it reads task directories (docs/task-toml.md).

Runs in Harbor's virtualenv (hack/harbor.sh), never in the project's: it imports harbor and the
standard library only.

    harbor_task_reader.py DIR [DIR ...]

prints one JSON object per directory, a list, on stdout. Each is either `{"dir", "refused": text}`
when Harbor's `Task` refuses the directory, or `{"dir", "figures": {...}}` with what Harbor
decides for the fields the operator uses, each computed by Harbor's code:
- `name`, `short_name`: `Task.name` and `Task.short_name`;
- the timeouts of `TaskConfig` (`agent_timeout_sec` None = no task limit);
- `cpus`, `memory_mb`, `storage_mb` as `EnvironmentConfig` resolves them (legacy size strings
  included), and what Harbor's GKE environment requests for them (`gke`: its cpu, memory and
  ephemeral-storage requests, None where it requests nothing; `{"refused": text}` where that
  environment refuses the task, as it refuses Windows);
- the network of each phase from Harbor's `resolve_trial_network_plan` (shared verifier, no
  run-specific allowlist): `agent_network` and `verifier_network` as [mode, hosts];
- `docker_image`, `os`, `verifier_env`, `environment_env`, `workdir`, `instruction`.
"""

from __future__ import annotations

import json
import sys
import tempfile
import warnings
from pathlib import Path
from typing import Any

from harbor.environments import gke
from harbor.models.task.task import Task
from harbor.models.task.verifier_mode import resolve_task_verifier_mode
from harbor.models.trial.config import AgentConfig, EnvironmentConfig, VerifierConfig
from harbor.models.trial.paths import TrialPaths
from harbor.trial.network_policy import resolve_trial_network_plan


def _policy(policy: Any) -> list[Any]:
    return [policy.network_mode.value, list(policy.allowed_hosts)]


class _Requests(gke.GKEEnvironment):
    """Harbor's GKE environment, short of checking for a Dockerfile to build: a prebuilt
    docker_image task still gets its resource requests computed by Harbor's code."""

    def _validate_definition(self) -> None:
        return None


def _gke_requests(task: Task, scratch: Path) -> dict[str, Any]:
    """What Harbor's GKE environment would put in the pod's resource requests and limits. Its
    constructor computes them without a Kubernetes client, which it needs only from start() on;
    the venv has no `harbor[gke]` extra, so the import guard is lifted for the constructor."""
    paths = TrialPaths(trial_dir=scratch / "trial")
    paths.mkdir()
    gke._HAS_KUBERNETES = True
    environment = _Requests(
        environment_dir=task.paths.environment_dir, environment_name=task.short_name, session_id="reader",
        trial_paths=paths, task_env_config=task.config.environment.model_copy(deep=True), cluster_name="c",
        region="r", namespace="n", registry_location="l", registry_name="rg", project_id="p",
    )  # fmt: skip
    return {
        "cpu_request": environment.cpu_request, "memory_request": environment.memory_request,
        "ephemeral_storage_request": environment.ephemeral_storage_request,
        "cpu_limit": environment.cpu_limit, "memory_limit": environment.memory_limit,
    }  # fmt: skip


def read(directory: Path) -> dict[str, Any]:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            task = Task(directory)
    except Exception as error:  # Harbor's refusal, whatever its type: the project must refuse too
        return {"dir": str(directory), "refused": f"{type(error).__name__}: {error}"}
    config = task.config
    plan = resolve_trial_network_plan(
        config, AgentConfig(), EnvironmentConfig(), VerifierConfig(), None,
        verifier_mode=resolve_task_verifier_mode(config),
    )  # fmt: skip
    with tempfile.TemporaryDirectory() as scratch:
        try:
            gke = _gke_requests(task, Path(scratch))
        except Exception as error:  # Harbor's Kubernetes environment refuses the task (Windows, …)
            gke = {"refused": f"{type(error).__name__}: {error}"}
    environment = config.environment
    return {
        "dir": str(directory),
        "figures": {
            "name": task.name,
            "short_name": task.short_name,
            "schema_version": config.schema_version,
            "agent_timeout_sec": config.agent.timeout_sec,
            "verifier_timeout_sec": config.verifier.timeout_sec,
            "build_timeout_sec": environment.build_timeout_sec,
            "cpus": environment.cpus,
            "memory_mb": environment.memory_mb,
            "storage_mb": environment.storage_mb,
            "gke": gke,
            "agent_network": _policy(plan.agent_phase),
            "verifier_network": _policy(plan.verifier_phase),
            "docker_image": environment.docker_image,
            "os": environment.os.value,
            "verifier_env": dict(config.verifier.env),
            "environment_env": dict(environment.env),
            "verifier_user": config.verifier.user,
            "agent_user": config.agent.user,
            "workdir": environment.workdir,
            "healthcheck": environment.healthcheck.model_dump() if environment.healthcheck else None,
            "artifacts": [a if isinstance(a, str) else a.model_dump() for a in config.artifacts],
            "instruction": task.instruction,
        },
    }


def main(argv: list[str]) -> int:
    if not argv:
        print("usage: harbor_task_reader.py DIR [DIR ...]", file=sys.stderr)
        return 2
    print(json.dumps([read(Path(arg)) for arg in argv], indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
