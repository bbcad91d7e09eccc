"""sweep watch shows each waiting trial's status.waiting: who holds it, where, for how long."""

from __future__ import annotations

from datetime import UTC, datetime

from buzz_operator.cli.sweep_watch import state_of, waiting_text

NOW = datetime(2026, 12, 1, 22, 0, 0, tzinfo=UTC)
QUEUED = {"reason": "QueuedInKueue", "source": "kueue", "since": "2026-12-01T21:58:55Z", "seconds": 60,
          "queue": "team-a", "clusterQueue": "shared", "position": 2, "pending": 3,
          "message": "couldn't assign flavors to pod set main: insufficient unused quota for pods in flavor f, 1 more needed"}


def test_a_queued_trial_says_where_and_how_long_from_since() -> None:
    assert waiting_text(QUEUED, NOW) == (
        "kueue: QueuedInKueue (LocalQueue team-a → ClusterQueue shared, #2 of 3 pending) for 1m05s: "
        "couldn't assign flavors to pod set main: insufficient unused quota for pods in flavor f, 1 more needed")
    assert waiting_text({"reason": "PullingImage", "source": "kubelet", "since": "2026-12-01T21:59:50Z",
                         "message": 'Pulling image "x"'}, NOW) == 'kubelet: PullingImage for 10s: Pulling image "x"'


def test_waiting_trials_are_listed_under_the_sweep() -> None:
    sweep = {"metadata": {"name": "s"}, "spec": {}, "status": {"total": 2}}
    trials = [{"metadata": {"name": "t1", "creationTimestamp": "2026-12-01T21:58:00Z"},
               "spec": {"task": "hello-file", "attempt": 1},
               "status": {"phase": "Launching", "phaseTimes": {"launching": "2026-12-01T21:58:50Z"}, "waiting": QUEUED}}]
    state = state_of(sweep, trials, {}, NOW)
    assert state.active[0].why is not None and state.active[0].why.startswith("kueue: QueuedInKueue")
    assert state.waiting == [f"t1: {state.active[0].why}"]
