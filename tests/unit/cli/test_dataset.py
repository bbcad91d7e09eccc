"""buzzctl dataset push|list against a file store, with the repository's own task suite."""

from __future__ import annotations

import json
from pathlib import Path

from buzz_operator.cli.main import app
from typer.testing import CliRunner

TASKS = Path(__file__).resolve().parents[3] / "tasks"


def test_push_then_list(runner: CliRunner, tmp_path: Path) -> None:
    store = (tmp_path / "store").as_uri()
    result = runner.invoke(app, ["dataset", "push", str(TASKS), "--name", "native", "--store", store])
    assert result.exit_code == 0, result.stderr
    assert "prefix: datasets/native" in result.stdout
    assert (tmp_path / "store/datasets/native/hello-file/task.toml").is_file()
    listed = runner.invoke(app, ["dataset", "list", "--store", store, "-o", "json"])
    (entry,) = json.loads(listed.stdout)
    assert (
        entry["name"] == "native" and "hello-file" in entry["tasks"] and "reply-to-thread" in entry["tasks"]
    )


def test_push_one_task_and_refuse_overwrite(runner: CliRunner, tmp_path: Path) -> None:
    store = (tmp_path / "store").as_uri()
    argv = ["dataset", "push", str(TASKS / "hello-file"), "--name", "one", "--store", store]
    assert runner.invoke(app, argv).exit_code == 0
    again = runner.invoke(app, argv)
    assert again.exit_code == 1 and "already exists" in again.stderr


def test_invalid_dataset_and_name(runner: CliRunner, tmp_path: Path) -> None:
    store = (tmp_path / "store").as_uri()
    broken = tmp_path / "broken" / "t1"
    broken.mkdir(parents=True)
    (broken / "task.toml").write_text("not toml [")
    assert (
        runner.invoke(
            app, ["dataset", "push", str(tmp_path / "broken"), "--name", "b", "--store", store]
        ).exit_code
        == 1
    )
    assert (
        runner.invoke(app, ["dataset", "push", str(TASKS), "--name", "a/b", "--store", store]).exit_code == 1
    )
    assert runner.invoke(app, ["dataset", "list", "--store", store]).stdout.startswith("no datasets")
