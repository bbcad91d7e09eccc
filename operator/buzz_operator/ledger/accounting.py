"""A trial's accounting: one receipt per seat, totals, and a reconciliation verdict (docs/accounting.md#pricing, docs/accounting.md#reconciliation).

``account`` is pure (seats + parsed logs + prices in, verdict out); ``collect_accounting`` adds
the log reading and the seed's guarantee that accounting never raises: a defect here must not
destroy a paid-for trial, so a failure comes back as an unreconciled accounting with its reason.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from buzz_operator.ledger.agent_log import SeatLog, find_seat_logs, scan_seat_logs
from buzz_operator.ledger.pricing import UNPRICED, PriceTerms, handoff_bound_cost, price_usage
from buzz_operator.ledger.receipt import RECEIPT_SOURCE, SeatReceipt


class SeatLike(Protocol):
    """One provisioned seat; ``condition.plan_seats`` yields these (docs/condition.md#seats ids ``<class>-<n>``)."""

    @property
    def seat_id(self) -> str: ...
    @property
    def class_id(self) -> str: ...
    @property
    def kind(self) -> str: ...
    @property
    def endpoint(self) -> str: ...
    @property
    def model_revision(self) -> str: ...


@dataclass(frozen=True, slots=True)
class TrialAccounting:
    """Aggregate trial usage with an explicit reconciliation verdict (docs/accounting.md#reconciliation).

    Defaults are what a failed accounting reports, as in the seed (``cost_usd`` 0.0).
    """

    receipts: tuple[SeatReceipt, ...] = ()
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    cost_usd_no_cache_discount: float = 0.0
    estimated_cache_read_tokens: int = 0
    handoffs: int = 0
    handoff_truncations: int = 0
    handoff_cost_usd_upper_bound: float = 0.0
    reconciled: bool = False
    reconciliation_note: str = ""
    warnings: tuple[str, ...] = ()
    # Provisioned and never woken: a real zero, and a finding about the roster's shape.
    idle_agents: tuple[str, ...] = ()
    # Took turns yet reported no usage: the instrumentation failure that undercounts cost.
    unmeasured_agents: tuple[str, ...] = ()

    @property
    def assumes_cache_discount(self) -> bool:
        """True when some input was priced at the cached rate (docs/accounting.md#pricing)."""
        return self.estimated_cache_read_tokens > 0

    @property
    def cache_read_tokens_are_measured(self) -> bool:
        """True only if every seat's cache split came from the provider: a mix is the weaker claim."""
        return bool(self.receipts) and not any(r.cache_read_tokens_are_estimated for r in self.receipts)

    @property
    def cost_usd_including_handoff_bound(self) -> float:
        """Upper bound on the trial's cost with unmetered auto-compaction included."""
        return self.cost_usd + self.handoff_cost_usd_upper_bound

    def to_metadata(self) -> dict[str, Any]:
        """The accounting keys stored in Harbor's ``agent_result.metadata`` (docs/accounting.md#harbor-metadata ``to_metadata``)."""
        return {
            "accounting_source": RECEIPT_SOURCE,
            "accounting_reconciled": self.reconciled,
            "accounting_note": self.reconciliation_note,
            "accounting_warnings": list(self.warnings),
            "accounting_cost_usd_no_cache_discount": self.cost_usd_no_cache_discount,
            "accounting_estimated_cache_read_tokens": self.estimated_cache_read_tokens,
            "accounting_assumes_cache_discount": self.assumes_cache_discount,
            "accounting_cache_read_tokens_are_measured": self.cache_read_tokens_are_measured,
            "accounting_handoffs": self.handoffs,
            "accounting_handoff_truncations": self.handoff_truncations,
            "accounting_handoff_cost_usd_upper_bound": self.handoff_cost_usd_upper_bound,
            "accounting_cost_usd_including_handoff_bound": self.cost_usd_including_handoff_bound,
            "accounting_idle_agents": list(self.idle_agents),
            "accounting_unmeasured_agents": list(self.unmeasured_agents),
            "per_agent_tokens": {
                receipt.agent_id: {
                    "input": receipt.input_tokens,
                    "output": receipt.output_tokens,
                    "cost_usd": receipt.cost_usd,
                    "cost_usd_no_cache_discount": receipt.cost_usd_no_cache_discount,
                    "cache_read_rate": receipt.cache_read_rate,
                    "handoffs": receipt.handoffs,
                    "handoff_cost_usd_upper_bound": receipt.handoff_cost_usd_upper_bound,
                }
                for receipt in self.receipts
            },
        }

    def verdict(self) -> dict[str, Any]:
        """The one-line verdict ``buzzctl ledger price`` prints after the receipts."""
        return {"reconciled": self.reconciled, "note": self.reconciliation_note, "warnings": list(self.warnings)}


def price_seat(seat: SeatLike, log: SeatLog, price: PriceTerms | None) -> tuple[SeatReceipt, list[str]]:
    """One seat's receipt and the warnings it raises (docs/accounting.md#pricing, docs/accounting.md#reconciliation)."""
    warnings = [f"{seat.seat_id}: cannot read log {entry}" for entry in log.unreadable]
    handoff = log.handoffs
    if price is None:
        # The manifest guarantees a price per endpoint; a regression here becomes a priced-zero
        # row plus a loud warning, never a crash that discards an otherwise complete trial.
        warnings.append(f"no price for endpoint {seat.endpoint!r}")
        priced, handoff_cost = UNPRICED, 0.0
    else:
        priced = price_usage(price, log.input_tokens, log.output_tokens, log.measured_cached_tokens)
        handoff_cost = handoff_bound_cost(
            price, handoff.input_tokens_upper_bound, handoff.output_tokens_upper_bound
        )
    if handoff.truncations:
        warnings.append(
            f"{seat.seat_id} truncated its own history {handoff.truncations}x "
            "(handoff cap reached or summarisation failed) — context was "
            "dropped, which affects task fidelity, not just cost"
        )
    receipt = SeatReceipt(
        agent_id=seat.seat_id,
        class_id=seat.class_id,
        role=seat.kind,
        endpoint=seat.endpoint,
        model_revision=seat.model_revision,
        input_tokens=log.input_tokens,
        output_tokens=log.output_tokens,
        cost_usd=priced.cost_usd,
        sessions=len(log.sessions),
        cost_usd_no_cache_discount=priced.cost_usd_no_cache_discount,
        estimated_cache_read_tokens=priced.estimated_cache_read_tokens,
        cache_read_rate=priced.cache_read_rate,
        cache_read_tokens_are_estimated=priced.cache_read_tokens_are_estimated,
        handoffs=handoff.count,
        handoff_truncations=handoff.truncations,
        handoff_input_tokens_upper_bound=handoff.input_tokens_upper_bound,
        handoff_output_tokens_upper_bound=handoff.output_tokens_upper_bound,
        handoff_cost_usd_upper_bound=handoff_cost,
        turns=log.turns,
    )
    return receipt, warnings


def account(
    seats: Sequence[SeatLike],
    logs: Mapping[str, SeatLog],
    prices: Mapping[str, PriceTerms],
) -> TrialAccounting:
    """Price every seat (a seat absent from ``logs`` left no log: an empty one) and reconcile."""
    receipts: list[SeatReceipt] = []
    warnings: list[str] = []
    idle: list[str] = []
    unmeasured: list[str] = []
    for seat in seats:
        log = logs.get(seat.seat_id, SeatLog())
        if not log.sessions:
            # No usage lines: nobody @mentioned it (no turn ended) or its instrumentation broke.
            (idle if log.turns == 0 else unmeasured).append(seat.seat_id)
        receipt, seat_warnings = price_seat(seat, log, prices.get(seat.endpoint))
        receipts.append(receipt)
        warnings.extend(seat_warnings)

    # Sums in seat order with Python's sum(), as the seed: float totals stay bit-identical, and an
    # empty roster totals the int 0 exactly as the seed's summary does.
    total_input = sum(r.input_tokens for r in receipts)
    total_output = sum(r.output_tokens for r in receipts)
    total_handoffs = sum(r.handoffs for r in receipts)
    total_handoff_cost = sum(r.handoff_cost_usd_upper_bound for r in receipts)
    reconciled, note = _verdict(receipts, idle, unmeasured, total_input, total_output)
    if total_handoffs:
        # Handoffs do not fail reconciliation (metered numbers are genuine) but make them a floor.
        note = (
            f"{note}; {total_handoffs} auto-compaction call(s) are billed but "
            "unreported by buzz-agent, so cost_usd is a floor — see "
            f"cost_usd_including_handoff_bound (+${total_handoff_cost:.4f} max)"
        )
    return TrialAccounting(
        receipts=tuple(receipts),
        input_tokens=total_input,
        output_tokens=total_output,
        cost_usd=sum(r.cost_usd for r in receipts),
        cost_usd_no_cache_discount=sum(r.cost_usd_no_cache_discount for r in receipts),
        estimated_cache_read_tokens=sum(r.estimated_cache_read_tokens for r in receipts),
        handoffs=total_handoffs,
        handoff_truncations=sum(r.handoff_truncations for r in receipts),
        handoff_cost_usd_upper_bound=total_handoff_cost,
        reconciled=reconciled,
        reconciliation_note=note,
        warnings=tuple(warnings),
        idle_agents=tuple(sorted(idle)),
        unmeasured_agents=tuple(sorted(unmeasured)),
    )


def _verdict(
    receipts: list[SeatReceipt],
    idle: list[str],
    unmeasured: list[str],
    total_input: int,
    total_output: int,
) -> tuple[bool, str]:
    """The reconciliation gate and its note, worded exactly as the seed (docs/accounting.md#reconciliation)."""
    if not receipts:
        return False, "no agents were provisioned"
    if unmeasured:
        return False, (
            f"{sorted(unmeasured)} took turns but reported no usage — check that "
            "RUST_LOG enables the acp::usage target and that the agent logs were "
            "downloaded; totals undercount this trial"
        )
    if total_input == 0 and total_output == 0:
        return False, (
            "no agent was ever woken — the opening @mention never landed, so "
            "there is nothing to account for and nothing was attempted"
        )
    note = "every agent that took a turn reported usage"
    if idle:
        note = f"{note}; {len(idle)} of {len(receipts)} agent(s) were never woken ({sorted(idle)}) and cost nothing"
    return True, note


def failed_accounting(error: BaseException) -> TrialAccounting:
    """What a crashed accounting reports: unreconciled, with the reason (docs/accounting.md#reconciliation)."""
    return TrialAccounting(reconciled=False, reconciliation_note=f"accounting failed: {error}")


def collect_accounting(
    log_root: Path,
    seats: Sequence[SeatLike],
    prices: Mapping[str, PriceTerms],
) -> TrialAccounting:
    """Read every seat's logs under ``log_root`` and account the trial. Never raises."""
    try:
        logs = {seat.seat_id: scan_seat_logs(find_seat_logs(log_root, seat.seat_id)) for seat in seats}
        return account(seats, logs, prices)
    except Exception as error:  # a paid trial must never be lost to accounting
        return failed_accounting(error)
