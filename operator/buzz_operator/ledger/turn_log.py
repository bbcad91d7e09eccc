"""What a seat's buzz-acp log says about its turns, read line by line as it is written: how many
turns started and ended, and which Buzz events were delivered to the agent (docs/completion.md).

Block's harness (benchmarks container_runtime.py `_parse_turn_status`, block/buzz #6487) counts
the same markers over the whole log; this is its incremental form, so the run step can follow a
log stream instead of re-reading the file.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from buzz_operator.ledger.agent_log import TURN_END_MARKERS
from buzz_operator.ledger.ansi import strip_ansi

TURN_START_MARKER = "turn starting for"
# crates/buzz-acp pool.rs `delivery_receipt_line`: every event a completed turn delivered, sorted.
DELIVERY_RECEIPT_MARKER = "turn delivered Buzz events for channel"
# crates/buzz-acp lib.rs: an event steered into the running turn; `ack=Ok(Success …)` means it landed.
STEER_ACK_MARKER = "non-cancelling steer ack received"
STEER_SUCCESS = "ack=Ok(Success"
EVENT_ID = re.compile(r"(?<![0-9a-f])[0-9a-f]{64}(?![0-9a-f])")
STEERED_EVENT_ID = re.compile(r"event_id=([0-9a-f]{64})")


@dataclass
class TurnLog:
    """Feed it the log as it arrives (any chunking); it keeps only the unfinished last line."""

    starts: int = 0
    ends: int = 0
    delivered: set[str] = field(default_factory=set)
    _partial: str = ""

    def feed(self, text: str) -> None:
        lines = (self._partial + text).split("\n")
        self._partial = lines.pop()
        for line in lines:
            self._line(strip_ansi(line))

    def _line(self, line: str) -> None:
        if TURN_START_MARKER in line:
            self.starts += 1
        self.ends += sum(marker in line for marker in TURN_END_MARKERS)
        if DELIVERY_RECEIPT_MARKER in line:
            self.delivered.update(EVENT_ID.findall(line))
        elif STEER_ACK_MARKER in line and STEER_SUCCESS in line and (match := STEERED_EVENT_ID.search(line)):
            self.delivered.add(match.group(1))

    @property
    def idle(self) -> bool:
        """At least one turn ran and none is running now."""
        return self.starts > 0 and self.starts == self.ends

    def finished(self, scripted_event_ids: frozenset[str]) -> bool:
        """Block's solo rule: without scripted events the first turn end; with them, idle and
        every scripted event acknowledged as delivered."""
        if not scripted_event_ids:
            return self.ends > 0
        return self.idle and scripted_event_ids <= self.delivered

    def unacknowledged(self, scripted_event_ids: frozenset[str]) -> set[str]:
        return set(scripted_event_ids) - self.delivered
