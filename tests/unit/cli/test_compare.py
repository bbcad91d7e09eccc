"""buzzctl compare and the comparison report over sweeps built with the project's own code,
from the store alone: schema-valid JSON, the table, lock.json's digests refusing or warning."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import jsonschema
import pytest
from buzz_operator.cli.main import app
from buzz_operator.results import COMPARE_SCHEMA, RESULTS_SCHEMA
from typer.testing import CliRunner

from tests.unit.results.sweep_builder import TrialPlan, build_sweep

TASKS = ("reply-to-thread", "user-mention", "hello-file")


def _plans(missed: set[tuple[str, int]]) -> list[TrialPlan]:
    plans = []
    for task in TASKS:
        for attempt in (1, 2):
            ok = (task, attempt) not in missed
            reward = {"reward": float(ok), "reply_to_thread": float(ok), "evidence_complete": 1.0}
            plans.append(TrialPlan(task, attempt, reward=reward if task != "hello-file" else float(ok)))
    return plans


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("compare-store")
    build_sweep(root, "oracle", _plans(set()), spec={"attempts": 2})
    build_sweep(
        root,
        "naive",
        _plans({("reply-to-thread", 1), ("reply-to-thread", 2), ("user-mention", 2)}),
        spec={"attempts": 2},
    )
    return root


def _lock(root: Path, sweep: str, lock: dict) -> None:
    (root / sweep / "lock.json").write_text(json.dumps(lock))


def test_compare_json_is_schema_valid(runner: CliRunner, root: Path) -> None:
    result = runner.invoke(app, ["compare", "oracle", "naive", "--store", root.as_uri(), "-o", "json"])
    assert result.exit_code == 0, result.stderr
    document = json.loads(result.stdout)
    jsonschema.Draft202012Validator(COMPARE_SCHEMA).validate(document)
    [pair] = document["comparisons"]
    # per task: reply-to-thread 2/2 → 0/2, user-mention 2/2 → 1/2, hello-file 2/2 → 2/2
    assert pair["pass_rate"]["difference"]["estimate"] == pytest.approx((-1 - 0.5 + 0) / 3)
    assert (pair["pass_rate"]["wins"], pair["pass_rate"]["losses"], pair["pass_rate"]["ties"]) == (0, 2, 1)
    assert pair["dimensions"][0]["dimension"] == "reply_to_thread"


def test_compare_table(runner: CliRunner, root: Path) -> None:
    result = runner.invoke(app, ["compare", "oracle", "naive", "--store", root.as_uri()])
    assert result.exit_code == 0, result.stderr
    assert "naive vs oracle over 3 paired task(s)" in result.stdout
    assert (
        "per dimension: naive − oracle (worst first)" in result.stdout and "reply_to_thread" in result.stdout
    )


def test_schema_flag_prints_the_schema(runner: CliRunner) -> None:
    result = runner.invoke(app, ["compare", "--schema"])
    assert result.exit_code == 0 and json.loads(result.stdout) == COMPARE_SCHEMA


def test_one_sweep_or_bad_resamples_is_a_user_error(runner: CliRunner, root: Path) -> None:
    one = runner.invoke(app, ["compare", "oracle", "--store", root.as_uri()])
    assert one.exit_code == 1 and "at least two sweeps" in one.stderr
    few = runner.invoke(app, ["compare", "oracle", "naive", "--store", root.as_uri(), "--resamples", "5"])
    assert few.exit_code == 1 and "resamples must be >= 100" in few.stderr
    unknown = runner.invoke(app, ["compare", "oracle", "nope", "--store", root.as_uri()])
    assert unknown.exit_code == 1 and "no bundles for sweep 'nope'" in unknown.stderr


def test_lock_digests_refuse_or_warn(runner: CliRunner, tmp_path: Path) -> None:
    build_sweep(tmp_path, "a", _plans(set()), spec={"attempts": 2})
    build_sweep(tmp_path, "b", _plans({("hello-file", 1)}), spec={"attempts": 2})
    _lock(tmp_path, "a", {"tasks": dict.fromkeys(TASKS, "0" * 64), "stack": {"digest": "1" * 64}})
    _lock(
        tmp_path,
        "b",
        {
            "tasks": {**dict.fromkeys(TASKS, "0" * 64), "user-mention": "9" * 64},
            "stack": {"digest": "2" * 64},
        },
    )
    refused = runner.invoke(app, ["compare", "a", "b", "--store", tmp_path.as_uri()])
    assert refused.exit_code == 1 and "different versions of task(s) user-mention" in refused.stderr
    _lock(tmp_path, "b", {"tasks": dict.fromkeys(TASKS, "0" * 64), "stack": {"digest": "2" * 64}})
    warned = runner.invoke(app, ["compare", "a", "b", "--store", tmp_path.as_uri(), "-o", "json"])
    assert warned.exit_code == 0, warned.stderr
    [warning] = json.loads(warned.stdout)["comparisons"][0]["warnings"]
    assert warning.startswith("WARNING: the stacks differ (a 11111111, b 22222222)")


def test_report_of_two_sweeps_opens_with_the_comparison(
    runner: CliRunner, root: Path, tmp_path: Path
) -> None:
    page = tmp_path / "compare.html"
    result = runner.invoke(app, ["report", "oracle", "naive", "--store", root.as_uri(), "--html", str(page)])
    assert result.exit_code == 0, result.stderr
    assert result.stdout.startswith(
        f"report for sweeps oracle, naive (compared with oracle): {page} (12 trials"
    )
    text = page.read_text()
    assert text.index("id=comparison") < text.index("id=sweep-1") < text.index("id=sweep-2")
    svgs = re.findall(r"<svg id='(?:forest-1|cost-vs-pass)'.*?</svg>", text, re.S)
    assert len(svgs) == 2
    for svg in svgs:
        ET.fromstring(svg)  # well-formed: the browser draws it as written
    assert text.count("<g class='row'>") == 1 + 2  # the pass rate, then reply_to_thread and evidence_complete
    assert text.count("<g class='point'>") == 2


def test_summary_json_carries_the_statistics(runner: CliRunner, root: Path) -> None:
    result = runner.invoke(app, ["sweep", "results", "naive", "--store", root.as_uri(), "-o", "json"])
    assert result.exit_code == 0, result.stderr
    document = json.loads(result.stdout)
    jsonschema.Draft202012Validator(RESULTS_SCHEMA).validate(document)
    [row] = document["conditions"]
    # per task 0/2, 1/2, 2/2 → 0.5
    assert row["statistics"]["pass_rate"]["estimate"] == 0.5 and row["statistics"]["tasks"] == 3
