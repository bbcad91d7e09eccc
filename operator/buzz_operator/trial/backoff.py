"""Delay before an infra retry: exponential, capped, the shape Kubernetes Jobs and Harbor use."""

from __future__ import annotations


def retry_delay(retry: int, base: float, cap: float) -> float:
    """Seconds to wait before retry number ``retry`` (1 = the first retry): base·2^(retry-1), ≤ cap.

    No jitter: the delay is written into status.retryAfter, and a deterministic value lets an
    operator restart compute the same schedule. Trials of one sweep fail at different times
    anyway, so they do not retry in lockstep.
    """
    if retry < 1:
        raise ValueError(f"retry must be >= 1, not {retry}")
    if base < 0 or cap < 0:
        raise ValueError(f"base and cap must be >= 0 (base={base}, cap={cap})")
    if base == 0:
        return 0.0
    # Compare exponents rather than computing 2**retry for huge retry counts.
    if retry - 1 >= 64 or base * 2 ** (retry - 1) >= cap:
        return float(cap)
    return float(base * 2 ** (retry - 1))
