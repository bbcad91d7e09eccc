"""summary.json: the status figures plus one line per trial, written only when a trial finished."""

from __future__ import annotations

import asyncio
import json
import tempfile
from datetime import UTC, datetime
from pathlib import Path

import pytest
from buzz_operator.storage import StorageUnavailable
from buzz_operator.storage.file_store import FileStore
from buzz_operator.sweep.drive import documents
from buzz_operator.sweep.known import SweepTrials
from buzz_operator.sweep.rollup import rollup
from buzz_operator.sweep.summary_doc import results_digest, summary_document, summary_head, summary_text
from buzz_operator.sweep.trial_view import TrialState, TrialView

NOW = datetime(2026, 11, 30, 2, 0, tzinfo=UTC)


def _trial(name: str, state: TrialState, reward: float | None = None, cost: float = 0.0,
           stack: str | None = "a" * 64) -> TrialView:
    return TrialView(name=name, sweep="s", task=name.split("-")[0], attempt=0, state=state, reward=reward,
                        scored=state is TrialState.SUCCEEDED, cost_floor=cost, cost_ceiling=cost * 2,
                        outcome="ok" if state is TrialState.SUCCEEDED else None, stack_digest=stack)


def test_document_carries_counts_costs_and_every_trial_in_name_order() -> None:
    trials = [_trial("b-0", TrialState.SUCCEEDED, 1.0, 0.5), _trial("a-0", TrialState.RUNNING)]
    figures = rollup(trials, 1, planned=3)
    doc = summary_document(sweep="s", namespace="ns", condition="oracle", condition_hash="h" * 64,
                           rollup=figures, trials=trials, attempts=1, now=NOW)
    assert doc["counts"]["succeeded"] == 1 and doc["counts"]["total"] == 3
    assert [t["name"] for t in doc["trials"]] == ["a-0", "b-0"]
    assert doc["costUSD"] == {"floor": 0.5, "ceiling": 1.0}
    assert doc["updatedAt"] == "2026-11-30T02:00:00Z" and doc["finished"] is False


def test_the_results_digest_moves_only_with_finished_results() -> None:

    running = _trial("a-0", TrialState.RUNNING)
    done = _trial("b-0", TrialState.SUCCEEDED, 1.0)
    assert results_digest([running]) is None
    first = results_digest([running, done])
    assert first is not None and results_digest([running._replace(state=TrialState.PENDING), done]) == first
    assert results_digest([running, done._replace(reward=0.5)]) != first  # regraded
    assert results_digest([running, done, _trial("c-0", TrialState.FAILED)]) != first  # one more finished
    assert results_digest([running, done._replace(stack_digest="b" * 64)]) != first  # its stack became known


def test_the_results_digest_reads_trials_once_in_any_order() -> None:
    trials = [_trial(f"t-{i}", TrialState.SUCCEEDED if i % 3 else TrialState.FAILED, i / 10) for i in range(10)]
    first = results_digest(iter(trials))  # an iterator: one pass, nothing held
    assert first is not None and results_digest(reversed(trials)) == first
    # two trials swapping their results is a change, though the multiset of rewards is the same
    swapped = [trials[1]._replace(reward=trials[2].reward), trials[2]._replace(reward=trials[1].reward), *trials[3:]]
    assert results_digest([trials[0], *swapped]) != first
    assert results_digest(trials[:-1]) != first  # one fewer finished


def _rows(trials: list[TrialView], attempts: int = 2) -> list[dict]:
    return summary_document(sweep="s", namespace="ns", condition="oracle", condition_hash="h" * 64,
                            rollup=rollup(trials, attempts), trials=trials, attempts=attempts, now=NOW)["rows"]


def test_two_stacks_under_one_condition_hash_are_two_rows() -> None:
    a, b = "a" * 64, "b" * 64
    trials = [_trial("t-0", TrialState.SUCCEEDED, 1.0, 0.5, a), _trial("t-1", TrialState.SUCCEEDED, 1.0, 0.5, a),
              _trial("u-0", TrialState.SUCCEEDED, 0.0, 0.25, b), _trial("v-0", TrialState.RUNNING, stack=b)]
    rows = _rows(trials)
    assert [(r["condition"], r["conditionHash"], r["stackDigest"]) for r in rows] == [
        ("oracle", "h" * 64, a), ("oracle", "h" * 64, b)]
    assert [(r["trials"], r["scored"], r["meanReward"]) for r in rows] == [(2, 2, 1.0), (1, 1, 0.0)]  # running: no row
    assert rows[0]["costUSD"] == {"floor": 1.0, "ceiling": 2.0}
    doc_trials = summary_document(sweep="s", namespace="ns", condition="oracle", condition_hash="h" * 64,
                                  rollup=rollup(trials, 2), trials=trials, attempts=2, now=NOW)["trials"]
    assert {t["name"]: t["stackDigest"] for t in doc_trials}["u-0"] == b


def test_a_trial_that_never_installed_a_stack_joins_the_one_its_siblings_ran() -> None:
    a, b = "a" * 64, "b" * 64
    launch_failed = _trial("x-0", TrialState.FAILED, 0.0, stack=None)
    one = _rows([_trial("t-0", TrialState.SUCCEEDED, 1.0, stack=a), launch_failed])
    assert [(r["stackDigest"], r["trials"]) for r in one] == [(a, 2)]  # its 0 still counts
    two = _rows([_trial("t-0", TrialState.SUCCEEDED, 1.0, stack=a), _trial("u-0", TrialState.SUCCEEDED, 1.0, stack=b),
                 launch_failed])
    assert [(r["stackDigest"], r["trials"]) for r in two] == [(None, 1), (a, 1), (b, 1)]  # which? unknown: apart


def test_a_running_sweep_rewrites_its_summary_less_often_the_larger_it_is() -> None:
    from buzz_operator.sweep.summary_doc import summary_due

    assert summary_due(100_000, finished=False, since_last_s=None)  # not written by this process yet
    assert summary_due(100_000, finished=True, since_last_s=0.1)  # the finished figures go out at once
    assert summary_due(1_000, finished=False, since_last_s=5.0)  # small: every tick
    assert not summary_due(100_000, finished=False, since_last_s=30.0)
    assert summary_due(100_000, finished=False, since_last_s=50.0)
    assert not summary_due(10_000_000, finished=False, since_last_s=59.0)  # never more than a minute apart
    assert summary_due(10_000_000, finished=False, since_last_s=60.0)


def _expected(trials: list[TrialView]) -> str:
    doc = summary_document(sweep="s", namespace="ns", condition="oracle", condition_hash="h" * 64,
                           rollup=rollup(trials, 2, planned=4), trials=trials, attempts=2, now=NOW)
    return json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def _head(trials: list[TrialView]) -> dict:
    return summary_head(sweep="s", namespace="ns", condition="oracle", condition_hash="h" * 64,
                        rollup=rollup(trials, 2, planned=4), trials=trials, attempts=2, now=NOW)


def test_the_streamed_text_is_the_document_json_writes_byte_for_byte() -> None:
    cases = [
        [],
        [_trial("a-0", TrialState.RUNNING)],
        [_trial("b-0", TrialState.SUCCEEDED, 1.0, 0.5), _trial("a-0", TrialState.FAILED)._replace(reason="exit 1 — ünïcode"),
         _trial("c-0", TrialState.BROKEN, stack=None)],
    ]
    for trials in cases:
        ordered = sorted(trials, key=lambda t: t.name)
        assert "".join(summary_text(_head(trials), iter(ordered))) == _expected(trials)


def test_write_summary_streams_to_the_store(tmp_path: Path) -> None:
    trials = [_trial(f"t{i:03d}-0", TrialState.SUCCEEDED, 1.0, 0.1) for i in range(250)][::-1]  # any order in
    store = FileStore(tmp_path)
    url = asyncio.run(documents.write_summary(store, "s", _head(trials), SweepTrials(trials).by_name()))
    assert url.endswith("/s/summary.json")
    assert asyncio.run(store.get("s/summary.json")).decode() == _expected(trials)


def test_a_summary_that_cannot_be_staged_locally_is_storage_away_not_a_crash(tmp_path: Path, monkeypatch) -> None:
    # a real error path: TMPDIR names a folder that is not there (an emptyDir gone, a full disk alike)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "gone"))
    trials = [_trial("a-0", TrialState.SUCCEEDED, 1.0)]
    with pytest.raises(StorageUnavailable, match=r"summary\.json staged under .*gone"):
        asyncio.run(documents.write_summary(FileStore(tmp_path / "store"), "s", _head(trials), trials))
