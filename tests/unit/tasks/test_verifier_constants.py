"""Each Buzz-native verifier's constants agree with the fixture its task.toml declares for the
harness: a renamed bot or label in one place and not the other would grade every trial 0."""

from __future__ import annotations

import importlib.util
import tomllib
from types import ModuleType
from typing import Any

import pytest

from tests.unit.tasks.fixture_files import CASE_MODULES
from tests.unit.tasks.runner import TASKS_ROOT

# The tasks from Block's suite (block/buzz #6448), whose verifiers share these constant names.
TASKS = [
    "multiline-message",
    "narrative-agent-names",
    "interleaved-agent-reports",
    "cross-thread-requests",
    "ambiguous-user-mention",
]


def _verifier(task: str) -> ModuleType:
    path = TASKS_ROOT / task / "tests" / "verify.py"
    spec = importlib.util.spec_from_file_location(f"verify_{task.replace('-', '_')}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _buzz(task: str) -> dict[str, Any]:
    return tomllib.loads((TASKS_ROOT / task / "task.toml").read_text(encoding="utf-8"))["buzz"]


@pytest.mark.parametrize("task", TASKS)
def test_verifier_names_its_task_and_reward_dimensions(task: str) -> None:
    verifier = _verifier(task)
    module = next(m for m in CASE_MODULES if task == m.TASK)
    assert task == verifier.TASK_NAME
    assert tuple(verifier.DIMENSIONS) == (*module.REWARD_DIMENSIONS, *module.DIAGNOSTIC_DIMENSIONS)


@pytest.mark.parametrize("task", [*TASKS, "user-mention"])
def test_user_display_name_matches_task_toml(task: str) -> None:
    assert _buzz(task)["user_display_name"] == _verifier(task).USER_DISPLAY_NAME


def test_narrative_bots_are_the_seeded_directory() -> None:
    names = [entry["name"] for entry in _buzz("narrative-agent-names")["directory"]]
    assert list(_verifier("narrative-agent-names").BOT_NAMES) == names


def test_interleaved_reporters_and_labels_are_the_seeded_ones() -> None:
    buzz = _buzz("interleaved-agent-reports")
    verifier = _verifier("interleaved-agent-reports")
    assert list(verifier.REPORTERS) == [entry["name"] for entry in buzz["directory"]]
    assert {message["label"] for message in buzz["scripted_messages"]} == verifier.LABELS
    assert {message["actor"] for message in buzz["scripted_messages"]} == set(verifier.REPORTERS)


def test_cross_thread_beta_label_is_the_scripted_one() -> None:
    (beta,) = _buzz("cross-thread-requests")["scripted_messages"]
    assert beta["label"] == _verifier("cross-thread-requests").BETA_LABEL
    assert beta["actor"] == "user"


def test_ambiguous_twins_are_the_seeded_identity_ids() -> None:
    verifier = _verifier("ambiguous-user-mention")
    entries = {entry["identity_id"]: entry for entry in _buzz("ambiguous-user-mention")["directory"]}
    assert set(entries) == {verifier.TARGET_ID, verifier.OTHER_ID}
    assert "ORCHID-72" in entries[verifier.TARGET_ID]["about"]
    assert "ORCHID-72" not in entries[verifier.OTHER_ID]["about"]
    assert len({entry["name"] for entry in entries.values()}) == 1
