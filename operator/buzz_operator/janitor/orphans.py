"""Which leftovers are orphans, decided from listed objects only (pure).

Owner references already hand pods and Secrets to the garbage collector when their BuzzTrial
is deleted; the janitor covers what it cannot: an object whose owner reference is missing or
names a trial that no longer exists, and relay channels, which live outside Kubernetes.

Safety: objects are listed *before* trials, so a trial created in between is in the trial list
and its new pod is not in the pod list; an object is an orphan only when no listed trial has
its owner's uid (or, without an owner reference, its trial label's name).
"""

from __future__ import annotations

from collections.abc import Container, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from buzz_operator.api import labels
from buzz_operator.api.trial_names import relay_trial_id

MAX_DELETES_PER_TICK = 50
MAX_ARCHIVES_PER_TICK = 20


@dataclass(frozen=True, slots=True)  # one per trial of the namespace at each janitor tick
class LiveTrial:
    name: str
    uid: str
    retries: int
    settled: bool  # terminal and torn down


def _trial_owner_uid(obj: Mapping[str, Any]) -> str | None:
    for ref in (obj.get("metadata") or {}).get("ownerReferences") or []:
        if ref.get("kind") == "BuzzTrial":
            return str(ref.get("uid") or "") or None
    return None


def named_trials(objects: Iterable[Mapping[str, Any]], trials: Sequence[LiveTrial]) -> list[str]:
    """The trial names the objects carry (their trial label) that `trials` does not hold, sorted:
    the janitor lists the unsettled trials only (few: the active ones) and reads these by name,
    never listing every trial of the namespace (docs/performance.md#memory)."""
    names = {t.name for t in trials}
    return sorted({trial for obj in objects
                   if (trial := ((obj.get("metadata") or {}).get("labels") or {}).get(labels.TRIAL))
                   and trial not in names})


def orphaned(objects: Iterable[Mapping[str, Any]], trials: Sequence[LiveTrial], *,
             limit: int = MAX_DELETES_PER_TICK, unknown: Container[str] = ()) -> list[str]:
    """Names of trial-labelled objects whose trial is gone (at most `limit`, oldest name first).
    `trials` holds every trial the objects name, except those in `unknown` (not read this tick),
    whose objects wait for the next."""
    uids = {t.uid for t in trials}
    names = {t.name for t in trials}
    found = []
    for obj in objects:
        meta = obj.get("metadata") or {}
        trial = (meta.get("labels") or {}).get(labels.TRIAL)
        # a warm pod waits for a trial not created yet: its sweep owns and collects it (docs/warm-pods.md)
        if not trial or meta.get("deletionTimestamp") or (meta.get("labels") or {}).get(labels.WARM) == "true":
            continue
        if trial in unknown:
            continue
        owner = _trial_owner_uid(obj)
        if (owner is not None and owner not in uids) or (owner is None and trial not in names):
            found.append(str(meta["name"]))
    return sorted(found)[:limit]


def left_warm(pods: Iterable[Mapping[str, Any]], trials: Sequence[LiveTrial], *, idle: bool) -> list[str]:
    """Warm pods (docs/warm-pods.md) of a sweep that starts no trial any more (suspended or
    finished: ``idle``) whose trial was never created: an operator stopped before the sweep's next
    tick deleted them leaves them, and nothing would claim them."""
    if not idle:
        return []
    names = {t.name for t in trials}
    found = []
    for pod in pods:
        meta = pod.get("metadata") or {}
        marks = meta.get("labels") or {}
        if marks.get(labels.WARM) == "true" and not meta.get("deletionTimestamp") and marks.get(labels.TRIAL) not in names:
            found.append(str(meta["name"]))
    return sorted(found)[:MAX_DELETES_PER_TICK]


def live_trial_ids(sweep_uid: str, trials: Sequence[LiveTrial]) -> set[str]:
    """Relay trial ids a running trial may still use: its current try's."""
    return {relay_trial_id(sweep_uid, t.name, t.retries) for t in trials if not t.settled}


def sweep_trial_ids(sweep_uid: str, planned_names: Iterable[str], max_retries: int,
                    among: Container[str] | None = None) -> set[str]:
    """The relay trial ids this sweep can have made (its planned trials × every try) — only
    those in `among` when it is given: the names are read as a stream and only the ids asked
    about are kept, not one per trial and try."""
    ids = (relay_trial_id(sweep_uid, name, retry) for name in planned_names for retry in range(max_retries + 1))
    return {i for i in ids if among is None or i in among}


def unarchived_orphans(rows: Iterable[str], *, live: set[str], ours: set[str],
                       limit: int = MAX_ARCHIVES_PER_TICK) -> list[str]:
    """Unarchived relay trial ids of this sweep that no running try uses."""
    return sorted(t for t in rows if t in ours and t not in live)[:limit]
