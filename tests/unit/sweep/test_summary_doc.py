"""summary.json: the status figures plus one line per trial, written only when a trial finished."""

from __future__ import annotations

from datetime import UTC, datetime

from buzz_operator.sweep.rollup import rollup
from buzz_operator.sweep.summary import TrialState, TrialSummary
from buzz_operator.sweep.summary_doc import summary_document, summary_due

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


def test_due_only_when_the_finished_count_moved() -> None:
    none_done = rollup([_trial("a-0", TrialState.RUNNING)], 1)
    one_done = rollup([_trial("a-0", TrialState.SUCCEEDED, 1.0)], 1)
    assert not summary_due(None, none_done)
    assert summary_due(None, one_done)
    assert not summary_due(1, one_done)
    assert summary_due(0, one_done)
