"""One seat's priced usage: a row of ``receipts.jsonl`` (docs/accounting.md#receipts)."""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from typing import Any

# The only source this harness has: buzz-acp's `acp::usage` log lines (docs/accounting.md#receipts).
RECEIPT_SOURCE = "acp-usage-log"


@dataclass(frozen=True, slots=True)
class SeatReceipt:
    """What one provisioned seat used and cost; idle seats get an explicit zero row."""

    agent_id: str
    class_id: str
    role: str  # the roster *kind* (orchestrator | worker), as the seed's credential role
    endpoint: str
    model_revision: str
    input_tokens: int
    output_tokens: int
    cost_usd: float
    sessions: int
    source: str = RECEIPT_SOURCE
    cost_usd_no_cache_discount: float = 0.0
    estimated_cache_read_tokens: int = 0
    cache_read_rate: float = 0.0
    cache_read_tokens_are_estimated: bool = True
    # Providers bill reasoning at the output rate: cost is right, only the split is unknown.
    reasoning_tokens_included_in_output: bool = True
    # Auto-compaction calls the agent bills but never reports; kept apart from the metered
    # figures above so nothing is silently merged.
    handoffs: int = 0
    handoff_truncations: int = 0
    handoff_input_tokens_upper_bound: int = 0
    handoff_output_tokens_upper_bound: int = 0
    handoff_cost_usd_upper_bound: float = 0.0
    turns: int = 0

    @property
    def cost_usd_including_handoff_bound(self) -> float:
        """Metered cost plus the worst case for the calls nobody metered."""
        return self.cost_usd + self.handoff_cost_usd_upper_bound

    def to_json(self) -> dict[str, Any]:
        """Every docs/accounting.md#receipts key: the dataclass fields plus ``cost_usd_including_handoff_bound``."""
        data = asdict(self)
        data["cost_usd_including_handoff_bound"] = self.cost_usd_including_handoff_bound
        return data

    def to_line(self) -> str:
        """One ``receipts.jsonl`` line, without the newline (``sort_keys=True``, docs/accounting.md#receipts)."""
        return json.dumps(self.to_json(), sort_keys=True)


def render_receipts(receipts: Iterable[SeatReceipt]) -> str:
    """The whole ``receipts.jsonl`` text: one line per seat, each newline-terminated."""
    return "".join(receipt.to_line() + "\n" for receipt in receipts)
