"""summary.json: the status figures plus one line per trial, written only when a trial finished."""

from __future__ import annotations

from datetime import UTC, datetime

from buzz_operator.sweep.rollup import rollup
from buzz_operator.sweep.summary import TrialState, TrialSummary
from buzz_operator.sweep.summary_doc import results_digest, summary_document

NOW = datetime(2026, 11, 30, 2, 0, tzinfo=UTC)


def _trial(name: str, state: TrialState, reward: float | None = None, cost: float = 0.0) -> TrialSummary:
    return TrialSummary(name=name, sweep="s", task=name.split("-")[0], attempt=0, state=state, reward=reward,
                        scored=state is TrialState.SUCCEEDED, cost_floor=cost, cost_ceiling=cost * 2,
                        outcome="ok" if state is TrialState.SUCCEEDED else None)


def test_document_carries_counts_costs_and_every_trial_in_name_order() -> None:
    trials = [_trial("b-0", TrialState.SUCCEEDED, 1.0, 0.5), _trial("a-0", TrialState.RUNNING)]
    figures = rollup(trials, 1, planned=3)
    doc = summary_document(sweep="s", namespace="ns", condition="oracle", condition_hash="h" * 64,
                           rollup=figures, trials=trials, now=NOW)
    assert doc["counts"]["succeeded"] == 1 and doc["counts"]["total"] == 3
    assert [t["name"] for t in doc["trials"]] == ["a-0", "b-0"]
    assert doc["costUSD"] == {"floor": 0.5, "ceiling": 1.0}
    assert doc["updatedAt"] == "2026-11-30T02:00:00Z" and doc["finished"] is False


def test_the_results_digest_moves_only_with_finished_results() -> None:
    from dataclasses import replace

    running = _trial("a-0", TrialState.RUNNING)
    done = _trial("b-0", TrialState.SUCCEEDED, 1.0)
    assert results_digest([running]) is None
    first = results_digest([running, done])
    assert first is not None and results_digest([replace(running, state=TrialState.PENDING), done]) == first
    assert results_digest([running, replace(done, reward=0.5)]) != first  # regraded
    assert results_digest([running, done, _trial("c-0", TrialState.FAILED)]) != first  # one more finished
