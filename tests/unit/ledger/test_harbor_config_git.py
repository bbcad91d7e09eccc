"""config.json of a sweep whose tasks came from git (registry or package datasets): each task is
Harbor's git TaskConfig, and each trial's config and result.json task_id are derived from it."""

from __future__ import annotations

from buzz_operator.ledger.harbor_config import sweep_job_config, task_id, trial_config

URL, SHA = "http://git.example/org/ds.git", "c" * 40
ORIGINS = {"hello-a": {"path": "tasks/hello-a", "git_url": URL, "git_commit_id": SHA, "source": "mini"}}


def job() -> dict[str, object]:
    return sweep_job_config(name="s", namespace="ns", spec={"attempts": 2}, condition="c", condition_hash="h",
                            dataset="mini", tasks=["hello-a", "local"], origins=ORIGINS)


def test_git_tasks_are_listed_as_harbor_records_them() -> None:
    assert job()["tasks"] == [ORIGINS["hello-a"], {"path": "local", "source": "mini"}]


def test_a_trial_of_a_git_task_carries_its_git_entry_and_task_id() -> None:
    config = trial_config(job(), task="hello-a", trial_name="t", sweep="s", condition="c", condition_hash="h", spec={})
    assert config["task"] == ORIGINS["hello-a"]
    assert task_id(config["task"], "hello-a") == {"git_url": URL, "git_commit_id": SHA, "path": "tasks/hello-a"}
    local = trial_config(job(), task="local", trial_name="t", sweep="s", condition="c", condition_hash="h", spec={})
    assert task_id(local["task"], "local") == {"path": "local"}
