"""Warm trial pods (pure; docs/warm-pods.md): the pod of a trial that is not created yet, made by
its sweep ahead of time and claimed by the trial when it launches.

A warm pod is exactly the pod the trial's launch would make for its first try — same name, same
spec — but owned by the sweep and labelled warm until claimed, so nothing else mistakes it for a
running trial's pod and a deleted sweep takes it along. It holds no secret: keys and each seat's
environment reach the pod over exec after the claim, as they reach a cold pod. The spec digest it
carries lets the trial claim it only when it is the pod it would make itself; a stale one (a
Service moved, an image re-pinned) is replaced, never used."""

from __future__ import annotations

import copy
import hashlib
import json
from collections.abc import Mapping
from typing import Any

from buzz_operator.api import labels
from buzz_operator.api.common import GROUP
from buzz_operator.api.ownership import owner_reference

SPEC_DIGEST = f"{GROUP}/warm-spec-digest"


def spec_digest(pod: Mapping[str, Any]) -> str:
    """sha256 of the pod's spec and labels as the operator built them (before any server default)."""
    shape = {"spec": pod.get("spec") or {}, "labels": {k: v for k, v in ((pod.get("metadata") or {}).get("labels") or {}).items()
                                                       if k != labels.WARM}}
    return hashlib.sha256(json.dumps(shape, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def as_warm(pod: Mapping[str, Any], *, sweep: str, sweep_uid: str) -> dict[str, Any]:
    """The trial pod made warm: owned by the sweep, labelled warm, its spec digest annotated."""
    warm = copy.deepcopy(dict(pod))
    meta = warm["metadata"]
    meta["ownerReferences"] = [owner_reference("BuzzSweep", sweep, sweep_uid)]
    meta["annotations"] = {**(meta.get("annotations") or {}), SPEC_DIGEST: spec_digest(pod)}
    meta["labels"] = {**meta["labels"], labels.WARM: "true"}
    return warm


def is_warm(pod: Mapping[str, Any] | None) -> bool:
    return pod is not None and ((pod.get("metadata") or {}).get("labels") or {}).get(labels.WARM) == "true"


def claimable(found: Mapping[str, Any], wanted: Mapping[str, Any]) -> bool:
    """The warm pod ``found`` is the pod ``wanted`` (the trial's own build) and still usable."""
    meta = found.get("metadata") or {}
    phase = (found.get("status") or {}).get("phase")
    return (is_warm(found) and not meta.get("deletionTimestamp") and phase not in ("Succeeded", "Failed")
            and (meta.get("annotations") or {}).get(SPEC_DIGEST) == spec_digest(wanted))


def claim_patch(trial_name: str, trial_uid: str) -> dict[str, Any]:
    """The merge patch that hands a warm pod to its trial: the trial owns it, the warm label goes."""
    return {"metadata": {"ownerReferences": [owner_reference("BuzzTrial", trial_name, trial_uid)],
                         "labels": {labels.WARM: None}, "annotations": {SPEC_DIGEST: None}}}
