"""The summary document validates against its schema; failures name reason and bundle; CSV."""

from __future__ import annotations

import copy

import jsonschema
import pytest
from buzz_operator.results import RESULTS_SCHEMA, csv_rows, results_document, tabulate_sweep
from buzz_operator.results.document import CSV_COLUMNS
from buzz_operator.results.table import ResultsTable

URL = "file:///bundles"


def validate(document: dict) -> None:
    jsonschema.Draft202012Validator.check_schema(RESULTS_SCHEMA)
    jsonschema.Draft202012Validator(RESULTS_SCHEMA).validate(document)


def test_full_document_is_valid(mixed: ResultsTable) -> None:
    document = results_document(mixed, URL, with_failures=True, with_trials=True)
    validate(document)
    assert document["trials"] == 7 and document["unfinished"] == ["user-mention-2"]
    assert len(document["trial_rows"]) == 7


def test_empty_document_is_valid() -> None:
    document = results_document(tabulate_sweep("empty", {}), URL, with_failures=True)
    validate(document)
    assert document["conditions"] == [] and document["failures"] == []


def test_schema_refuses_extra_or_missing_keys(mixed: ResultsTable) -> None:
    document = results_document(mixed, URL)
    extra = copy.deepcopy(document)
    extra["conditions"][0]["surprise"] = 1
    with pytest.raises(jsonschema.ValidationError):
        validate(extra)
    missing = copy.deepcopy(document)
    del missing["conditions"][0]["flags"]
    with pytest.raises(jsonschema.ValidationError):
        validate(missing)
    bad_flag = copy.deepcopy(document)
    bad_flag["conditions"][0]["flags"] = ["weird×1"]
    with pytest.raises(jsonschema.ValidationError):
        validate(bad_flag)


def test_failures_are_the_zero_scoring_trials_with_reason_and_bundle(mixed: ResultsTable) -> None:
    failures = {f["trial"]: f for f in results_document(mixed, URL, with_failures=True)["failures"]}
    assert set(failures) == {
        "hello-file-3",
        "reply-to-thread-1",
        "reply-to-thread-2",
        "reply-to-thread-3",
        "user-mention-1",
    }
    assert failures["hello-file-3"]["reason"].startswith("AgentTimeoutError: ")
    assert failures["reply-to-thread-1"]["reason"] == "failed reply_to_thread"
    assert failures["reply-to-thread-2"]["outcome"] == "launch"
    assert failures["reply-to-thread-3"]["reason"].startswith("verifier broken")
    assert failures["user-mention-1"]["bundle"] == f"{URL}/mixed/user-mention-1"


def test_csv_has_the_seed_columns_first(mixed: ResultsTable) -> None:
    rows = csv_rows(mixed)
    assert rows[0] == list(CSV_COLUMNS)
    assert rows[0][:17] == [
        "condition", "manifest_sha256", "agents", "n", "pass_rate", "cost_usd_per_trial", "cost_usd_total",
        "tokens_per_trial", "agent_seconds_per_trial", "timeouts", "launch_failures", "errors", "round_capped",
        "unreconciled", "verifier_broken", "stopped_without_done", "timeout_multipliers",
    ]  # fmt: skip
    assert rows[1][3:5] == ["7", "0.285714"] and rows[1][16] == "2"
