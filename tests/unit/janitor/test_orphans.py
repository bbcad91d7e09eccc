"""Orphan selection: only objects whose trial is gone, bounded per tick; relay ids of this sweep
that no running try uses."""

from __future__ import annotations

from typing import Any

from buzz_operator.api import labels
from buzz_operator.api.trial_names import relay_trial_id
from buzz_operator.janitor import orphans
from buzz_operator.janitor.orphans import LiveTrial


def obj(name: str, trial: str | None, owner_uid: str | None = None, deleting: bool = False) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "labels": {labels.TRIAL: trial} if trial else {}}
    if owner_uid:
        meta["ownerReferences"] = [{"kind": "BuzzTrial", "name": trial, "uid": owner_uid}]
    if deleting:
        meta["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    return {"metadata": meta}


TRIALS = [LiveTrial("t1", "uid-1", 0, False), LiveTrial("t2", "uid-2", 1, True)]


def test_orphaned_by_owner_uid_or_label() -> None:
    found = orphans.orphaned([
        obj("a", "t1", "uid-1"),          # live owner
        obj("b", "t1", "uid-old"),        # same name, a trial deleted and re-created: orphan
        obj("c", "gone"),                 # no owner reference, trial gone
        obj("d", "t2"),                   # no owner reference, trial exists
        obj("e", None),                   # not a trial object
        obj("f", "gone", deleting=True),  # already going
    ], TRIALS)
    assert found == ["b", "c"]


def test_bounded_per_tick() -> None:
    many = [obj(f"p{i:03}", "gone") for i in range(200)]
    assert len(orphans.orphaned(many, TRIALS)) == orphans.MAX_DELETES_PER_TICK


def test_relay_ids() -> None:
    live = orphans.live_trial_ids("sweep-uid", TRIALS)
    assert live == {relay_trial_id("sweep-uid", "t1", 0)}  # t2 is settled
    ours = orphans.sweep_trial_ids("sweep-uid", ["t1", "t2", "t3"], max_retries=1)
    assert len(ours) == 6
    rows = [relay_trial_id("sweep-uid", "t1", 0), relay_trial_id("sweep-uid", "t2", 1),
            relay_trial_id("sweep-uid", "t3", 0), relay_trial_id("other-sweep", "t3", 0)]
    assert orphans.unarchived_orphans(rows, live=live, ours=ours) == sorted(rows[1:3])


def test_warm_pods_are_never_trial_orphans_and_go_once_their_sweep_is_idle() -> None:
    from buzz_operator.janitor.orphans import LiveTrial, left_warm, orphaned

    def warm(trial: str) -> dict:
        return {"metadata": {"name": trial, "labels": {labels.TRIAL: trial, labels.WARM: "true"},
                             "ownerReferences": [{"kind": "BuzzSweep", "uid": "sweep-uid"}]}}

    pods = [warm("t1"), warm("t2")]
    created = [LiveTrial("t1", "u1", 0, settled=False)]
    # a warm pod's trial does not exist yet: it is its sweep's, not an orphan
    assert orphaned(pods, created) == []
    assert left_warm(pods, created, idle=False) == []
    # the sweep starts nothing more: the pod of the trial never created goes; t1's is its launch's
    assert left_warm(pods, created, idle=True) == ["t2"]


def test_trials_the_listing_missed_are_named_and_unread_ones_wait() -> None:
    objects = [obj("a", "t1", "uid-1"), obj("b", "settled-one"), obj("c", "gone"), obj("d", None),
               obj("e", "gone")]
    # the janitor lists the unsettled trials (t1) and reads the others by name
    assert orphans.named_trials(objects, TRIALS[:1]) == ["gone", "settled-one"]
    read = [*TRIALS[:1], LiveTrial("settled-one", "uid-s", 0, True)]
    # "gone" was not read this tick: its objects wait rather than be judged without their trial
    assert orphans.orphaned(objects, read, unknown={"gone"}) == []
    assert orphans.orphaned(objects, read) == ["c", "e"]


def test_only_the_ids_asked_about_are_kept() -> None:
    wanted = {relay_trial_id("u", "t7", 1), "not-ours"}
    ids = orphans.sweep_trial_ids("u", (f"t{i}" for i in range(100)), 2, among=wanted)
    assert ids == {relay_trial_id("u", "t7", 1)}
    assert len(orphans.sweep_trial_ids("u", ["t1", "t2"], 1)) == 4
