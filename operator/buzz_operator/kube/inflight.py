"""The handler runs that still use the operator's API client when the operator stops.

kopf stops a timer by setting its stop flag and waiting only for an instant exit; a timer in
the middle of a run is left running, orphaned, while the cleanup activity goes on (kopf's
daemons.stop_daemon gives timers no cancellation timeout). Closing the client then breaks the
run half way: a sweep reconcile that has read its Secrets fails on "Connector is closed" and
writes nothing. The cleanup waits here, bounded, until the runs in flight are done.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator


class InFlight:
    def __init__(self) -> None:
        self._count = 0
        self._idle = asyncio.Event()
        self._idle.set()

    @property
    def count(self) -> int:
        return self._count

    @contextlib.asynccontextmanager
    async def hold(self) -> AsyncIterator[None]:
        self._count += 1
        self._idle.clear()
        try:
            yield
        finally:
            self._count -= 1
            if self._count == 0:
                self._idle.set()

    async def drained(self, timeout_s: float) -> bool:
        """True when no run is in flight, waiting at most timeout_s for the last to end."""
        if self._idle.is_set():
            return True
        try:
            await asyncio.wait_for(self._idle.wait(), timeout_s)
        except TimeoutError:
            return False
        return True
