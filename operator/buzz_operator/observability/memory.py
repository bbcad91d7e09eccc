"""Handing freed memory back to the system, so the operator's RSS follows what it holds.

With the settled trials out of kopf's watch (docs/design.md#settled-trials) the operator's live
heap barely grows with a sweep, yet its RSS did, by about 3 MB per 1,000 trials
(bench/scale.py): every watch event, page and trial body is parsed and dropped, and glibc's
allocator keeps the freed space it cannot return, because a few long-lived objects (a summary, a
metrics record) were allocated among the short-lived ones. `malloc_trim(0)` returns the free
pages of every arena; it costs milliseconds, so it runs at most once per TRIM_EVERY_S, after a
reconcile (the operator's largest transient). TRIM_EVERY_S is the sweep reconcile's own interval:
at 30 s the room the watch events of six reconciles had freed sat in the RSS between trims, and
the 100,000-trial run's samples swung by ±10 MB with it (docs/performance.md#the-100000-trial-run).
Elsewhere than glibc it does nothing.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import time
from collections.abc import Callable

TRIM_EVERY_S = 5.0  # handlers.SWEEP_INTERVAL_S by default: once per reconcile of one sweep


def _glibc_trim() -> Callable[[int], int] | None:
    name = ctypes.util.find_library("c")
    if not name:
        return None
    try:
        trim = ctypes.CDLL(name).malloc_trim
    except (OSError, AttributeError):  # not glibc (musl has no malloc_trim)
        return None
    trim.argtypes, trim.restype = [ctypes.c_size_t], ctypes.c_int
    return trim


_TRIM = _glibc_trim()
_last = 0.0


def trim(now: float | None = None) -> bool:
    """Return freed memory to the system if TRIM_EVERY_S passed since the last time; True when it ran."""
    global _last
    now = time.monotonic() if now is None else now
    if _TRIM is None or now - _last < TRIM_EVERY_S:
        return False
    _last = now
    _TRIM(0)
    return True
