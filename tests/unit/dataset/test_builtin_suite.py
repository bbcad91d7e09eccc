"""The repository's tasks/ directory loads as the five-task suite with the [buzz] data the harness needs."""

from __future__ import annotations

from pathlib import Path

import pytest
from buzz_operator.dataset import (
    TASKS_DIR_ENV,
    DirectoryEntry,
    Task,
    TaskError,
    builtin_dataset_path,
    load_dataset,
)

NATIVE = (
    "create-channel-invite-users",
    "read-named-path-outside-workspace",
    "reply-to-thread",
    "user-mention",
)


@pytest.fixture(scope="module")
def suite() -> dict[str, Task]:
    return {task.name: task for task in load_dataset(builtin_dataset_path())}


def test_suite_has_the_five_tasks_sorted() -> None:
    names = [task.name for task in load_dataset(builtin_dataset_path())]
    assert names == ["create-channel-invite-users", "hello-file", *NATIVE[1:]]


@pytest.mark.parametrize("name", NATIVE)
def test_native_tasks_share_the_buzz_native_settings(suite: dict[str, Task], name: str) -> None:
    task = suite[name]
    assert task.config.schema_version == "1.3"
    assert task.config.agent.timeout_sec == 300.0
    assert task.config.verifier.timeout_sec == 30.0
    env = task.config.environment
    assert (env.cpus, env.memory_mb, env.storage_mb, env.network_mode) == (1, 1024, 1024, "public")
    assert task.buzz.native and task.buzz.requires_evidence
    assert task.solution_dir is None
    assert (task.tests_dir / "test.sh").is_file() and (task.tests_dir / "verify.py").is_file()


def test_user_mention_declares_the_three_word_user(suite: dict[str, Task]) -> None:
    assert suite["user-mention"].buzz.user_display_name == "John Vincent Doe"
    others = [t for n, t in suite.items() if n != "user-mention"]
    assert all(task.buzz.user_display_name is None for task in others)


def test_create_channel_declares_directory_and_observed_channel(suite: dict[str, Task]) -> None:
    buzz = suite["create-channel-invite-users"].buzz
    assert buzz.observe_channel_names == ["fix-pr-1234"]
    expected = [DirectoryEntry(name=f"benchmark-user-{n:02d}", role="user") for n in range(1, 51)]
    expected += [DirectoryEntry(name=f"benchmark-bot-{n:02d}", role="bot") for n in range(1, 11)]
    assert buzz.directory == expected
    others = [t for n, t in suite.items() if n != "create-channel-invite-users"]
    assert all(not task.buzz.directory and not task.buzz.observe_channel_names for task in others)


def test_hello_file_is_not_native_and_has_a_solution(suite: dict[str, Task]) -> None:
    task = suite["hello-file"]
    assert not task.buzz.native and not task.buzz.requires_evidence
    assert task.solution_dir is not None and (task.solution_dir / "solve.sh").is_file()


def test_every_dockerfile_takes_its_base_from_a_build_argument(suite: dict[str, Task]) -> None:
    for task in suite.values():
        lines = (task.environment_dir / "Dockerfile").read_text().splitlines()
        code = [line for line in lines if line and not line.startswith("#")]
        assert code[:2] == ["ARG BASE_IMAGE=python:3.12-slim-bookworm", "FROM ${BASE_IMAGE}"], task.name


def test_builtin_path_honours_the_env_override(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(TASKS_DIR_ENV, str(tmp_path))
    assert builtin_dataset_path() == tmp_path


def test_builtin_path_override_must_exist(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(TASKS_DIR_ENV, str(tmp_path / "missing"))
    with pytest.raises(TaskError, match=r"missing.*BUZZ_TASKS_DIR"):
        builtin_dataset_path()


def test_builtin_path_defaults_to_the_checkout(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(TASKS_DIR_ENV, raising=False)
    assert builtin_dataset_path() == Path(__file__).resolve().parents[3] / "tasks"
