"""buzzctl sweep results: every output format, the schema, failures, and the exit codes."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import jsonschema
import pytest
import yaml
from buzz_operator.cli.main import app
from buzz_operator.results import RESULTS_SCHEMA
from buzz_operator.storage import FileStore
from typer.testing import CliRunner

from tests.unit.results.sweep_builder import TrialPlan, build_sweep


def summary(runner: CliRunner, *args: str) -> tuple[int, str, str]:
    result = runner.invoke(app, ["sweep", "results", *args])
    return result.exit_code, result.stdout, result.stderr


def test_json_validates_against_the_schema(runner: CliRunner, store: str) -> None:
    code, out, _ = summary(runner, "mixed", "--store", store, "-o", "json", "--failures")
    assert code == 0
    document = json.loads(out)
    jsonschema.Draft202012Validator(RESULTS_SCHEMA).validate(document)
    row = document["conditions"][0]
    assert row["n"] == 7 and row["flags"][-1] == "clock×2" and len(document["failures"]) == 5


def test_schema_command_prints_the_schema(runner: CliRunner) -> None:
    result = runner.invoke(app, ["sweep", "schema"])
    assert result.exit_code == 0 and json.loads(result.stdout) == RESULTS_SCHEMA


def test_table_has_flags_caveats_and_unfinished(runner: CliRunner, store: str) -> None:
    code, out, _ = summary(runner, "mixed", "--store", store, "--failures")
    assert code == 0
    assert "standin-team" in out and "LAUNCH-FAILED×1" in out and "VERIFIER-BROKEN×1" in out
    assert "1 trial(s) not committed yet" in out and "zero-scoring trials" in out
    assert "WARNING: a ROUND-CAPPED turn" in out
    # the box's own table: every committed trial counted, a rate over its interval per column
    assert "sweep mixed — the box" in out and "failed tries" in out and "[0.00, 0.00]" in out


def test_yaml_and_csv(runner: CliRunner, store: str) -> None:
    code, out, _ = summary(runner, "mixed", "--store", store, "-o", "yaml")
    assert code == 0 and yaml.safe_load(out)["sweep"] == "mixed"
    code, out, _ = summary(runner, "mixed", "--store", store, "-o", "csv")
    rows = list(csv.reader(io.StringIO(out)))
    assert code == 0 and rows[0][0] == "condition" and rows[1][3] == "7"


def test_empty_sweep_exits_zero_with_no_rows(runner: CliRunner, tmp_path: Path) -> None:
    import asyncio

    asyncio.run(FileStore(tmp_path).put("empty/config.json", b'{"spec": {"attempts": 1}}'))
    code, out, _ = summary(runner, "empty", "--store", tmp_path.as_uri(), "-o", "json")
    assert code == 0 and json.loads(out)["conditions"] == []
    code, out, _ = summary(runner, "empty", "--store", tmp_path.as_uri())
    assert code == 0 and "no committed trials yet" in out


def test_half_finished_sweep(runner: CliRunner, tmp_path: Path) -> None:
    build_sweep(tmp_path, "half", [TrialPlan("hello-file", 1), TrialPlan("hello-file", 2, committed=False)])
    code, out, _ = summary(runner, "half", "--store", tmp_path.as_uri(), "-o", "json")
    document = json.loads(out)
    assert code == 0 and document["trials"] == 1 and document["unfinished"] == ["hello-file-2"]


def test_unknown_sweep_is_a_user_error(runner: CliRunner, store: str) -> None:
    code, _, err = summary(runner, "nope", "--store", store)
    assert code == 1 and err.strip() == f"error: no bundles for sweep 'nope' under {store}"


def test_usage_errors_are_user_errors(runner: CliRunner, store: str) -> None:
    assert summary(runner)[0] == 1
    assert summary(runner, "mixed", "--store", store, "-o", "xml")[0] == 1


def test_bad_store_url_is_a_user_error(runner: CliRunner) -> None:
    code, _, err = summary(runner, "mixed", "--store", "ftp://x/y")
    assert code == 1 and "unsupported scheme" in err


def test_unreachable_store_exits_two(runner: CliRunner, monkeypatch: pytest.MonkeyPatch) -> None:
    # port 9 (discard) refuses connections: the S3 client gives up after its retries
    monkeypatch.setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:9")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "x")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "y")
    monkeypatch.setenv("AWS_REGION", "us-east-1")
    code, _, err = summary(runner, "mixed", "--store", "s3://bucket/prefix")
    assert code == 2 and err.startswith("unreachable: ")


def test_without_store_the_cluster_is_asked_and_its_absence_exits_two(runner: CliRunner) -> None:
    code, _, err = summary(runner, "mixed")
    assert code == 2 and "Kubernetes" in err


def test_exit_codes_are_in_the_help(runner: CliRunner) -> None:
    for argv in (
        ["--help"],
        ["sweep", "results", "--help"],
        ["sweep", "new", "--help"],
        ["report", "--help"],
    ):
        text = " ".join(runner.invoke(app, argv).stdout.split())
        assert "0 ok; 1 user error" in text and "2 cluster or object store unreachable" in text, argv


def test_a_trial_without_metadata_or_summary_is_named_by_its_manifest(
    runner: CliRunner, tmp_path: Path
) -> None:
    build_sweep(tmp_path, "lost", [TrialPlan("hello-file", 1, no_agent_result=True)])
    (tmp_path / "lost" / "hello-file-1" / "agent" / "buzz" / "summary.json").unlink()
    code, out, _ = summary(runner, "lost", "--store", tmp_path.as_uri(), "-o", "json")
    (row,) = json.loads(out)["conditions"]
    assert code == 0 and row["condition"] == "standin-team" and row["n"] == 1


def test_table_shows_the_pass_rate_interval_of_the_json(runner: CliRunner, store: str) -> None:
    _, out, _ = summary(runner, "mixed", "--store", store, "-o", "json")
    interval = json.loads(out)["conditions"][0]["statistics"]["pass_rate"]
    _, table, _ = summary(runner, "mixed", "--store", store)
    assert f"[{interval['low']:.2f}, {interval['high']:.2f}]" in table


def test_the_old_name_summary_still_runs_the_command_unlisted(runner: CliRunner, store: str) -> None:
    old = runner.invoke(app, ["sweep", "summary", "mixed", "--store", store, "-o", "json"])
    new = runner.invoke(app, ["sweep", "results", "mixed", "--store", store, "-o", "json"])
    assert old.exit_code == 0 and json.loads(old.stdout) == json.loads(new.stdout)
    listed = " ".join(runner.invoke(app, ["sweep", "--help"]).stdout.split())
    assert " results " in listed and " summary " not in listed
