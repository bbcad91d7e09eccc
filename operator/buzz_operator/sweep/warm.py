"""How many warm pods a sweep keeps, for which trials, and which it deletes (pure; docs/warm-pods.md).

Warm pods are the pods of the next trials in plan order, made while every slot is taken so that a
trial starts on a ready pod the moment a slot frees. Bounds: at most ``surplus`` of them (the
sweep's spec.warmPods, else the operator's default), and never more pods than the caps allow plus
that surplus — this sweep's active trials and warm pods together stay within spec.parallelism +
surplus, and the operator's active trials and this sweep's warm pods within its cap + surplus. A
held sweep (suspended, out of budget) keeps none. A warm pod is only made once every active trial
of the sweep has its pod on a node, so it never takes an admitted trial's room."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
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


def placed(pods: Iterable[Mapping[str, Any]]) -> int:
    """Trial pods (not warm, not ending) the scheduler has placed on a node."""
    count = 0
    for pod in pods:
        meta = pod.get("metadata") or {}
        marks = meta.get("labels") or {}
        if labels.TRIAL not in marks or marks.get(labels.WARM) == "true" or meta.get("deletionTimestamp"):
            continue
        if (pod.get("spec") or {}).get("nodeName"):
            count += 1
    return count


def may_add(own_active: int, placed_trial_pods: int) -> bool:
    """A new warm pod only once every active trial of the sweep has its pod on a node: made
    earlier, a warm pod could take the room an admitted trial's pod is about to ask for, and that
    trial could then not start while the warm pod waits for it to finish."""
    return placed_trial_pods >= own_active


def warm_trials(upcoming: Sequence[PlannedTrial], target: int) -> list[PlannedTrial]:
    """The trials to keep warm pods for: the first ``target`` not yet created, in plan order."""
    return list(upcoming[:target])


def stale_warm(pods: Mapping[str, str], *, wanted: Collection[str], existing: Collection[str],
               finished: Collection[str]) -> list[str]:
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
