"""Warm pods (sweep/warm.py, pod/warm_pod.py): how many, whose, which go, and when a trial may
claim one."""

from __future__ import annotations

import copy

from buzz_operator.api import labels
from buzz_operator.pod.warm_pod import SPEC_DIGEST, as_warm, claim_patch, claimable, is_warm
from buzz_operator.sweep.planner import plan_trials
from buzz_operator.sweep.warm import stale_warm, warm_target, warm_trials


def test_warm_pods_stay_within_the_caps_plus_the_surplus() -> None:
    base = dict(surplus=2, waiting=10, parallelism=4, own_active=4, operator_cap=None, operator_active=4, held=False)
    assert warm_target(**base) == 2
    assert warm_target(**{**base, "waiting": 1}) == 1
    assert warm_target(**{**base, "surplus": 0}) == 0
    assert warm_target(**{**base, "held": True}) == 0
    # the operator's cap: 6 active of 7, so room for 7 + 2 - 6 = 3 pods, still at most the surplus
    assert warm_target(**{**base, "operator_cap": 7, "operator_active": 6}) == 2
    assert warm_target(**{**base, "operator_cap": 4, "operator_active": 5}) == 1
    # a sweep over its parallelism (a spec edit lowered it): no warm pod until it is back within
    assert warm_target(**{**base, "parallelism": 2}) == 0


def test_warm_trials_are_the_next_in_plan_order() -> None:
    planned = plan_trials("s", "uid", "c" * 64, ["a", "b", "c"], 1)
    assert warm_trials(planned, 2) == planned[:2]


def test_stale_warm_pods() -> None:
    pods = {"t1": "t1", "t2": "t2", "t3": "t3", "t4": "t4"}
    stale = stale_warm(pods, wanted={"t2"}, existing={"t1", "t3"}, finished={"t3"})
    # t1: created, not claimed yet — its launch claims it; t2: wanted; t3: ended unclaimed; t4: not wanted
    assert stale == ["t3", "t4"]


def pod() -> dict:
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "t1", "namespace": "ns", "labels": {labels.TRIAL: "t1"},
                         "ownerReferences": [{"kind": "BuzzTrial", "name": "t1", "uid": "x"}]},
            "spec": {"containers": [{"name": "task", "image": "i:1"}]}}


def test_a_trial_claims_only_the_warm_pod_it_would_make() -> None:
    wanted = pod()
    warm = as_warm(wanted, sweep="s", sweep_uid="sweep-uid")
    assert is_warm(warm) and not is_warm(wanted)
    assert warm["metadata"]["ownerReferences"][0]["kind"] == "BuzzSweep" and SPEC_DIGEST in warm["metadata"]["annotations"]
    assert wanted["metadata"]["ownerReferences"][0]["kind"] == "BuzzTrial", "the trial's own build is left as it was"
    assert claimable(warm, wanted)
    other = copy.deepcopy(wanted)
    other["spec"]["containers"][0]["image"] = "i:2"
    assert not claimable(warm, other), "a stale spec is replaced, never used"
    assert not claimable({**warm, "metadata": {**warm["metadata"], "deletionTimestamp": "now"}}, wanted)
    assert not claimable({**warm, "status": {"phase": "Failed"}}, wanted)
    patch = claim_patch("t1", "trial-uid")
    assert patch["metadata"]["labels"] == {labels.WARM: None}
    assert patch["metadata"]["ownerReferences"][0]["uid"] == "trial-uid"


def test_a_warm_pod_never_takes_an_admitted_trials_room() -> None:
    from buzz_operator.sweep.warm import given_back, room_for_new, sweep_pods

    def trial_pod(name: str, node: str | None, *, warm: bool = False, ending: bool = False, at: str = "1") -> dict:
        meta = {"name": name, "creationTimestamp": at,
                "labels": {labels.TRIAL: name, **({labels.WARM: "true"} if warm else {})},
                **({"deletionTimestamp": "now"} if ending else {})}
        return {"metadata": meta, "spec": {"nodeName": node} if node else {}}

    pods = sweep_pods([trial_pod("t1", "n1"), trial_pod("t2", None), trial_pod("t3", "n1", warm=True, at="2"),
                       trial_pod("t4", "n1", warm=True, at="3"), trial_pod("t5", None, warm=True),
                       trial_pod("t0", "n1", ending=True)])
    assert (pods.trial_pods, pods.unplaced, pods.placed_warm) == (2, 1, ["t4", "t3"])
    # t2 waits for a node while t3 and t4 hold one: the newest warm pod is given back
    assert given_back(pods) == ["t4"]
    # three active trials, two with pods, one of those unplaced: two of four warm pods held back
    assert room_for_new(4, 3, pods) == 2
    assert room_for_new(1, 3, pods) == 0
    # t4's trial was just created: its launch is about to claim it, so t3 goes instead
    assert given_back(sweep_pods([trial_pod("t2", None), trial_pod("t3", "n1", warm=True, at="2"),
                                  trial_pod("t4", "n1", warm=True, at="3")], existing={"t4"})) == ["t3"]
    settled = sweep_pods([trial_pod("t1", "n1")])
    assert given_back(settled) == [] and room_for_new(2, 1, settled) == 2
