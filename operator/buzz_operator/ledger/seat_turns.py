"""A seat's turns as its buzz-acp logs tell them, for its trajectory (docs/trajectory.md#seat-steps).

buzz-acp logs, per seat (``<seat>.stdout.log`` / ``.stderr.log``; docs/accounting.md#log-lines):
a turn's start (``turn starting for <label>``) and end (``turn complete for <label>`` and the
other end markers), the Buzz events a finished turn delivered (``turn delivered Buzz events for
channel …: <ids>``), each tool call the agent made (``acp::tool`` ``tool_call: <title> (<kind>)``,
then ``tool_call_update: <id> → <status>``) and the session-cumulative usage of each provider
round (``goose usage update session_id=… input=… output=…``). Nothing else of a turn is logged:
not a tool call's arguments or output, so a trajectory cannot hold them.

Pure, streamed in chunks of whole lines (logs reach hundreds of MB); a line is kept only when it
carries one of the markers. Both streams are read and their lines merged by timestamp.
"""

from __future__ import annotations

import heapq
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from buzz_operator.ledger.agent_log import (
    _CACHED_RE,
    _INPUT_RE,
    _OUTPUT_RE,
    _SESSION_RE,
    TURN_END_MARKERS,
    USAGE_MARKER,
)
from buzz_operator.ledger.ansi import strip_ansi
from buzz_operator.ledger.lines import iter_line_chunks
from buzz_operator.ledger.turn_log import DELIVERY_RECEIPT_MARKER, EVENT_ID, TURN_START_MARKER

TOOL_CALL = "tool_call: "
TOOL_UPDATE = "tool_call_update: "
_MARKERS = (TURN_START_MARKER, DELIVERY_RECEIPT_MARKER, TOOL_CALL, TOOL_UPDATE, USAGE_MARKER, *TURN_END_MARKERS)
# tracing's fmt line opens with an RFC 3339 time; a line without one keeps its place in its file
_TIME = re.compile(r"^\s*(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:?\d\d))")
_TOOL_CALL = re.compile(r"tool_call: (.*) \(([^()]*)\)\s*$")
_TOOL_UPDATE = re.compile(r"tool_call_update: (\S+) \S+ (\S+)\s*$")


@dataclass
class ToolCall:
    """One call the agent made: its title and kind as buzz-acp logs them, and how it ended."""

    title: str
    kind: str
    call_id: str | None = None
    status: str | None = None


@dataclass
class SeatTurn:
    """One turn of a seat: when it ran, what it was handed, what it did and what it cost."""

    label: str
    started: str | None = None
    ended: str | None = None
    end_marker: str | None = None
    delivered: list[str] = field(default_factory=list)
    tool_calls: list[ToolCall] = field(default_factory=list)
    input_tokens: int = 0
    output_tokens: int = 0
    cached_tokens: int | None = None
    usage_lines: int = 0


@dataclass
class _Reader:
    turns: list[SeatTurn] = field(default_factory=list)
    open: list[SeatTurn] = field(default_factory=list)
    sessions: dict[str, tuple[int, int, int]] = field(default_factory=dict)

    def current(self, stamp: str | None) -> SeatTurn:
        """The turn a line belongs to: the latest still open; after every turn ended, the last
        one (a late usage line); before any, a turn of its own."""
        if self.open:
            return self.open[-1]
        if self.turns:
            return self.turns[-1]
        turn = SeatTurn(label="", started=stamp)
        self.turns.append(turn)
        return turn

    def line(self, stamp: str | None, text: str) -> None:
        if TURN_START_MARKER in text:
            label = text.split(TURN_START_MARKER, 1)[1].strip()
            turn = SeatTurn(label=label, started=stamp)
            self.turns.append(turn)
            self.open.append(turn)
        elif marker := next((m for m in TURN_END_MARKERS if m in text), None):
            label = text.split(marker, 1)[1].strip()
            turn = next((t for t in self.open if t.label == label), self.open[0] if self.open else None)
            if turn is None:
                turn = self.current(stamp)
            else:
                self.open.remove(turn)
            turn.ended, turn.end_marker = stamp, marker.removesuffix(" for")
        elif DELIVERY_RECEIPT_MARKER in text:
            # logged as the turn ends, just before or after its end marker
            turn = self.turns[-1] if self.turns else self.current(stamp)
            turn.delivered.extend(i for i in EVENT_ID.findall(text) if i not in turn.delivered)
        elif TOOL_UPDATE in text:
            self._update(stamp, text)
        elif TOOL_CALL in text and (match := _TOOL_CALL.search(text)):
            self.current(stamp).tool_calls.append(ToolCall(match.group(1), match.group(2)))
        elif USAGE_MARKER in text:
            self._usage(stamp, text)

    def _update(self, stamp: str | None, text: str) -> None:
        """buzz-acp logs no id with the call, only with its updates: an id is given to the earliest
        call without one, and later updates of that id change its status."""
        if (match := _TOOL_UPDATE.search(text)) is None:
            return
        call_id, status = match.group(1), match.group(2)
        calls = [c for t in self.turns for c in t.tool_calls]
        known = next((c for c in calls if c.call_id == call_id), None)
        target = known or next((c for c in calls if c.call_id is None), None)
        if target is not None:
            target.call_id, target.status = call_id, status

    def _usage(self, stamp: str | None, text: str) -> None:
        found = [_INPUT_RE.search(text), _OUTPUT_RE.search(text), _SESSION_RE.search(text)]
        if not all(found):
            return
        input_match, output_match, session_match = found
        assert input_match and output_match and session_match
        cached_match = _CACHED_RE.search(text)
        session = session_match.group(1)
        now = (int(input_match.group(1)), int(output_match.group(1)), int(cached_match.group(1)) if cached_match else 0)
        before = self.sessions.get(session, (0, 0, 0))
        self.sessions[session] = now
        turn = self.current(stamp)
        # session-cumulative: a round's own usage is the step from the session's last line
        turn.input_tokens += max(now[0] - before[0], 0)
        turn.output_tokens += max(now[1] - before[1], 0)
        if cached_match:
            turn.cached_tokens = (turn.cached_tokens or 0) + max(now[2] - before[2], 0)
        turn.usage_lines += 1


def _marked_lines(path: Path) -> Iterator[tuple[str, int, str]]:
    """(time or "", line number, text) of the lines carrying a marker, in file order."""
    number = 0
    for chunk in iter_line_chunks(path):
        if not any(marker in chunk for marker in _MARKERS):
            number += chunk.count("\n")
            continue
        for raw in chunk.splitlines():
            number += 1
            if any(marker in raw for marker in _MARKERS):
                text = strip_ansi(raw)
                match = _TIME.match(text)
                yield (match.group(1) if match else "", number, text)


def seat_turns(paths: Iterable[Path]) -> list[SeatTurn]:
    """The seat's turns from its log files, their marked lines merged by time (a file's own
    order kept; a line without a time sorts first in its file's run)."""
    reader = _Reader()
    streams = [_marked_lines(path) for path in paths if path.is_file()]
    for stamp, _, text in heapq.merge(*streams, key=lambda item: item[0]):
        reader.line(stamp or None, text)
    return reader.turns
