"""The operator's Prometheus metrics.

Counts that must agree with the sweep status (trials by state, cost) are gauges rebuilt at
scrape time from what the operator last saw — the sweep status it wrote and the BuzzTrial
objects in its index — so a restarted operator reports the same numbers as `kubectl get`.
Things that happen (phase changes, failures, API requests) are counters and histograms.
Secrets never become label values: labels are names, phases, reasons, hashes and endpoints.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field, fields
from itertools import pairwise
from operator import attrgetter
from typing import Any, Protocol

from prometheus_client import (
    CollectorRegistry,
    Counter,
    Histogram,
    disable_created_metrics,
    start_http_server,
)
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

from buzz_operator.api.trial import BuzzTrialStatus, Phase
from buzz_operator.sweep.columns import MEMORY, Store, Table
from buzz_operator.sweep.trial_view import trial_state
from buzz_operator.trial.state import CORRIDOR

REGISTRY = CollectorRegistry(auto_describe=True)
# *_created series double the exposition and say nothing a restart-aware rate() needs
disable_created_metrics()
PREFIX = "buzz"
# trial phases run from milliseconds (Pending) to an agent deadline of an hour or more
PHASE_BUCKETS = (0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1200, 1800, 3600, 7200)
RELAY_REASONS = frozenset({"RelayUnavailable", "PostgresUnavailable"})
STORAGE_REASONS = frozenset({"StorageUnavailable", "EvidenceExportFailed"})
SWEEP_STATES = ("pending", "running", "succeeded", "failed", "broken", "total")
# a sweep the timer has not reported for this long is gone (deleted) and leaves the metrics
SWEEP_STALE_S = 120.0

API_REQUESTS = Counter(
    f"{PREFIX}_kube_api_requests",
    "Kubernetes API requests by RBAC verb, API group, resource and HTTP status.",
    ["verb", "group", "resource", "code"],
    registry=REGISTRY,
)
PHASE_SECONDS = Histogram(
    f"{PREFIX}_trial_phase_duration_seconds",
    "Time trials spent in each corridor phase.",
    ["phase"],
    buckets=PHASE_BUCKETS,
    registry=REGISTRY,
)
TRIALS_FINISHED = Counter(
    f"{PREFIX}_trials_finished",
    "Trials that reached Succeeded or Failed, by condition and outcome.",
    ["namespace", "condition", "outcome"],
    registry=REGISTRY,
)
FAILURES = Counter(
    f"{PREFIX}_trial_failures",
    "Trial failures and retries by phase, reason and failure class.",
    ["phase", "reason", "failure_class"],
    registry=REGISTRY,
)
RELAY_ERRORS = Counter(
    f"{PREFIX}_relay_errors",
    "Trial steps that failed because the relay or its Postgres was unavailable.",
    ["reason"],
    registry=REGISTRY,
)
STORAGE_ERRORS = Counter(
    f"{PREFIX}_storage_errors",
    "Trial steps that failed writing or exporting evidence.",
    ["reason"],
    registry=REGISTRY,
)


def condition_label(condition_hash: str | None) -> str:
    return (condition_hash or "unknown")[:12]


@dataclass(frozen=True, slots=True)  # one per watched trial: slotted, its words interned
class TrialRecord:
    namespace: str
    name: str
    sweep: str
    condition: str
    endpoint: str
    state: str
    outcome: str
    tokens_in: int
    tokens_out: int
    cost_floor: float
    cost_ceiling: float
    secret_findings: int = 0
    quarantined: bool = False


def trial_record(body: Mapping[str, Any]) -> TrialRecord:
    metadata = body.get("metadata") or {}
    spec = body.get("spec") or {}
    status = BuzzTrialStatus.model_validate(body.get("status") or {})
    return TrialRecord(
        namespace=sys.intern(str(metadata.get("namespace", ""))),
        name=sys.intern(str(metadata.get("name", ""))),
        sweep=sys.intern(str(spec.get("sweepName", ""))),
        condition=sys.intern(condition_label(spec.get("conditionHash"))),
        # per-trial usage is not split by endpoint in status; a roster's endpoints name the series
        endpoint=sys.intern("+".join(sorted(spec.get("endpoints") or [])) or "none"),
        state=trial_state(status).value,
        outcome=status.outcome.value if status.outcome else "none",
        tokens_in=status.tokens.input,
        tokens_out=status.tokens.output,
        cost_floor=status.cost_usd.floor,
        cost_ceiling=status.cost_usd.ceiling,
        secret_findings=status.secret_findings.count if status.secret_findings else 0,
        quarantined=bool(status.secret_findings and status.secret_findings.quarantined),
    )


_RECORD_VALUES = attrgetter(*(f.name for f in fields(TrialRecord)))


def record_table(store: Store = MEMORY) -> Table[TrialRecord]:
    """Where the settled trials' records are kept (sweep/drive/settled.py): columns, not objects."""
    return Table(TrialRecord, floats=("cost_floor", "cost_ceiling"), ints=("tokens_in", "tokens_out"), store=store)


class Settled(Protocol):
    """The settled trials' records, as sweep/drive/settled.SettledTrials keeps them."""

    def records(self) -> Iterable[tuple[Any, ...]]: ...  # in TrialRecord's field order


@dataclass
class SweepRecord:
    status: dict[str, Any]
    seen: float


@dataclass(eq=False)  # registered by identity in the collector registry
class Snapshot(Collector):
    """Gauges over the last-seen trials and sweep statuses."""

    trials: dict[tuple[str, str], TrialRecord] = field(default_factory=dict)  # the watched ones
    sweeps: dict[tuple[str, str], SweepRecord] = field(default_factory=dict)
    settled: Settled | None = None  # the settled ones, kept in columns elsewhere

    def observe_trial(self, body: Mapping[str, Any]) -> None:
        record = trial_record(body)
        self.trials[(record.namespace, record.name)] = record

    def retain_trials(self, keys: Iterable[tuple[str, str]]) -> None:
        """Keep the records of the trials kopf watches (`keys`): one that left its index was
        deleted, or is settled, and then `settled` holds its record."""
        alive = set(keys)
        for key in [k for k in self.trials if k not in alive]:
            del self.trials[key]

    def observe_sweep(
        self, namespace: str, name: str, status: Mapping[str, Any], now: float | None = None
    ) -> None:
        self.sweeps[(namespace, name)] = SweepRecord(dict(status), time.monotonic() if now is None else now)

    def collect(self) -> Iterator[GaugeMetricFamily]:
        yield from self._trial_families()
        yield from self._sweep_families(time.monotonic())

    def _trial_families(self) -> Iterator[GaugeMetricFamily]:
        trials = GaugeMetricFamily(
            f"{PREFIX}_trials",
            "BuzzTrials by sweep, state and outcome.",
            labels=["namespace", "sweep", "state", "outcome"],
        )
        tokens = GaugeMetricFamily(
            f"{PREFIX}_trial_tokens",
            "Tokens used by trials (all tries).",
            labels=["namespace", "sweep", "condition", "endpoint", "direction"],
        )
        cost = GaugeMetricFamily(
            f"{PREFIX}_trial_cost_usd",
            "Spend of trials in USD as a floor/ceiling range.",
            labels=["namespace", "sweep", "condition", "endpoint", "bound"],
        )
        # a gauge over the trials' status, like the others: a restarted operator reports the same
        secrets = GaugeMetricFamily(
            f"{PREFIX}_trial_secret_findings",
            "Suspected secrets the bundle scan found, summed over a sweep's trials (never the secrets).",
            labels=["namespace", "sweep", "quarantined"],
        )
        leaky = GaugeMetricFamily(
            f"{PREFIX}_trials_with_secret_findings",
            "Trials whose bundle holds suspected secrets (condition SecretsFound).",
            labels=["namespace", "sweep", "quarantined"],
        )
        counts: dict[tuple[str, ...], float] = {}
        token_sums: dict[tuple[str, ...], float] = {}
        cost_sums: dict[tuple[str, ...], float] = {}
        finding_sums: dict[tuple[str, ...], float] = {}
        leaky_counts: dict[tuple[str, ...], float] = {}
        for (namespace, _, sweep, condition, endpoint, state, outcome, tokens_in, tokens_out, cost_floor,
             cost_ceiling, secret_findings, quarantined) in self._records():
            _add(counts, (namespace, sweep, state, outcome), 1)
            if secret_findings:
                where = (namespace, sweep, str(quarantined).lower())
                _add(finding_sums, where, secret_findings)
                _add(leaky_counts, where, 1)
            base = (namespace, sweep, condition, endpoint)
            _add(token_sums, (*base, "input"), tokens_in)
            _add(token_sums, (*base, "output"), tokens_out)
            _add(cost_sums, (*base, "floor"), cost_floor)
            _add(cost_sums, (*base, "ceiling"), cost_ceiling)
        for family, sums in ((trials, counts), (tokens, token_sums), (cost, cost_sums), (secrets, finding_sums),
                             (leaky, leaky_counts)):
            for labels, value in sorted(sums.items()):
                family.add_metric(list(labels), value)
            yield family

    def _records(self) -> Iterator[tuple[Any, ...]]:
        """Every record once, as a tuple in TrialRecord's field order (a settled trial's is never
        built as an object): one settled since the last reconcile is in both, the watched first."""
        watched = list(self.trials.values())
        yield from map(_RECORD_VALUES, watched)
        if self.settled is not None:
            seen: dict[str, set[str]] = {}
            for t in watched:
                seen.setdefault(t.namespace, set()).add(t.name)
            for values in self.settled.records():
                if values[1] not in seen.get(values[0], ()):
                    yield values

    def _sweep_families(self, now: float) -> Iterator[GaugeMetricFamily]:
        states = GaugeMetricFamily(
            f"{PREFIX}_sweep_trials",
            "Trial counts as the BuzzSweep status shows them.",
            labels=["namespace", "sweep", "state"],
        )
        cost = GaugeMetricFamily(
            f"{PREFIX}_sweep_cost_usd",
            "Sweep spend in USD as the status shows it.",
            labels=["namespace", "sweep", "bound"],
        )
        waiting = GaugeMetricFamily(
            f"{PREFIX}_sweep_admissions_waiting",
            "Planned trials not admitted yet, by the reason they wait.",
            labels=["namespace", "sweep", "reason"],
        )
        for key in [k for k, r in self.sweeps.items() if now - r.seen > SWEEP_STALE_S]:
            del self.sweeps[key]
        for (namespace, name), record in sorted(self.sweeps.items()):
            status = record.status
            for state in SWEEP_STATES:
                states.add_metric([namespace, name, state], float(status.get(state) or 0))
            spend = status.get("costUSD") or {}
            for bound in ("floor", "ceiling"):
                cost.add_metric([namespace, name, bound], float(spend.get(bound) or 0))
            reason = (status.get("waiting") or {}).get("reason")
            if reason:
                waiting.add_metric([namespace, name, str(reason)], float(status.get("pending") or 0))
        yield states
        yield cost
        yield waiting


def _add(sums: dict[tuple[str, ...], float], key: tuple[str, ...], value: float) -> None:
    sums[key] = sums.get(key, 0.0) + value


SNAPSHOT = Snapshot()
REGISTRY.register(SNAPSHOT)


def phase_change(
    old: BuzzTrialStatus, new: BuzzTrialStatus, *, namespace: str, condition_hash: str | None
) -> None:
    """Count what one status write says happened: a phase left, a trial finished, a failure."""
    if new.phase != old.phase:
        # one write may carry several phases (trial/state.write_can_wait): each is timed
        for left, entered in phases_left(old.phase, new.phase):
            # the phase left first is timed from the status before (a fresh try resets the times)
            key = left.value.lower()
            started = getattr(old.phase_times, key, None) or getattr(new.phase_times, key, None)
            ended = getattr(new.phase_times, entered.value.lower(), None) or new.phase_times.finished
            if started is not None and ended is not None and ended >= started:
                PHASE_SECONDS.labels(left.value).observe((ended - started).total_seconds())
        if new.phase in (Phase.SUCCEEDED, Phase.FAILED):
            outcome = new.outcome.value if new.outcome else "none"
            TRIALS_FINISHED.labels(namespace, condition_label(condition_hash), outcome).inc()
    for phase, reason, failure_class in failures(old, new):
        FAILURES.labels(phase, reason, failure_class).inc()
        if reason in RELAY_REASONS:
            RELAY_ERRORS.labels(reason).inc()
        if reason in STORAGE_REASONS:
            STORAGE_ERRORS.labels(reason).inc()


def phases_left(old: Phase, new: Phase) -> list[tuple[Phase, Phase]]:
    """(phase left, phase entered next) for each phase a write moved past: every corridor phase
    from `old` up to `new` when `new` lies further down the corridor, else just `old` → `new`."""
    if old in CORRIDOR and new in CORRIDOR and CORRIDOR.index(new) > CORRIDOR.index(old):
        walked = CORRIDOR[CORRIDOR.index(old): CORRIDOR.index(new) + 1]
        return list(pairwise(walked))
    return [(old, new)]


def failures(old: BuzzTrialStatus, new: BuzzTrialStatus) -> list[tuple[str, str, str]]:
    """(phase, reason, failure class) of each failure a status write records: a try retried
    (a new attempt record), a step retried in place, or the trial failing for good."""
    found: list[tuple[str, str, str]] = []
    for record in new.failed_tries[len(old.failed_tries) :]:
        found.append((record.phase.value, record.reason, record.failure_class.value))
    if new.step_retries > old.step_retries and new.reason:
        found.append((new.phase.value, new.reason, "infra"))
    if new.phase is Phase.FAILED and old.phase is not Phase.FAILED:
        failure_class = new.failure_class.value if new.failure_class else "unknown"
        found.append((_failed_in(old, new), new.reason or "Unknown", failure_class))
    return found


def _failed_in(old: BuzzTrialStatus, new: BuzzTrialStatus) -> str:
    return old.phase.value if old.phase is not Phase.FAILED else new.phase.value


def serve(address: str) -> None:
    """Serve /metrics on HOST:PORT in a thread (prometheus_client's own server)."""
    host, _, port = address.rpartition(":")
    start_http_server(int(port), addr=host or "0.0.0.0", registry=REGISTRY)
