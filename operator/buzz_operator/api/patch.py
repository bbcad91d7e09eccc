"""JSON merge patch (RFC 7396) between two API documents: what a status write sends.

Generic, like api/conditions.py: the sweep's and the trial's status writes both diff their old
and new status with it, so neither room imports the other for it.
"""

from __future__ import annotations

from typing import Any


def merge_patch(before: dict[str, Any], after: dict[str, Any]) -> dict[str, Any]:
    # Objects are diffed key by key (a merge patch merges them, so a key missing from the
    # patch would survive); lists and scalars are replaced whole.
    patch: dict[str, Any] = {}
    for key, value in after.items():
        old = before.get(key)
        if isinstance(old, dict) and isinstance(value, dict):
            nested = merge_patch(old, value)
            if nested:
                patch[key] = nested
        elif old != value:
            patch[key] = value
    patch.update({key: None for key in before.keys() - after.keys()})
    return patch
