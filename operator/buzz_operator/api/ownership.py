"""ownerReferences the operator sets: the owner controls its children and deleting it
garbage-collects them (same namespace only — docs/design.md#ownership)."""

from __future__ import annotations

from typing import Any

from buzz_operator.api.common import API_VERSION


def owner_reference(kind: str, name: str, uid: str) -> dict[str, Any]:
    """A controlling owner reference to one of our kinds (BuzzSweep, BuzzTrial)."""
    if not uid:
        raise ValueError(f"the {kind} uid must not be empty: an owner reference needs it")
    return {
        "apiVersion": API_VERSION,
        "kind": kind,
        "name": name,
        "uid": uid,
        "controller": True,
        # Foreground deletion of the owner waits for the child; needs delete on the owner.
        "blockOwnerDeletion": True,
    }
