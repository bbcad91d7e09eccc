"""Per-condition rows of a sweep — the seed's ``summarize.py`` (docs/failures.md#summaries).

Rows are keyed by (condition, manifest_sha256, stack digest): two runs pool only if they were the
same experiment, and the stack is part of the experiment — buzz-acp carries a production base
prompt that changes behaviour without changing the condition hash. Failed and timed-out trials count as reward 0 and their cost counts; nothing is
dropped from the denominator. The caveats that can void a comparison on their own are kept
beside the score as flags, in the seed's order and spelling: ``timeout×n``,
``LAUNCH-FAILED×n``, ``error×n``, ``ROUND-CAPPED×n``, ``unpriced×n``, ``VERIFIER-BROKEN×n``,
``no-done×n``, and one ``clock×m`` per distinct multiplier other than 1; beyond the seed's,
``SECRETS×n`` and ``PRESSURE×n`` (processes OOM-killed while the agents worked).

Beyond the seed: pass@k per row (the sweep room's unbiased estimator, a trial passing at
reward ≥ 1.0, over every committed trial as the mean is), the cost ceiling beside the floor
(``cost_usd_including_handoff_bound``, docs/accounting.md#cost-range), and the trials that have not committed yet.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from statistics import mean
from typing import Any

from buzz_operator.api.stack import pooled_stack
from buzz_operator.scoring.passing import PASS_THRESHOLD, k_values, pass_at_k

from .trial import UNKNOWN_CONDITION, TrialRecord


@dataclass(slots=True)
class ConditionRow:
    """Every committed trial that ran under one manifest hash and one stack ("" when unknown)."""

    condition: str
    manifest_sha256: str
    stack_digest: str = ""
    trials: list[TrialRecord] = field(default_factory=list)

    @property
    def n(self) -> int:
        return len(self.trials)

    @property
    def pass_rate(self) -> float:
        return mean(t.reward for t in self.trials)

    def _count(self, predicate: Any) -> int:
        return sum(1 for t in self.trials if predicate(t))

    @property
    def timeouts(self) -> int:
        return self._count(lambda t: t.outcome == "timeout")

    @property
    def launch_failures(self) -> int:
        return self._count(lambda t: t.outcome == "launch")

    @property
    def errors(self) -> int:
        return self._count(lambda t: t.outcome == "error")

    @property
    def round_capped(self) -> int:
        return self._count(lambda t: t.round_capped)

    @property
    def unreconciled(self) -> int:
        return self._count(lambda t: not t.reconciled)

    @property
    def verifier_broken(self) -> int:
        return self._count(lambda t: t.verifier_broken)

    @property
    def stopped_without_done(self) -> int:
        return self._count(lambda t: t.stopped_without_done)

    @property
    def pressured(self) -> int:
        """Trials whose container had processes OOM-killed while the agents worked: scored, but the
        box may have decided (docs/resources.md#pressure)."""
        return self._count(lambda t: t.oom_kills > 0)

    @property
    def secret_findings(self) -> int:
        """Trials whose bundle holds suspected secrets: not a score caveat, a leak to deal with."""
        return self._count(lambda t: t.secret_findings > 0)

    @property
    def timeout_multipliers(self) -> list[float]:
        """Every distinct clock in the row: a resumed sweep can straddle a settings change."""
        return sorted({t.timeout_multiplier for t in self.trials})

    @property
    def agents(self) -> int:
        return max((t.agents for t in self.trials), default=0)

    @property
    def cost_per_trial(self) -> float:
        return mean(t.cost_usd for t in self.trials)

    @property
    def total_cost(self) -> float:
        return sum(t.cost_usd for t in self.trials)

    @property
    def cost_ceiling_per_trial(self) -> float:
        return mean(t.cost_usd_ceiling for t in self.trials)

    @property
    def total_cost_ceiling(self) -> float:
        return sum(t.cost_usd_ceiling for t in self.trials)

    @property
    def tokens_per_trial(self) -> float:
        return mean(t.tokens for t in self.trials)

    @property
    def total_tokens(self) -> int:
        return sum(t.tokens for t in self.trials)

    @property
    def seconds_per_trial(self) -> float:
        """The seed's ``sec`` column: mean agent_execution time."""
        return mean(t.agent_seconds for t in self.trials)

    @property
    def pass_at_k(self) -> dict[str, float]:
        by_task: dict[str, list[float]] = defaultdict(list)
        for t in self.trials:
            by_task[t.task].append(t.reward)
        most = max((len(v) for v in by_task.values()), default=0)
        out: dict[str, float] = {}
        for k in k_values(most) if most else []:
            estimates = [
                pass_at_k(len(v), sum(1 for r in v if r >= PASS_THRESHOLD), k)
                for v in by_task.values()
                if len(v) >= k
            ]
            if estimates:
                out[str(k)] = sum(estimates) / len(estimates)
        return out

    @property
    def flags(self) -> list[str]:
        found = []
        for label, count in (
            ("timeout", self.timeouts),
            ("LAUNCH-FAILED", self.launch_failures),
            ("error", self.errors),
            ("ROUND-CAPPED", self.round_capped),
            ("unpriced", self.unreconciled),
            ("VERIFIER-BROKEN", self.verifier_broken),
            ("no-done", self.stopped_without_done),
            # beyond the seed: its scan result lived only in each bundle's summary.json
            ("SECRETS", self.secret_findings),
            ("PRESSURE", self.pressured),
        ):
            if count:
                found.append(f"{label}×{count}")
        found += [f"clock×{m:g}" for m in self.timeout_multipliers if m != 1.0]
        return found


def group(records: Iterable[TrialRecord]) -> list[ConditionRow]:
    """Rows sorted by (condition, hash, stack). A trial known only by its hash (it died before any
    file named its condition) takes the name its siblings under the same hash report; one whose
    stack is unknown joins the one stack its siblings ran (api.stack.pooled_stack)."""
    records = list(records)
    names = {r.manifest_sha256: r.condition for r in records if r.condition != UNKNOWN_CONDITION}
    stacks: dict[str, set[str]] = defaultdict(set)
    for r in records:
        if r.stack_digest:
            stacks[r.manifest_sha256].add(r.stack_digest)
    rows: dict[tuple[str, str, str], ConditionRow] = {}
    for record in sorted(records, key=lambda r: r.name):
        condition = names.get(record.manifest_sha256, record.condition)
        stack = pooled_stack(record.stack_digest, stacks[record.manifest_sha256]) or ""
        key = (condition, record.manifest_sha256, stack)
        rows.setdefault(key, ConditionRow(*key)).trials.append(record)
    return sorted(rows.values(), key=lambda row: (row.condition, row.manifest_sha256, row.stack_digest))


@dataclass(frozen=True, slots=True)
class ResultsTable:
    """A sweep read from its bundles: the rows plus the trials that are not rows yet."""

    sweep: str
    rows: Sequence[ConditionRow]
    unfinished: Sequence[str] = ()
    skipped: Sequence[str] = ()

    @property
    def trials(self) -> list[TrialRecord]:
        return [t for row in self.rows for t in row.trials]


def tabulate(
    sweep: str, records: Iterable[TrialRecord], *, unfinished: Iterable[str] = (), skipped: Iterable[str] = ()
) -> ResultsTable:
    return ResultsTable(sweep, group(records), tuple(sorted(unfinished)), tuple(sorted(skipped)))
