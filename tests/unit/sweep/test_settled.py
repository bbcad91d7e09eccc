"""Settled trials (docs/design.md#settled-trials): how the settled trials' watch folds its events
and a relisting, how the reconcile joins them with kopf's index, and when a trial may settle.
The watch itself runs against the real apiserver in tests/integration/operator/test_settled.py."""

from __future__ import annotations

import time
from typing import Any

from buzz_operator.api.labels import REGRADE
from buzz_operator.api.trial import BuzzTrialStatus
from buzz_operator.observability import metrics
from buzz_operator.sweep.columns import MEMORY
from buzz_operator.sweep.drive.settled import Namespace, SettledTrials
from buzz_operator.sweep.known import SweepTrials
from buzz_operator.sweep.trial_view import TrialState, TrialView
from buzz_operator.trial.drive.driver import regrade_wanted

RELEASED = {"type": "Released", "status": "True", "reason": "Released", "message": "",
            "lastTransitionTime": "2026-12-02T00:00:00Z"}


def body(name: str, phase: str = "Succeeded", reward: float = 1.0) -> dict[str, Any]:
    return {"metadata": {"name": name, "namespace": "ns", "labels": {}},
            "spec": {"sweepName": "s", "task": "t", "attempt": 1},
            "status": {"phase": phase, "outcome": "ok", "reward": reward, "conditions": [RELEASED]}}


def summary(name: str, state: TrialState = TrialState.SUCCEEDED, namespace: str = "ns") -> TrialView:
    return TrialView(name=name, sweep="s", task="t", attempt=1, state=state, namespace=namespace)


def labelled(name: str, namespace: str = "ns") -> dict[str, Any]:
    """A trial's body as `_settle` hands it over: labelled settled."""
    whole = body(name)
    return {**whole, "metadata": {**whole["metadata"], "namespace": namespace,
                                  "labels": {"bench.buzz.dev/settled": "true"}}}


def names(kept: Namespace) -> set[str]:
    return {t.name for t in kept.trials}


def test_events_add_replace_and_drop_summaries() -> None:
    kept = Namespace()
    kept.apply("ADDED", body("a"))
    kept.apply("ADDED", body("b"))
    kept.apply("MODIFIED", body("a", reward=0.5))
    a = kept.trials.get("a")
    assert a is not None and a.reward == 0.5 and a.state is TrialState.SUCCEEDED
    kept.apply("DELETED", body("b"))
    assert names(kept) == {"a"}
    kept.apply("DELETED", body("never-seen"))  # a delete of what was never kept is nothing
    assert names(kept) == {"a"} and len(kept.trials) == 1


def test_a_settled_trials_metrics_record_is_kept_and_dropped_with_its_summary() -> None:
    kept = Namespace(metrics.trial_record, metrics.record_table)
    kept.apply("ADDED", body("a"))
    kept.apply("ADDED", body("b"))
    assert kept.records is not None and {r.name for r in kept.records} == {"a", "b"}
    kept.apply("DELETED", body("a"))
    assert {r.name for r in kept.records} == {"b"}
    assert kept.records.get("b") == metrics.trial_record(body("b"))


def test_a_relisting_replaces_all_but_the_trials_settled_while_it_ran() -> None:
    settled = SettledTrials(metrics.trial_record, metrics.record_table)
    settled.add(labelled("early"))
    began = time.monotonic()
    settled.add(labelled("late"))  # labelled after the listing's snapshot: its ADDED comes later
    kept = settled.namespaces["ns"]
    kept.keep(body("stale"))  # deleted while no watch ran: the listing drops it
    listing = settled._namespace()
    listing.keep(body("listed"))
    kept.relisted(listing, began)
    assert names(kept) == {"listed", "late"}
    assert {values[1] for values in settled.records()} == {"listed", "late"}  # the records follow
    # once listed after it, a trial settled here is no longer held against the next relisting
    listing = settled._namespace()
    listing.keep(body("listed"))
    listing.keep(body("late"))
    kept.relisted(listing, time.monotonic())
    assert names(kept) == {"listed", "late"} and not kept.added


def test_a_trial_is_remembered_as_settled_here_only_until_the_watch_sees_it() -> None:
    settled = SettledTrials()
    settled.add(labelled("a"))
    settled.add(labelled("b"))
    kept = settled.namespaces["ns"]
    kept.apply("ADDED", body("a"))  # otherwise every settled trial would keep an entry for good
    assert set(kept.added) == {"b"} and names(kept) == {"a", "b"}
    settled.discard("ns", "b")  # its label was not written after all
    assert names(kept) == {"a"} and not kept.added
    settled.discard("elsewhere", "x")  # a namespace never followed: nothing to drop


def test_a_namespace_is_made_once_however_many_trials_settle_there() -> None:
    # a namespace's tables hold some forty vectors: made per settled trial, in mapped files they
    # cost 7 ms each (bench/kwok.py's profile); counted here through the store that makes them
    made: list[str] = []

    class Counting:
        def vector(self, typecode: str, initial: Any = ()) -> Any:
            made.append(typecode)
            return MEMORY.vector(typecode, initial)

        def filled(self, typecode: str, value: Any, length: int) -> Any:
            made.append(typecode)
            return MEMORY.filled(typecode, value, length)

        def rest(self) -> None:
            pass

    settled = SettledTrials(metrics.trial_record, metrics.record_table, store=Counting())  # type: ignore[arg-type]
    settled.add(labelled("a"))
    one_namespace = len(made)
    for n in range(20):
        settled.add(labelled(f"t{n}"))
    assert len(made) == one_namespace and len(settled.namespaces["ns"].trials) == 21


def test_the_reconcile_knows_both_and_prefers_kopfs_entry() -> None:
    settled = SettledTrials()
    settled.add(labelled("done"))
    settled.add(labelled("regrading"))
    settled.add(labelled("elsewhere", namespace="other"))
    watched = [summary("running", TrialState.RUNNING), summary("regrading", TrialState.FAILED),
               summary("another", TrialState.RUNNING)]
    mine = SweepTrials(watched, settled=lambda: settled.summaries("ns", "s"),
                       settled_by_name=lambda: settled.summaries_by_name("ns", "s"))
    assert sorted(t.name for t in mine) == ["another", "done", "regrading", "running"]
    assert sorted(t.name for t in mine) == sorted(t.name for t in mine)  # read again: a stream each time
    assert next(t for t in mine if t.name == "regrading").state is TrialState.FAILED
    # in name order, merged from kopf's entries and the columns; and sorted when no ordered reader
    assert [t.name for t in mine.by_name()] == ["another", "done", "regrading", "running"]
    assert next(t for t in mine.by_name() if t.name == "regrading").state is TrialState.FAILED
    unordered = SweepTrials(watched, settled=lambda: settled.summaries("ns", "s"))
    assert list(unordered.by_name()) == list(mine.by_name())
    assert not mine.empty() and SweepTrials([]).empty()
    assert SweepTrials([], settled=lambda: settled.summaries("ns", "s")).empty() is False
    assert len(settled) == 3
    # a reconcile asks for its own sweep's settled trials only: the others hold no slot
    assert sorted(t.name for t in settled.summaries("ns", "s")) == ["done", "regrading"]
    assert list(settled.summaries("ns", "another-sweep")) == []
    assert list(settled.summaries_by_name("nowhere", "s")) == []


def test_a_trial_settles_unless_a_regrade_is_still_to_run() -> None:
    status = BuzzTrialStatus.model_validate(body("a")["status"])
    assert regrade_wanted(status, {}) is None
    assert regrade_wanted(status, {REGRADE: "3"}) == 3
    regraded = BuzzTrialStatus.model_validate({**body("a")["status"], "regrade": {
        "generation": 3, "result": "regraded", "at": "2026-12-02T00:00:00Z"}})
    assert regrade_wanted(regraded, {REGRADE: "3"}) is None
    assert regrade_wanted(regraded, {REGRADE: "4"}) == 4
    assert regrade_wanted(status, {REGRADE: "x"}) is None
    running = BuzzTrialStatus.model_validate({"phase": "Running"})
    assert regrade_wanted(running, {REGRADE: "3"}) is None  # not settled: nothing to regrade yet
