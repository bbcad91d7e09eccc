"""Where the operator uses what it reads from task.toml (docs/task-toml.md): the task container's
resources, the agents' and verifier's deadlines, the verifier's env, the grading network and the
image repository."""

from __future__ import annotations

import shlex
from pathlib import Path
from types import SimpleNamespace

from buzz_operator.api.trial import TrialDeadlines
from buzz_operator.dataset import load_task
from buzz_operator.pod.shell import run_verifier
from buzz_operator.pod.trial_pod import grading_network
from buzz_operator.sweep.trialspec import trial_resources
from buzz_operator.trial.deadlines import MANIFEST, TASK, step_deadlines

from tests.unit.dataset.task_factory import make_task


def _manifest(cpus: int | None = None, memory_mb: int | None = None, storage_mb: int | None = None) -> object:
    return SimpleNamespace(environment=SimpleNamespace(override_cpus=cpus, override_memory_mb=memory_mb,
                                                       override_storage_mb=storage_mb))  # fmt: skip


def test_unset_resources_get_the_operators_defaults(tmp_path: Path) -> None:
    resources = trial_resources(load_task(make_task(tmp_path)), _manifest())  # type: ignore[arg-type]
    assert (resources.cpus, resources.memory_mb, resources.storage_mb) == (1.0, 2048, 10240)


def test_legacy_sizes_reach_the_pod_and_the_condition_still_overrides(tmp_path: Path) -> None:
    task = load_task(make_task(tmp_path, toml='[environment]\ncpus = 2\nmemory = "4G"\nstorage = "10G"\n'))
    resources = trial_resources(task, _manifest())  # type: ignore[arg-type]
    assert (resources.cpus, resources.memory_mb, resources.storage_mb) == (2.0, 4096, 10240)
    overridden = trial_resources(task, _manifest(cpus=4, memory_mb=1024))  # type: ignore[arg-type]
    assert (overridden.cpus, overridden.memory_mb, overridden.storage_mb) == (4, 1024, 10240)


def _deadlines(agent: float | None, budget: int, multiplier: float = 1.0) -> TrialDeadlines:
    return step_deadlines(agent_timeout_sec=agent, verifier_timeout_sec=30.0, build_timeout_sec=600.0,
                          manifest_timeout_seconds=budget, multiplier=multiplier)  # fmt: skip


def test_an_unset_agent_timeout_leaves_the_condition_budget_alone() -> None:
    unset = _deadlines(None, 900, multiplier=2.0)
    assert (unset.agent_seconds, unset.agent_source) == (900, MANIFEST)  # the budget is never scaled
    limited = _deadlines(300.0, 900, multiplier=2.0)
    assert (limited.agent_seconds, limited.agent_source) == (600, TASK)
    assert _deadlines(300.0, 100).agent_source == MANIFEST


def test_verifier_env_is_set_on_the_verifier_command_only_when_written(tmp_path: Path) -> None:
    assert run_verifier(30) == run_verifier(30, {})
    assert "env " not in run_verifier(30).split("&&")[1].split("bash")[0]
    task = load_task(make_task(tmp_path, toml='[verifier]\nenv = { MODE = "strict mode", Q = "it\'s $HOME" }\n'))
    command = run_verifier(30, task.config.verifier.env)
    words = shlex.split(command.split("&& ", 1)[1])
    # env(1) with each assignment one word, quoted so the shell expands nothing
    assert words[:4] == ["timeout", "-k", "5", "30"] and words[4:7] == ["env", "MODE=strict mode", "Q=it's $HOME"]


def test_the_grading_network_follows_allow_internet(tmp_path: Path) -> None:
    task = load_task(make_task(tmp_path, toml="[environment]\nallow_internet = false\n"))
    assert grading_network(task.config) == "no-network"


def test_the_image_repository_is_the_short_name(tmp_path: Path) -> None:
    task = load_task(make_task(tmp_path, name="folder", toml='[task]\nname = "acme/log-parse"\n'))
    assert task.image_ref("reg", "ds") == f"reg/ds-log-parse:{task.env_digest[:16]}"
