"""How many warm pods a sweep keeps, for which trials, and which it deletes (pure; docs/warm-pods.md).

Warm pods are the pods of the next trials in plan order, made while every slot is taken so that a
trial starts on a ready pod the moment a slot frees. Bounds: at most ``surplus`` of them (the
sweep's spec.warmPods, else the operator's default), and never more pods than the caps allow plus
that surplus — this sweep's active trials and warm pods together stay within spec.parallelism +
surplus, and the operator's active trials and this sweep's warm pods within its cap + surplus. A
held sweep (suspended, out of budget) keeps none. A warm pod never takes an admitted trial's
room: a trial whose pod is not made yet holds one warm pod back, and a warm pod on a node while a
trial pod of the sweep waits for one is given back."""

from __future__ import annotations

from collections.abc import Collection, Container, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from buzz_operator.api import labels
from buzz_operator.api.trial_names import pod_name
from buzz_operator.sweep.planner import PlannedTrial


def warm_target(*, surplus: int, waiting: int, parallelism: int, own_active: int, operator_cap: int | None,
                operator_active: int, held: bool) -> int:
    """How many warm pods the sweep should have now. ``own_active`` and ``operator_active``
    count active trials (those just admitted included); ``waiting``, trials not yet created."""
    if held or surplus <= 0 or waiting <= 0:
        return 0
    room = parallelism + surplus - own_active
    if operator_cap is not None:
        room = min(room, operator_cap + surplus - operator_active)
    return max(0, min(surplus, waiting, room))


@dataclass(frozen=True)
class SweepPods:
    """The sweep's trial pods as the warm policy reads them."""

    trial_pods: int  # pods of its trials (claimed warm ones included), not ending
    unplaced: int  # of those, the ones the scheduler has not placed yet
    placed_warm: list[str]  # warm pods on a node whose trial is not created yet, newest first


def sweep_pods(pods: Iterable[Mapping[str, Any]], existing: Container[str] = ()) -> SweepPods:
    """``existing``: the sweep's trials; a warm pod of one is about to be claimed, never given back."""
    trial_pods = unplaced = 0
    warm: list[tuple[str, str]] = []
    for pod in pods:
        meta = pod.get("metadata") or {}
        marks = meta.get("labels") or {}
        if labels.TRIAL not in marks or meta.get("deletionTimestamp"):
            continue
        on_node = bool((pod.get("spec") or {}).get("nodeName"))
        if marks.get(labels.WARM) == "true":
            if on_node and marks[labels.TRIAL] not in existing:
                warm.append((str(meta.get("creationTimestamp") or ""), str(meta["name"])))
            continue
        trial_pods += 1
        unplaced += not on_node
    return SweepPods(trial_pods, unplaced, [name for _, name in sorted(warm, reverse=True)])


def room_for_new(target: int, own_active: int, pods: SweepPods) -> int:
    """How many of the ``target`` warm pods may be there now: an active trial whose pod is not
    made yet, or not placed yet, gets its room first — a warm pod made before its pod would be
    placed before it — so each such trial holds one back."""
    return max(target - max(own_active - pods.trial_pods, 0) - pods.unplaced, 0)


def given_back(pods: SweepPods) -> list[str]:
    """Warm pods to delete because a trial pod of the sweep waits for a node while they hold one:
    a warm pod is for a later trial and must never keep an admitted one from starting (at
    parallelism 1 that trial would otherwise wait for a slot only its own end frees)."""
    return pods.placed_warm[:pods.unplaced]


def warm_trials(upcoming: Sequence[PlannedTrial], target: int) -> list[PlannedTrial]:
    """The trials to keep warm pods for: the first ``target`` not yet created, in plan order."""
    return list(upcoming[:target])


def stale_warm(pods: Mapping[str, str], *, wanted: Collection[str], existing: Container[str],
               finished: Container[str]) -> list[str]:
    """Warm pods to delete, given ``pods`` (pod name -> its trial's name): of a trial not created
    and no longer wanted; or of a trial that ended without claiming it (a retry's pod is its own).
    A created trial's unclaimed pod is left for its launch to claim."""
    stale = []
    for pod, trial in sorted(pods.items()):
        if trial in existing:
            if trial in finished:
                stale.append(pod)
        elif trial not in wanted or pod != pod_name(trial, 0):
            stale.append(pod)
    return stale
