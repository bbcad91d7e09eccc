"""Who may lead, decided from a coordination.k8s.io Lease (pure; docs/leadership.md).

Kubernetes' own leader election (client-go's, the controller manager's) in the operator's words:
the leader writes its identity into the Lease and renews it every few seconds; a candidate takes
the Lease when it is free, when it is already its own, or when the record has not changed for
the lease's duration **by the candidate's own clock** — it never compares its clock with the
renew time another machine wrote, so skewed clocks cannot hand the Lease to two replicas. A leader
that stops on purpose releases the Lease, so its successor need not wait the duration out.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

# Renewed every RENEW_S; a leader that could not renew for DURATION_S - RENEW_S stops, before any
# candidate may take the Lease (DURATION_S unchanged by its clock): never two leaders at once.
DURATION_S = 8
RENEW_S = 2
RETRY_S = 1


@dataclass(frozen=True)
class Holding:
    """What the Lease says: its holder (None when released), when it was acquired and renewed,
    for how long a holder's claim lasts, and how many times it changed hands."""

    holder: str | None
    acquired: datetime | None
    renewed: datetime | None
    duration_s: int
    transitions: int


@dataclass
class Watch:
    """The Lease as one candidate last saw it, and when (its own monotonic clock) it last changed."""

    seen: Holding | None = None
    since: float = 0.0

    def observe(self, holding: Holding | None, now: float) -> None:
        if holding != self.seen:
            self.seen, self.since = holding, now


def may_take(watch: Watch, me: str, now: float) -> bool:
    """Free, already mine, or unchanged for its whole duration since this candidate saw it change."""
    held = watch.seen
    if held is None or not held.holder or held.holder == me:
        return True
    return now - watch.since >= held.duration_s


def taken(previous: Holding | None, me: str, now: datetime, duration_s: int = DURATION_S) -> dict[str, Any]:
    """The Lease spec that claims (or renews) it for ``me``."""
    mine = previous is not None and previous.holder == me
    return {
        "holderIdentity": me,
        "leaseDurationSeconds": duration_s,
        "acquireTime": _micro(previous.acquired if mine and previous.acquired else now),
        "renewTime": _micro(now),
        "leaseTransitions": (previous.transitions if previous else 0) + (0 if mine else 1),
    }


def released(previous: Holding, now: datetime) -> dict[str, Any]:
    """The Lease spec a leader leaves when it stops on purpose: no holder, so a candidate takes it
    at once (client-go's release writes the same)."""
    return {
        "holderIdentity": None,
        "leaseDurationSeconds": 1,
        "acquireTime": None,
        "renewTime": _micro(now),
        "leaseTransitions": previous.transitions,
    }


def holding_of(spec: dict[str, Any] | None) -> Holding | None:
    """A Lease's spec (as the API serves it, camelCase) read as a Holding; None for no Lease."""
    if spec is None:
        return None
    return Holding(
        holder=spec.get("holderIdentity") or None,
        acquired=_parse(spec.get("acquireTime")),
        renewed=_parse(spec.get("renewTime")),
        duration_s=int(spec.get("leaseDurationSeconds") or DURATION_S),
        transitions=int(spec.get("leaseTransitions") or 0),
    )


def _micro(moment: datetime) -> str:
    """MicroTime, as the Lease's fields are typed: RFC 3339 with microseconds, in UTC."""
    return moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _parse(text: str | None) -> datetime | None:
    if not text:
        return None
    return datetime.fromisoformat(text.replace("Z", "+00:00"))
