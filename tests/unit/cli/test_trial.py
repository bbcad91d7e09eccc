"""buzzctl trial logs|evidence|bundle read from the store alone."""

from __future__ import annotations

import json
from pathlib import Path

from buzz_operator.cli.main import app
from typer.testing import CliRunner


def trial(runner: CliRunner, store: str, *argv: str):
    return runner.invoke(app, ["trial", *argv, "--sweep", "mixed", "--store", store])


def test_logs_of_every_seat_and_of_one(runner: CliRunner, store: str) -> None:
    result = trial(runner, store, "logs", "hello-file-1")
    assert result.exit_code == 0
    headers = [line for line in result.stdout.splitlines() if line.startswith("==> ")]
    assert headers == [
        "==> lead-1.stderr.log <==",
        "==> lead-1.stdout.log <==",
        "==> worker-1.stderr.log <==",
    ]
    assert "goose usage update" in result.stdout
    one = trial(runner, store, "logs", "hello-file-1", "--seat", "worker-1")
    assert one.exit_code == 0 and "lead-1" not in one.stdout
    assert trial(runner, store, "logs", "hello-file-1", "--seat", "nobody").exit_code == 1


def test_evidence_as_a_thread_and_raw(runner: CliRunner, store: str) -> None:
    result = trial(runner, store, "evidence", "reply-to-thread-1")
    assert result.exit_code == 0
    assert "    ↳ [+00:00:03] lead-1 (orchestrator) → @worker-1" in result.stdout.splitlines()
    raw = trial(runner, store, "evidence", "reply-to-thread-1", "--json")
    assert json.loads(raw.stdout)["schema_version"] == 1


def test_bundle_fetches_every_file(runner: CliRunner, store: str, tmp_path: Path) -> None:
    result = trial(runner, store, "bundle", "hello-file-2", str(tmp_path / "b"))
    assert result.exit_code == 0
    assert (tmp_path / "b" / "result.json").is_file() and (
        tmp_path / "b" / "agent/buzz/receipts.jsonl"
    ).is_file()
    assert (tmp_path / "b" / "verifier" / "reward.txt").read_text() == "1.0\n"


def test_unknown_trial_is_a_user_error(runner: CliRunner, store: str) -> None:
    result = trial(runner, store, "logs", "no-such-trial")
    assert result.exit_code == 1 and "no bundle for trial 'no-such-trial'" in result.stderr


def test_without_sweep_the_cluster_is_needed(runner: CliRunner, store: str) -> None:
    assert runner.invoke(app, ["trial", "logs", "hello-file-1", "--store", store]).exit_code == 2
