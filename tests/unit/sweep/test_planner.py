"""Trial names and labels are deterministic, DNS-valid and unique across tasks and attempts."""

from __future__ import annotations

import hashlib
import uuid

import pytest
from buzz_operator.api.naming import is_dns_label, is_label_value
from buzz_operator.api.trial_names import TRIAL_NAME_MAX, relay_trial_id
from buzz_operator.sweep.planner import Existing, plan_missing, plan_trials, trial_name
from hypothesis import given
from hypothesis import strategies as st

HASH = "ab" * 32


def test_name_is_sweep_plus_hash_of_condition_task_attempt() -> None:
    digest = hashlib.sha256(f"{HASH}\0reply-to-thread\x002".encode()).hexdigest()
    assert trial_name("demo-oracle", HASH, "reply-to-thread", 2) == f"demo-oracle-{digest[:10]}"


def test_plan_is_attempt_major_with_labels_and_relay_ids() -> None:
    planned = plan_trials("demo-oracle", "uid-1", HASH, ["user-mention", "reply-to-thread"], 2)
    assert [(p.task, p.attempt) for p in planned] == [
        ("user-mention", 1),
        ("reply-to-thread", 1),
        ("user-mention", 2),
        ("reply-to-thread", 2),
    ]
    first = planned[0]
    assert first.name == trial_name("demo-oracle", HASH, "user-mention", 1)
    assert first.sweep == "demo-oracle"
    assert first.labels == {
        "bench.buzz.dev/sweep": "demo-oracle",
        "bench.buzz.dev/task": "user-mention",
        "bench.buzz.dev/attempt": "1",
        "bench.buzz.dev/condition": HASH[:16],
        "app.kubernetes.io/managed-by": "buzz-operator",
    }
    assert first.trial_id == relay_trial_id("uid-1", first.name, 0)
    assert uuid.UUID(first.trial_id).version == 5


def test_same_condition_task_attempt_share_a_suffix_across_sweeps() -> None:
    one = trial_name("sweep-a", HASH, "t", 1)
    two = trial_name("sweep-b", HASH, "t", 1)
    assert one.rsplit("-", 1)[1] == two.rsplit("-", 1)[1]


def test_long_or_dotted_sweep_names_are_shortened_with_a_hash() -> None:
    name = trial_name("My.Sweep." + "x" * 100, HASH, "t", 1)
    assert is_dns_label(name) and len(name) <= TRIAL_NAME_MAX
    assert name != trial_name("My.Sweep." + "x" * 99 + "y", HASH, "t", 1)


@pytest.mark.parametrize(
    ("tasks", "attempts", "message"),
    [
        (["a", "a"], 1, "listed twice"),
        ([""], 1, "must not be empty"),
        (["a"], 0, "attempts must be >= 1"),
    ],
)
def test_bad_plans_are_refused(tasks: list[str], attempts: int, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        plan_trials("s", "uid", HASH, tasks, attempts)


_sweeps = st.from_regex(r"[a-z0-9]([a-z0-9.-]{0,120}[a-z0-9])?", fullmatch=True)
_tasks = st.lists(st.text(min_size=1, max_size=70), min_size=1, max_size=8, unique=True)


@given(_sweeps, _tasks, st.integers(1, 5))
def test_names_are_deterministic_valid_and_unique(sweep: str, tasks: list[str], attempts: int) -> None:
    planned = plan_trials(sweep, "uid", HASH, tasks, attempts)
    again = plan_trials(sweep, "uid", HASH, tasks, attempts)
    assert planned == again
    names = [p.name for p in planned]
    assert len(set(names)) == len(tasks) * attempts
    for trial in planned:
        assert is_dns_label(trial.name) and len(trial.name) <= TRIAL_NAME_MAX
        assert all(is_label_value(value) for value in trial.labels.values())
    assert len({p.trial_id for p in planned}) == len(planned)


@given(_sweeps, _sweeps, st.text(min_size=1, max_size=20))
def test_different_sweeps_never_share_trial_names(first: str, second: str, task: str) -> None:
    if first != second:
        assert trial_name(first, HASH, task, 1) != trial_name(second, HASH, task, 1)


@given(
    tasks=st.lists(st.text("abcdefgh", min_size=1, max_size=3), min_size=1, max_size=5, unique=True),
    attempts=st.integers(1, 6),
    existing_bits=st.integers(0, 2**30 - 1),
    limit=st.integers(0, 40),
)
def test_missing_is_the_plan_without_existing_pairs_named_up_to_the_limit(
    tasks: list[str], attempts: int, existing_bits: int, limit: int
) -> None:
    full = plan_trials("demo", "uid-1", HASH, tasks, attempts)
    existing = {(p.task, p.attempt) for i, p in enumerate(full) if existing_bits >> i & 1}
    missing = plan_missing("demo", "uid-1", HASH, tasks, attempts, existing, limit)
    expected = [p for p in full if (p.task, p.attempt) not in existing]
    assert missing.count == len(expected)
    assert missing.first == expected[:limit]  # same names, relay ids and labels, in plan order
    # the reconcile's byte-a-trial marks answer as the set does, pairs outside the plan ignored
    marks = Existing(tasks, attempts)
    for task, attempt in [*existing, ("not-a-task", 1), (tasks[0], 0), (tasks[0], attempts + 1)]:
        marks.add(task, attempt)
    assert plan_missing("demo", "uid-1", HASH, tasks, attempts, marks, limit) == missing
    assert {(p.task, p.attempt) for p in full if (p.task, p.attempt) in marks} == existing
    assert ("not-a-task", 1) not in marks and (tasks[0], 0) not in marks and "x" not in marks


def test_missing_checks_its_input_as_the_plan_does() -> None:
    with pytest.raises(ValueError, match="listed twice"):
        plan_missing("demo", "uid-1", HASH, ["a", "a"], 1, set(), 5)
