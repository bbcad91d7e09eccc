"""One replica's part in the election (docs/leadership.md): wait to take the Lease, renew it
while leading, stop the process the moment leading can no longer be proven, release it on a
clean stop. The decisions are leadership/lease.py's; this file only reads and writes the Lease."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from datetime import UTC, datetime
from enum import Enum

import aiohttp
from kubernetes_asyncio.client.exceptions import ApiException

from buzz_operator.kube import leases
from buzz_operator.kube.client import Kube
from buzz_operator.leadership.lease import (
    DURATION_S,
    RENEW_S,
    RETRY_S,
    Watch,
    holding_of,
    may_take,
    released,
    taken,
)

log = logging.getLogger(__name__)


class Try(Enum):
    TAKEN = "taken"  # this replica holds the Lease now
    HELD = "held"  # another replica holds it (or wrote it first)
    UNREACHABLE = "unreachable"  # the API server did not answer


class Elector:
    def __init__(self, kube: Kube, namespace: str, name: str, identity: str, *, duration_s: int = DURATION_S,
                 renew_s: float = RENEW_S, retry_s: float = RETRY_S,
                 clock: Callable[[], float] = time.monotonic) -> None:
        if renew_s >= duration_s:
            raise ValueError(f"renew every {renew_s}s must be shorter than the lease's {duration_s}s")
        self.kube, self.namespace, self.name, self.identity = kube, namespace, name, identity
        self.duration_s, self.renew_s, self.retry_s, self.clock = duration_s, renew_s, retry_s, clock
        self.watch = Watch()
        self.renewed_at: float | None = None

    async def try_take(self) -> Try:
        """One read and, when this replica may, one write over the version read."""
        try:
            lease = await leases.read_lease(self.kube, self.namespace, self.name, timeout_s=self.renew_s)
            previous = holding_of((lease or {}).get("spec") if lease is not None else None)
            now = self.clock()
            self.watch.observe(previous, now)
            if not may_take(self.watch, self.identity, now):
                return Try.HELD
            spec = taken(previous, self.identity, datetime.now(UTC), self.duration_s)
            written = (await leases.create_lease(self.kube, self.namespace, self.name, spec, timeout_s=self.renew_s)
                       if lease is None else
                       await leases.patch_lease(self.kube, lease, spec, timeout_s=self.renew_s))
        except (TimeoutError, ApiException, OSError, aiohttp.ClientError) as error:
            log.warning("lease %s/%s: %s", self.namespace, self.name, f"{type(error).__name__}: {error}"[:200])
            return Try.UNREACHABLE
        if not written:
            return Try.HELD
        self.renewed_at = now
        return Try.TAKEN

    async def acquire(self) -> None:
        """Returns once this replica leads."""
        log.info("lease %s/%s: %s is standing by", self.namespace, self.name, self.identity)
        while True:
            if await self.try_take() is Try.TAKEN:
                break
            await asyncio.sleep(self.retry_s)
        log.info("lease %s/%s: %s leads", self.namespace, self.name, self.identity)

    async def hold(self, lost: Callable[[str], None]) -> None:
        """Renew until leading ends: another replica took the Lease, or no renewal succeeded for
        the duration less one renewal (so this replica stops before any other may take over)."""
        deadline_s = self.duration_s - self.renew_s
        while True:
            await asyncio.sleep(self.renew_s)
            outcome = await self.try_take()
            if outcome is Try.HELD:
                lost(f"another replica holds lease {self.namespace}/{self.name}")
                return
            if outcome is Try.UNREACHABLE and self.renewed_at is not None and \
                    self.clock() - self.renewed_at >= deadline_s:
                lost(f"lease {self.namespace}/{self.name} not renewed for {deadline_s}s")
                return

    async def release(self) -> None:
        """Leave the Lease free when this replica still holds it; a failure only makes the successor
        wait the duration out."""
        try:
            lease = await leases.read_lease(self.kube, self.namespace, self.name, timeout_s=self.renew_s)
            held = holding_of(lease.get("spec")) if lease is not None else None
            if lease is not None and held is not None and held.holder == self.identity:
                await leases.patch_lease(self.kube, lease, released(held, datetime.now(UTC)),
                                           timeout_s=self.renew_s)
                log.info("lease %s/%s: %s released it", self.namespace, self.name, self.identity)
        except (TimeoutError, ApiException, OSError, aiohttp.ClientError) as error:
            log.warning("lease %s/%s: not released: %s", self.namespace, self.name, error)
