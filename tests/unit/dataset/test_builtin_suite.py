"""The repository's tasks/ directory loads as the ten-task suite with the [buzz] data the harness needs."""

from __future__ import annotations

from pathlib import Path

import pytest
from buzz_operator.dataset import (
    TASKS_DIR_ENV,
    DirectoryEntry,
    ScriptedMessage,
    Task,
    TaskError,
    builtin_dataset_path,
    load_dataset,
)

NATIVE = (
    "ambiguous-user-mention",
    "create-channel-invite-users",
    "cross-thread-requests",
    "interleaved-agent-reports",
    "multiline-message",
    "narrative-agent-names",
    "read-named-path-outside-workspace",
    "reply-to-thread",
    "user-mention",
)
# As Block's task_fixtures.py declares them (block/buzz #6448); every other task has none.
USER_DISPLAY_NAMES = {
    "user-mention": "John Vincent Doe",
    "multiline-message": "Eleanor June Brooks",
    "narrative-agent-names": "Maya Elise Chen",
    "interleaved-agent-reports": "Nora Isabel Grant",
    "cross-thread-requests": "Priya Simone Patel",
    "ambiguous-user-mention": "Olivia Grace Park",
}


@pytest.fixture(scope="module")
def suite() -> dict[str, Task]:
    return {task.name: task for task in load_dataset(builtin_dataset_path())}


def test_suite_has_the_ten_tasks_sorted() -> None:
    names = [task.name for task in load_dataset(builtin_dataset_path())]
    assert names == sorted([*NATIVE, "hello-file"])
    assert len(names) == 10


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


def test_user_display_names(suite: dict[str, Task]) -> None:
    assert {name: task.buzz.user_display_name for name, task in suite.items()} == {
        name: USER_DISPLAY_NAMES.get(name) for name in suite
    }


def test_create_channel_declares_directory_and_observed_channel(suite: dict[str, Task]) -> None:
    buzz = suite["create-channel-invite-users"].buzz
    assert buzz.observe_channel_names == ["fix-pr-1234"]
    expected = [DirectoryEntry(name=f"benchmark-user-{n:02d}", role="user") for n in range(1, 51)]
    expected += [DirectoryEntry(name=f"benchmark-bot-{n:02d}", role="bot") for n in range(1, 11)]
    assert buzz.directory == expected
    assert all(entry.identity_id == entry.name and entry.about is None for entry in buzz.directory)
    assert not any(entry.channel_member for entry in buzz.directory)
    others = [t for n, t in suite.items() if n != "create-channel-invite-users"]
    assert all(not task.buzz.observe_channel_names for task in others)


def test_narrative_agent_names_seeds_two_channel_bots(suite: dict[str, Task]) -> None:
    assert suite["narrative-agent-names"].buzz.directory == [
        DirectoryEntry(name="Aurora Audit Bot", role="bot", channel_member=True),
        DirectoryEntry(name="Beacon Deploy Bot", role="bot", channel_member=True),
    ]
    assert suite["narrative-agent-names"].buzz.scripted_messages == []


def test_interleaved_agent_reports_seeds_three_reporters_and_their_reports(suite: dict[str, Task]) -> None:
    buzz = suite["interleaved-agent-reports"].buzz
    reporters = ["Ledger Scout", "Risk Sentinel", "Ops Forecaster"]
    assert buzz.directory == [
        DirectoryEntry(name=name, role="bot", channel_member=True) for name in reporters
    ]
    assert [entry.identity_id for entry in buzz.directory] == reporters
    assert buzz.scripted_messages == [
        ScriptedMessage(
            label="ledger-report",
            actor="Ledger Scout",
            content="@{orchestrator} Ledger report: North is 17 and South is 23. "
            "Use both values in the requested synthesis.",
            reply_to_task=True,
        ),
        ScriptedMessage(
            label="risk-report",
            actor="Risk Sentinel",
            content="@{orchestrator} Risk report: subtract a reserve of 11 before "
            "applying the operations multiplier.",
            reply_to_task=True,
        ),
        ScriptedMessage(
            label="operations-report",
            actor="Ops Forecaster",
            content="@{orchestrator} Operations report: the final multiplier is 3.",
            reply_to_task=True,
        ),
    ]
    assert all(message.mention_orchestrator for message in buzz.scripted_messages)


def test_cross_thread_requests_scripts_the_beta_request_as_the_user(suite: dict[str, Task]) -> None:
    buzz = suite["cross-thread-requests"].buzz
    assert buzz.directory == []
    # A second top-level request: not a reply to the task, but it does mention the orchestrator.
    assert buzz.scripted_messages == [
        ScriptedMessage(
            label="beta-request",
            actor="user",
            content="@{orchestrator} BETA request: calculate (84 / 7) + 29. "
            "Reply with the BETA result, labelled BETA.",
        )
    ]
    (beta,) = buzz.scripted_messages
    assert not beta.reply_to_task and beta.mention_orchestrator


def test_ambiguous_user_mention_seeds_twins_apart_by_identity_id(suite: dict[str, Task]) -> None:
    buzz = suite["ambiguous-user-mention"].buzz
    assert buzz.directory == [
        DirectoryEntry(
            name="Taylor Morgan Lee",
            role="user",
            identity_id="taylor-release-captain",
            about="Release captain. Routing code ORCHID-72.",
            channel_member=True,
        ),
        DirectoryEntry(
            name="Taylor Morgan Lee",
            role="user",
            identity_id="taylor-observer",
            about="Compliance observer. Routing code COBALT-19.",
            channel_member=True,
        ),
    ]
    assert buzz.scripted_messages == []


def test_only_the_declaring_tasks_seed_a_directory_or_script_messages(suite: dict[str, Task]) -> None:
    with_directory = {name for name, task in suite.items() if task.buzz.directory}
    assert with_directory == {
        "create-channel-invite-users",
        "narrative-agent-names",
        "interleaved-agent-reports",
        "ambiguous-user-mention",
    }
    scripted = {name for name, task in suite.items() if task.buzz.scripted_messages}
    assert scripted == {"interleaved-agent-reports", "cross-thread-requests"}


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
