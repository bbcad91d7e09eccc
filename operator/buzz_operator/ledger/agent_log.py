"""What one seat's captured logs say about its usage, turns and handoffs (docs/accounting.md#log-lines).

buzz-acp logs session-cumulative token counters under the ``acp::usage`` tracing target, one line
per provider round; buzz-acp's pool logs a turn-end line for every turn (docs/completion.md#what-is-watched); buzz-agent logs one
line per auto-compaction ("handoff"). These are the only records of what a seat cost, so they are
parsed from the downloaded ``<seat>.stdout.log`` and ``<seat>.stderr.log``.

Files are streamed in chunks of whole lines (never read whole: logs reach hundreds of MB). The
result is exactly the seed's (whole text ANSI-stripped, ``splitlines()``, each line tested), but
the work is not: most chunks go through ``log_candidates``, which finds in C the few lines that
can matter so only those are stripped and read; the rest are stripped whole and filtered by
substring tests on the chunk before any regex runs. ``tests/unit/ledger/test_seed_equivalence.py``
holds the plain seed algorithm and checks the two agree on adversarial text.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from buzz_operator.ledger.ansi import ANSI_RE, strip_ansi
from buzz_operator.ledger.lines import iter_line_chunks
from buzz_operator.ledger.log_candidates import candidate_lines

USAGE_MARKER = "goose usage update"
# docs/accounting.md#log-lines, exactly. Fields are matched independently so a formatter change (order, extra fields)
# degrades to "no sample" rather than to a wrong number. `Some(N)` is how a Rust Option renders.
# The leading `\b` of each is checked by _field_search rather than compiled in: a pattern that
# starts with a literal lets the regex engine skip ahead to candidates, about 6x faster.
_SESSION_RE = re.compile(r"session_id=(\S+)")
_INPUT_RE = re.compile(r"input=(?:Some\()?(\d+)\)?\b")
_OUTPUT_RE = re.compile(r"output=(?:Some\()?(\d+)\)?\b")
# Optional: an agent build that predates the field logs none, which must read as "unknown"
# (fall back to the manifest's cache_read_rate), never as 0.
_CACHED_RE = re.compile(r"cached=(\d+)\b")

# docs/completion.md#what-is-watched: buzz-acp writes one of these whenever a turn ends, for any reason. A seat with no usage
# lines and no turn-end line was never woken (a real zero); with turns it is an instrumentation
# failure.
TURN_END_MARKERS = (
    "turn complete for",
    "turn cancelled for",
    "turn hit max_tokens for",
    "turn hit max_turn_requests for",
    "turn refused for",
)
# Every marker contains this, so a chunk without it has no turn-end line at all.
_TURN_PREFIX = "turn "

# docs/accounting.md#log-lines: `handoff #1 (history 84 -> 3 items; 181430 -> 5120 tokens)`; group 2 is the pre-handoff
# context, the ceiling on what the unmetered summarisation call could have sent.
_HANDOFF_RE = re.compile(r"\bhandoff #(\d+) \(history .*?; (\d+) -> \d+ tokens\)")
_HANDOFF_PREFIX = "handoff #"
# When the handoff cap is reached or summarisation fails the agent truncates its own history;
# the seed counts any other line whose lowercase holds both words.
_HANDOFF_WORD = "handoff"
_TRUNCATION_WORD = "truncat"
# crates/buzz-agent HANDOFF_MAX_OUTPUT_TOKENS (docs/accounting.md#log-lines): the output allowance charged per handoff.
HANDOFF_MAX_OUTPUT_TOKENS = 32_000

# summarize.py's ROUND-CAPPED flag (docs/failures.md#summaries): buzz-agent's stop reason when a turn exhausts
# BUZZ_AGENT_MAX_ROUNDS. Matched in the raw text, as the seed greps the file unstripped.
ROUND_CAP_MARKER = "max_turn_requests"

LOG_SUFFIXES = (".stdout.log", ".stderr.log")


@dataclass(frozen=True, slots=True)
class SessionUsage:
    """Final cumulative counters of one agent session (the high-water mark of its usage lines)."""

    session_id: str
    input_tokens: int
    output_tokens: int
    # None means no usage line of this session carried `cached=`; 0 means the provider served
    # nothing from cache. The two are different answers.
    cached_input_tokens: int | None = None


@dataclass(frozen=True, slots=True)
class HandoffUsage:
    """Auto-compactions seen for one seat, as bounds rather than measurements (docs/accounting.md#log-lines)."""

    count: int = 0
    input_tokens_upper_bound: int = 0
    output_tokens_upper_bound: int = 0
    truncations: int = 0


@dataclass(frozen=True, slots=True)
class SeatLog:
    """Everything accounting needs from one seat's logs."""

    sessions: tuple[SessionUsage, ...] = ()
    turns: int = 0
    handoffs: HandoffUsage = HandoffUsage()
    round_capped: bool = False
    # Files that exist but could not be read, as "<name>: <error>"; reported, never dropped.
    unreadable: tuple[str, ...] = ()

    @property
    def input_tokens(self) -> int:
        return sum(session.input_tokens for session in self.sessions)

    @property
    def output_tokens(self) -> int:
        return sum(session.output_tokens for session in self.sessions)

    @property
    def measured_cached_tokens(self) -> int | None:
        """Summed `cached=` counts, or None unless *every* session reported one (docs/accounting.md#log-lines).

        Summing a mix would under-count the cached slice of the quiet sessions and bias cost
        upward invisibly, so a partial report counts as no report.
        """
        reported = [s.cached_input_tokens for s in self.sessions if s.cached_input_tokens is not None]
        if self.sessions and len(reported) == len(self.sessions):
            return sum(reported)
        return None


class _SeatLogScanner:
    """Accumulates one seat's figures across chunks of stripped log text."""

    def __init__(self) -> None:
        self.high_water: dict[str, tuple[int, int, int | None]] = {}
        self.turns = 0
        self.handoff_contexts: list[int] = []
        self.truncations = 0
        self.round_capped = False

    def feed(self, raw_chunk: str) -> None:
        if not self.round_capped and ROUND_CAP_MARKER in raw_chunk:
            self.round_capped = True
        # tracing colours output even into a file, and the escapes land between a field's name
        # and its "=" (`\x1b[3minput\x1b[0m\x1b[2m=\x1b[0m20658`): they go before any matching,
        # or every usage line silently prices at zero (docs/accounting.md#ansi-escapes). Usually only the candidate lines
        # need stripping (see log_candidates); otherwise the whole chunk is stripped.
        candidates = candidate_lines(raw_chunk)
        if candidates is not None:
            for line in candidates:
                self._line(ANSI_RE.sub("", line))
            return
        chunk = strip_ansi(raw_chunk)
        has_usage = USAGE_MARKER in chunk
        has_turn = _TURN_PREFIX in chunk
        has_handoff = _HANDOFF_PREFIX in chunk
        # The seed lowercases each line; lowercasing the chunk is the same test per line (both
        # words are ASCII and hold no line break) at a fraction of the cost of IGNORECASE search.
        lowered = chunk.lower()
        has_truncation = _TRUNCATION_WORD in lowered and _HANDOFF_WORD in lowered
        if not (has_usage or has_turn or has_handoff or has_truncation):
            return
        lines = chunk.splitlines()
        if has_usage:
            for line in [line for line in lines if USAGE_MARKER in line]:
                self._usage(line)
        if has_turn:
            for line in [line for line in lines if _TURN_PREFIX in line]:
                if any(marker in line for marker in TURN_END_MARKERS):
                    self.turns += 1
        if has_handoff or has_truncation:
            self._handoffs(lines, has_truncation)

    def _line(self, line: str) -> None:
        """Everything one stripped line contributes; the chunk path below does the same in bulk."""
        if USAGE_MARKER in line:
            self._usage(line)
        if _TURN_PREFIX in line and any(marker in line for marker in TURN_END_MARKERS):
            self.turns += 1
        if _HANDOFF_PREFIX in line:
            match = _HANDOFF_RE.search(line)
            if match is not None:
                self.handoff_contexts.append(int(match.group(2)))
                return
        lowered = line.lower()
        if _HANDOFF_WORD in lowered and _TRUNCATION_WORD in lowered:
            self.truncations += 1

    def _usage(self, line: str) -> None:
        input_match = _field_search(_INPUT_RE, line)
        output_match = _field_search(_OUTPUT_RE, line)
        if input_match is None or output_match is None:
            return
        session_match = _field_search(_SESSION_RE, line)
        session_id = session_match.group(1) if session_match else "unknown"
        seen_in, seen_out, seen_cached = self.high_water.get(session_id, (0, 0, None))
        cached_match = _field_search(_CACHED_RE, line)
        if cached_match is not None:
            cached = int(cached_match.group(1))
            seen_cached = cached if seen_cached is None else max(seen_cached, cached)
        # Counters are session-cumulative: the largest value is the session's total, and taking
        # the max (not the last) also survives interleaved or truncated log tails.
        self.high_water[session_id] = (
            max(seen_in, int(input_match.group(1))),
            max(seen_out, int(output_match.group(1))),
            seen_cached,
        )

    def _handoffs(self, lines: list[str], has_truncation: bool) -> None:
        # Only a chunk holding both truncation words needs every line visited; otherwise the
        # handoff lines are picked out in C first.
        candidates = lines if has_truncation else [line for line in lines if _HANDOFF_PREFIX in line]
        for line in candidates:
            if _HANDOFF_PREFIX in line:
                match = _HANDOFF_RE.search(line)
                if match is not None:
                    self.handoff_contexts.append(int(match.group(2)))
                    continue
            if has_truncation:
                lowered = line.lower()
                if _HANDOFF_WORD in lowered and _TRUNCATION_WORD in lowered:
                    self.truncations += 1

    def result(self, unreadable: tuple[str, ...] = ()) -> SeatLog:
        sessions = tuple(
            SessionUsage(session_id, tokens[0], tokens[1], tokens[2])
            for session_id, tokens in sorted(self.high_water.items())
        )
        handoffs = HandoffUsage(
            count=len(self.handoff_contexts),
            input_tokens_upper_bound=sum(self.handoff_contexts),
            output_tokens_upper_bound=len(self.handoff_contexts) * HANDOFF_MAX_OUTPUT_TOKENS,
            truncations=self.truncations,
        )
        return SeatLog(sessions, self.turns, handoffs, self.round_capped, unreadable)


def _field_search(pattern: re.Pattern[str], line: str) -> re.Match[str] | None:
    """First match of a ``name=`` pattern that also satisfies the seed's leading ``\\b``.

    Every field name starts with a word character, so ``\\b`` before it means: at the start of
    the line or after a non-word character (``str.isalnum()`` or ``_``, as ``re`` defines it).
    """
    position = 0
    while (match := pattern.search(line, position)) is not None:
        start = match.start()
        if start == 0 or not (line[start - 1].isalnum() or line[start - 1] == "_"):
            return match
        position = start + 1
    return None


def scan_log_text(chunks: Iterable[str]) -> SeatLog:
    """Scan log text given as chunks of whole lines (pure; for tests and in-memory logs)."""
    scanner = _SeatLogScanner()
    for chunk in chunks:
        scanner.feed(chunk)
    return scanner.result()


def scan_seat_logs(paths: Iterable[Path]) -> SeatLog:
    """Scan every file of one seat. A missing file is skipped; an unreadable one is reported."""
    scanner = _SeatLogScanner()
    unreadable: list[str] = []
    for path in paths:
        try:
            for chunk in iter_line_chunks(path):
                scanner.feed(chunk)
        except FileNotFoundError:
            continue
        except OSError as error:
            unreadable.append(f"{path.name}: {error.strerror or error}")
    return scanner.result(tuple(unreadable))


def find_seat_logs(root: Path, seat_id: str) -> list[Path]:
    """The seat's logs under ``root``, as the seed globs them (docs/accounting.md#logs-read).

    All ``**/<seat>.stdout.log`` then all ``**/<seat>.stderr.log``, each sorted: either stream may
    carry the usage lines depending on how the tracing subscriber is configured.
    """
    found: list[Path] = []
    for suffix in LOG_SUFFIXES:
        # Not filtered to regular files: something named like a log that cannot be read is
        # reported by scan_seat_logs rather than passed over.
        found.extend(sorted(root.glob(f"**/{seat_id}{suffix}")))
    return found


def iter_bundle_logs(bundle_dir: Path) -> Iterator[Path]:
    """Every agent log directly inside a bundle directory (summarize.py's ROUND-CAPPED scan)."""
    if not bundle_dir.is_dir():
        return
    for path in sorted(bundle_dir.iterdir()):
        if path.name.endswith(LOG_SUFFIXES) and path.is_file():
            yield path
