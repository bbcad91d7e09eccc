"""When a sweep may be deleted, and when its condition can no longer be trusted."""

from __future__ import annotations

from datetime import datetime


def seconds_until_expiry(
    finished_at: datetime | None, ttl_seconds: int | None, now: datetime
) -> float | None:
    """Seconds until spec.ttlSecondsAfterFinished deletes the sweep; None when it never will
    (no TTL, or not finished). 0 means delete now. Evidence in object storage is kept."""
    if ttl_seconds is None or finished_at is None:
        return None
    return max(0.0, (finished_at - now).total_seconds() + ttl_seconds)


def condition_drift(recorded_hash: str | None, current_hash: str) -> str | None:
    """Why the sweep must stop if its condition changed since it was accepted, else None.

    Trial names and results are keyed by the condition hash: a sweep that carried on after
    its ConfigMap was edited would mix two experiments under one name (Harbor refuses to
    resume a job whose config differs, for the same reason).
    """
    if recorded_hash is None or recorded_hash == current_hash:
        return None
    return (
        f"the condition changed since the sweep started (hash {recorded_hash[:12]} → {current_hash[:12]}); "
        "create a new BuzzSweep for the new condition"
    )
