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


def test_images_names_what_provides_each(runner: CliRunner, tmp_path: Path) -> None:
    pinned = tmp_path / "tb" / "pinned-task"
    (pinned / "tests").mkdir(parents=True)
    (pinned / "instruction.md").write_text("do it\n")
    (pinned / "tests" / "test.sh").write_text("exit 0\n")
    (pinned / "task.toml").write_text('[environment]\ndocker_image = "ghcr.io/org/tb-pinned:1.0"\n')
    result = runner.invoke(app, ["dataset", "images", str(TASKS), "--name", "builtin", "-o", "json"])
    assert result.exit_code == 0, result.stderr
    rows = {row["task"]: row for row in json.loads(result.stdout)}
    hello = rows["hello-file"]
    assert hello["provided_by"] == "environment/Dockerfile"
    assert hello["context"] == str((TASKS / "hello-file" / "environment").resolve())
    assert hello["image"].startswith("docker.io/buzz-tasks/builtin-hello-file:")
    other = runner.invoke(app, ["dataset", "images", str(tmp_path / "tb"), "--name", "tb",
                                "--registry", "registry.example/x", "-o", "json"])
    (row,) = json.loads(other.stdout)
    assert row == {"task": "pinned-task", "image": "ghcr.io/org/tb-pinned:1.0",
                   "provided_by": "environment.docker_image", "context": None}


def test_images_refuses_a_bad_task(runner: CliRunner, tmp_path: Path) -> None:
    broken = tmp_path / "broken" / "t1"
    (broken / "tests").mkdir(parents=True)
    (broken / "tests" / "test.sh").write_text("exit 0\n")
    (broken / "instruction.md").write_text("x\n")
    (broken / "task.toml").write_text("[environment]\n")
    result = runner.invoke(app, ["dataset", "images", str(tmp_path / "broken"), "--name", "b"])
    assert result.exit_code == 1 and "environment/Dockerfile" in result.stderr


def test_images_lists_each_compose_service(runner: CliRunner, tmp_path: Path) -> None:
    task = tmp_path / "tb" / "with-db"
    (task / "tests").mkdir(parents=True)
    (task / "environment" / "api").mkdir(parents=True)
    (task / "instruction.md").write_text("do it\n")
    (task / "tests" / "test.sh").write_text("exit 0\n")
    (task / "task.toml").write_text('[environment]\ndocker_image = "ghcr.io/org/tb-main:1.0"\n')
    (task / "environment" / "api" / "Dockerfile").write_text("FROM python:3.12-slim\n")
    (task / "environment" / "docker-compose.yaml").write_text(
        "services:\n  db:\n    image: postgres:16\n  api:\n    build: ./api\n")
    result = runner.invoke(app, ["dataset", "images", str(tmp_path / "tb"), "--name", "tb",
                                 "--registry", "registry.example/x", "-o", "json"])
    assert result.exit_code == 0, result.stderr
    rows = {row["task"]: row for row in json.loads(result.stdout)}
    assert rows["with-db/db"] == {"task": "with-db/db", "image": "postgres:16", "provided_by": "compose image",
                                  "context": None}
    api = rows["with-db/api"]
    assert api["provided_by"] == "compose build" and api["context"] == str((task / "environment" / "api").resolve())
    assert api["image"].startswith("registry.example/x/tb-with-db-api:")
