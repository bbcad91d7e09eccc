"""Settled trials (docs/design.md#settled-trials): how the settled trials' watch folds its events
and a relisting, how the reconcile joins them with kopf's index, and when a trial may settle.
The watch itself runs against the real apiserver in tests/integration/operator/test_settled.py."""

from __future__ import annotations

import time
from typing import Any

from buzz_operator.api.labels import REGRADE
from buzz_operator.api.trial import BuzzTrialStatus
from buzz_operator.handlers import _known
from buzz_operator.sweep.runtime_settled import Namespace, SettledTrials
from buzz_operator.sweep.summary import TrialState, TrialSummary
from buzz_operator.trial.runtime import regrade_wanted

RELEASED = {"type": "Released", "status": "True", "reason": "Released", "message": "",
            "lastTransitionTime": "2026-12-02T00:00:00Z"}


def body(name: str, phase: str = "Succeeded", reward: float = 1.0) -> dict[str, Any]:
    return {"metadata": {"name": name, "namespace": "ns", "labels": {}},
            "spec": {"sweepName": "s", "task": "t", "attempt": 1},
            "status": {"phase": phase, "outcome": "ok", "reward": reward, "conditions": [RELEASED]}}


def summary(name: str, state: TrialState = TrialState.SUCCEEDED, namespace: str = "ns") -> TrialSummary:
    return TrialSummary(name=name, sweep="s", task="t", attempt=1, state=state, namespace=namespace)


def test_events_add_replace_and_drop_summaries() -> None:
    kept = Namespace()
    kept.apply("ADDED", body("a"))
    kept.apply("ADDED", body("b"))
    kept.apply("MODIFIED", body("a", reward=0.5))
    assert kept.trials["a"].reward == 0.5 and kept.trials["a"].state is TrialState.SUCCEEDED
    kept.apply("DELETED", body("b"))
    assert set(kept.trials) == {"a"}
    kept.apply("DELETED", body("never-seen"))  # a delete of what was never kept is nothing
    assert set(kept.trials) == {"a"}


def test_a_relisting_replaces_all_but_the_trials_settled_while_it_ran() -> None:
    settled = SettledTrials()
    settled.add(summary("early"))
    began = time.monotonic()
    settled.add(summary("late"))  # labelled after the listing's snapshot: its ADDED comes later
    kept = settled.namespaces["ns"]
    kept.trials["stale"] = summary("stale")  # deleted while no watch ran: the listing drops it
    kept.relisted({"listed": summary("listed")}, began)
    assert set(kept.trials) == {"listed", "late"}
    # once listed after it, a trial settled here is no longer held against the next relisting
    kept.relisted({"listed": summary("listed"), "late": summary("late")}, time.monotonic())
    assert set(kept.trials) == {"listed", "late"} and not kept.added


def test_a_trial_is_remembered_as_settled_here_only_until_the_watch_sees_it() -> None:
    settled = SettledTrials()
    settled.add(summary("a"))
    settled.add(summary("b"))
    kept = settled.namespaces["ns"]
    kept.apply("ADDED", body("a"))  # otherwise every settled trial would keep an entry for good
    assert set(kept.added) == {"b"} and set(kept.trials) == {"a", "b"}
    settled.discard("ns", "b")  # its label was not written after all
    assert set(kept.trials) == {"a"} and not kept.added
    settled.discard("elsewhere", "x")  # a namespace never followed: nothing to drop


def test_the_reconcile_knows_both_and_prefers_kopfs_entry() -> None:
    settled = SettledTrials()
    settled.add(summary("done"))
    settled.add(summary("regrading"))
    settled.add(summary("elsewhere", namespace="other"))
    watched = [summary("running", TrialState.RUNNING), summary("regrading", TrialState.FAILED)]
    known = _known(watched, settled)
    assert sorted((t.namespace, t.name) for t in known) == [
        ("ns", "done"), ("ns", "regrading"), ("ns", "running"), ("other", "elsewhere")]
    assert next(t for t in known if t.name == "regrading").state is TrialState.FAILED
    assert len(settled) == 3


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
