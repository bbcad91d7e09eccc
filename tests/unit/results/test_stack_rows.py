"""Results of different stacks are never pooled silently: the JSON document, its schema, the CSV,
the terminal table and the report page all key rows by condition, hash and stack digest, and the
caveats say why two rows share a hash."""

from __future__ import annotations

import io
from pathlib import Path

import jsonschema
import pytest
from buzz_operator.cli.results_table import render
from buzz_operator.results import (
    RESULTS_SCHEMA,
    caveats,
    csv_rows,
    render_report,
    results_document,
    tabulate_sweep,
)
from buzz_operator.results.table import ResultsTable
from rich.console import Console

from tests.unit.results.conftest import read_sweep_files
from tests.unit.results.sweep_builder import TrialPlan, build_sweep

URL = "file:///bundles"
REBUILT = "c" * 64  # bin/buzz-acp of a stack image rebuilt under the same tag


@pytest.fixture(scope="module")
def two_stacks(tmp_path_factory: pytest.TempPathFactory) -> ResultsTable:
    root = tmp_path_factory.mktemp("store")
    build_sweep(root, "two", [TrialPlan("hello-file", 1), TrialPlan("hello-file", 2, reward=0.0, buzz_acp=REBUILT)])
    trials, config = read_sweep_files(root, "two")
    return tabulate_sweep("two", trials, config)


def _digests() -> tuple[str, str]:
    return TrialPlan("x", 1).stack["digest"], TrialPlan("x", 1, buzz_acp=REBUILT).stack["digest"]


def test_the_document_keys_rows_failures_and_trials_by_stack(two_stacks: ResultsTable) -> None:
    document = results_document(two_stacks, URL, with_failures=True, with_trials=True)
    jsonschema.Draft202012Validator(RESULTS_SCHEMA).validate(document)
    standin, rebuilt = _digests()
    rows = {(r["condition"], r["hash"], r["stack_digest"]): r for r in document["conditions"]}
    assert {key[2] for key in rows} == {standin, rebuilt} and len({key[:2] for key in rows}) == 1
    assert {r["stack"] for r in rows.values()} == {standin[:8], rebuilt[:8]}
    assert [(f["trial"], f["stack"]) for f in document["failures"]] == [("hello-file-2", rebuilt[:8])]
    assert {t["trial"]: t["stack"] for t in document["trial_rows"]} == {"hello-file-1": standin[:8],
                                                                       "hello-file-2": rebuilt[:8]}


def test_the_csv_carries_the_stack_digest_then_the_box_rates(two_stacks: ResultsTable) -> None:
    header, *rows = csv_rows(two_stacks)
    assert header[-4:] == ["stack_digest", "infra_rate", "pressure_rate", "retried_rate"]
    assert header[:2] == ["condition", "manifest_sha256"]
    assert sorted(row[-4] for row in rows) == sorted(_digests())
    assert all(row[-3:] == ["0.000000"] * 3 for row in rows)  # a calm box: nothing failed, pressed or retried


def test_the_table_has_a_stack_column_and_the_caveat(two_stacks: ResultsTable) -> None:
    out = io.StringIO()
    render(Console(file=out, width=200), two_stacks, results_document(two_stacks, URL))
    text = out.getvalue()
    standin, rebuilt = _digests()
    assert "stack" in text and standin[:8] in text and rebuilt[:8] in text
    assert "more than one stack" in text


def test_the_report_charts_each_stack_apart(two_stacks: ResultsTable) -> None:
    page = render_report(results_document(two_stacks, URL, with_trials=True), caveats(two_stacks.rows))
    standin, rebuilt = _digests()
    assert f"/{standin[:8]}" in page and f"/{rebuilt[:8]}" in page  # the bar labels differ
    assert "more than one stack" in page


def test_one_stack_has_no_stack_caveat(tmp_path: Path) -> None:
    build_sweep(tmp_path, "one", [TrialPlan("hello-file", 1), TrialPlan("hello-file", 2)])
    trials, config = read_sweep_files(tmp_path, "one")
    summary = tabulate_sweep("one", trials, config)
    assert len(summary.rows) == 1 and not any("stack" in note for note in caveats(summary.rows))


def test_a_bundle_without_a_stack_is_its_own_row_and_says_so(tmp_path: Path) -> None:
    # bundles of an earlier build record no stack: which binaries ran is unknown
    build_sweep(tmp_path, "old", [TrialPlan("hello-file", 1, buzz_acp=None)])
    trials, config = read_sweep_files(tmp_path, "old")
    summary = tabulate_sweep("old", trials, config)
    assert [r.stack_digest for r in summary.rows] == [""]
    assert results_document(summary, URL)["conditions"][0]["stack"] == ""
    assert any("stack is '-'" in note for note in caveats(summary.rows))
