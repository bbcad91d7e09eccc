"""Gauges rebuilt from trials and sweep statuses; counters and histograms from status writes."""

from __future__ import annotations

from typing import Any

from buzz_operator.api.trial import BuzzTrialStatus
from buzz_operator.observability import metrics
from buzz_operator.observability.metrics import REGISTRY, Snapshot
from buzz_operator.sweep.drive.settled import SettledTrials
from prometheus_client import generate_latest

from tests.unit.observability.conftest import at, trial_body


def samples(snapshot: Snapshot, name: str) -> dict[tuple[tuple[str, str], ...], float]:
    out = {}
    for family in snapshot.collect():
        for sample in family.samples:
            if sample.name == name:
                out[tuple(sorted(sample.labels.items()))] = sample.value
    return out


def status(**fields: Any) -> dict[str, Any]:
    return {"phase": "Pending", **fields}


def test_trials_by_state_outcome_and_their_usage() -> None:
    snap = Snapshot()
    snap.observe_trial(trial_body("t1", status(phase="Running")))
    snap.observe_trial(
        trial_body(
            "t2",
            status(
                phase="Succeeded",
                outcome="ok",
                reward=1.0,
                tokens={"input": 100, "output": 7},
                costUSD={"floor": 0.5, "ceiling": 0.75},
            ),
        )
    )
    snap.observe_trial(
        trial_body(
            "t3",
            status(
                phase="Failed",
                outcome="broken",
                failureClass="broken",
                tokens={"input": 1, "output": 2},
                costUSD={"floor": 0.25, "ceiling": 1},
            ),
        )
    )
    counts = samples(snap, "buzz_trials")
    assert counts[(("namespace", "ns"), ("outcome", "none"), ("state", "running"), ("sweep", "s1"))] == 1
    assert counts[(("namespace", "ns"), ("outcome", "ok"), ("state", "succeeded"), ("sweep", "s1"))] == 1
    assert counts[(("namespace", "ns"), ("outcome", "broken"), ("state", "broken"), ("sweep", "s1"))] == 1
    base = (("condition", "ab" * 6), ("endpoint", "standin"))
    tokens = samples(snap, "buzz_trial_tokens")
    assert tokens[tuple(sorted((*base, ("direction", "input"), ("namespace", "ns"), ("sweep", "s1"))))] == 101
    assert tokens[tuple(sorted((*base, ("direction", "output"), ("namespace", "ns"), ("sweep", "s1"))))] == 9
    cost = samples(snap, "buzz_trial_cost_usd")
    assert cost[tuple(sorted((*base, ("bound", "floor"), ("namespace", "ns"), ("sweep", "s1"))))] == 0.75
    assert cost[tuple(sorted((*base, ("bound", "ceiling"), ("namespace", "ns"), ("sweep", "s1"))))] == 1.75


def test_a_trial_seen_again_replaces_itself_and_a_deleted_one_goes() -> None:
    snap = Snapshot()
    snap.observe_trial(trial_body("t1", status(phase="Running")))
    snap.observe_trial(trial_body("t1", status(phase="Succeeded", outcome="ok")))
    snap.observe_trial(trial_body("t2", status()))
    assert sum(samples(snap, "buzz_trials").values()) == 2
    snap.retain_trials([("ns", "t1")])
    assert list(samples(snap, "buzz_trials").values()) == [1]


def test_settled_trials_count_from_their_columns_once_each() -> None:
    """A settled trial's record lives in the settled trials' columns; one settled since the last
    reconcile is still among the watched records too, and counts once; the same gauges either way."""
    settled = SettledTrials(metrics.trial_record, metrics.record_table)
    snap = Snapshot(settled=settled)
    done = {"phase": "Succeeded", "outcome": "ok", "tokens": {"input": 100, "output": 7},
            "costUSD": {"floor": 0.5, "ceiling": 0.75}, "secretFindings": {"count": 2, "quarantined": True}}
    watched_only = Snapshot()
    for name in ("t1", "t2"):
        watched_only.observe_trial(trial_body(name, status(**done)))
    snap.observe_trial(trial_body("t1", status(**done)))  # settled a moment ago: still watched
    for name in ("t1", "t2"):
        settled.add(trial_body(name, status(**done)))
    for name in ("buzz_trials", "buzz_trial_tokens", "buzz_trial_cost_usd", "buzz_trial_secret_findings",
                 "buzz_trials_with_secret_findings"):
        assert samples(snap, name) == samples(watched_only, name), name
    assert sum(samples(snap, "buzz_trials").values()) == 2
    snap.retain_trials([])  # the next reconcile: kopf watches neither any more
    assert samples(snap, "buzz_trial_tokens") == samples(watched_only, "buzz_trial_tokens")
    settled.discard("ns", "t2")
    assert sum(samples(snap, "buzz_trials").values()) == 1


def test_sweep_gauges_show_the_status_and_stale_sweeps_leave() -> None:
    snap = Snapshot()
    snap.observe_sweep(
        "ns",
        "s1",
        {
            "total": 4,
            "pending": 2,
            "running": 1,
            "succeeded": 1,
            "costUSD": {"floor": 0.1, "ceiling": 0.2},
            "waiting": {"reason": "ParallelismLimit", "message": "2 wait"},
        },
    )
    states = samples(snap, "buzz_sweep_trials")
    assert states[(("namespace", "ns"), ("state", "total"), ("sweep", "s1"))] == 4
    assert states[(("namespace", "ns"), ("state", "broken"), ("sweep", "s1"))] == 0
    assert (
        samples(snap, "buzz_sweep_cost_usd")[(("bound", "ceiling"), ("namespace", "ns"), ("sweep", "s1"))]
        == 0.2
    )
    waiting = samples(snap, "buzz_sweep_admissions_waiting")
    assert waiting == {(("namespace", "ns"), ("reason", "ParallelismLimit"), ("sweep", "s1")): 2}
    snap.sweeps[("ns", "s1")].seen = -metrics.SWEEP_STALE_S - 1e9  # long ago
    assert samples(snap, "buzz_sweep_trials") == {}


def test_phase_change_observes_durations_finishes_and_failures() -> None:
    def value(name: str, labels: dict[str, str]) -> float:
        return REGISTRY.get_sample_value(name, labels) or 0.0

    old = BuzzTrialStatus.model_validate({"phase": "Running", "phaseTimes": {"running": at(0)}})
    new = BuzzTrialStatus.model_validate(
        {"phase": "Collecting", "phaseTimes": {"running": at(0), "collecting": at(42)}}
    )
    before = value("buzz_trial_phase_duration_seconds_sum", {"phase": "Running"})
    metrics.phase_change(old, new, namespace="ns", condition_hash="cd" * 32)
    assert value("buzz_trial_phase_duration_seconds_sum", {"phase": "Running"}) == before + 42

    failing = BuzzTrialStatus.model_validate(
        {
            "phase": "Failed",
            "reason": "StorageUnavailable",
            "failureClass": "infra",
            "outcome": "error",
            "phaseTimes": {"bundling": at(0), "finished": at(3)},
        }
    )
    bundling = BuzzTrialStatus.model_validate({"phase": "Bundling", "phaseTimes": {"bundling": at(0)}})
    finished = {"namespace": "ns", "condition": "cd" * 6, "outcome": "error"}
    storage = {"reason": "StorageUnavailable"}
    failed = {"phase": "Bundling", "reason": "StorageUnavailable", "failure_class": "infra"}
    b1, b2, b3 = (
        value("buzz_trials_finished_total", finished),
        value("buzz_storage_errors_total", storage),
        value("buzz_trial_failures_total", failed),
    )
    metrics.phase_change(bundling, failing, namespace="ns", condition_hash="cd" * 32)
    assert value("buzz_trials_finished_total", finished) == b1 + 1
    assert value("buzz_storage_errors_total", storage) == b2 + 1
    assert value("buzz_trial_failures_total", failed) == b3 + 1


def test_a_retried_try_counts_its_attempt_record() -> None:
    old = BuzzTrialStatus.model_validate({"phase": "Launching"})
    new = BuzzTrialStatus.model_validate(
        {
            "phase": "Pending",
            "retries": 1,
            "reason": "RelayUnavailable",
            "failedTries": [
                {"retry": 0, "phase": "Launching", "reason": "RelayUnavailable", "failureClass": "infra"}
            ],
        }
    )
    assert metrics.failures(old, new) == [("Launching", "RelayUnavailable", "infra")]
    before = REGISTRY.get_sample_value("buzz_relay_errors_total", {"reason": "RelayUnavailable"}) or 0.0
    metrics.phase_change(old, new, namespace="ns", condition_hash=None)
    assert REGISTRY.get_sample_value("buzz_relay_errors_total", {"reason": "RelayUnavailable"}) == before + 1


def test_exposition_names_every_family() -> None:
    text = generate_latest(REGISTRY).decode()
    for name in (
        "buzz_kube_api_requests_total",
        "buzz_trial_phase_duration_seconds",
        "buzz_trials_finished_total",
        "buzz_trial_failures_total",
        "buzz_relay_errors_total",
        "buzz_storage_errors_total",
        "buzz_trials",
        "buzz_trial_tokens",
        "buzz_trial_cost_usd",
        "buzz_sweep_trials",
        "buzz_sweep_cost_usd",
        "buzz_sweep_admissions_waiting",
    ):
        assert f"# TYPE {name.removesuffix('_total')}" in text, name
