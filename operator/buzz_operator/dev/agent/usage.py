"""Token accounting for the stand-in, in the real stack's log formats (docs/accounting.md#log-lines).

With a model endpoint the session is billed what the endpoint reports (`Session.bill`). With the
folded-in model the counts are computed: tokens are bytes // 4 of what the "model" reads and
writes, so the same transcript always costs the same and receipts are reproducible. Each model
call reads the system prompt plus the whole session history; the part already read by the
previous call counts as cached (a provider's prompt cache would hit exactly that prefix).
Counters are session-cumulative, like goose's.
"""

from __future__ import annotations

from dataclasses import dataclass, field

BYTES_PER_TOKEN = 4
DEFAULT_HANDOFF_PERCENT = 90
DEFAULT_HANDOFF_AT_TOKENS = 272_000


def tokens(text: str) -> int:
    return len(text.encode("utf-8")) // BYTES_PER_TOKEN


def usage_line(session_id: str, input_tokens: int, output_tokens: int, cached: int) -> str:
    return f"goose usage update session_id={session_id} input={input_tokens} output={output_tokens} cached={cached}"


def handoff_line(number: int, items_before: int, items_after: int, tokens_before: int, tokens_after: int) -> str:
    return (f"handoff #{number} (history {items_before} -> {items_after} items; "
            f"{tokens_before} -> {tokens_after} tokens)")


def handoff_threshold(percent: str | None, window: str | None, at_tokens: str | None) -> int | None:
    """buzz-agent hands off at whichever comes first: percent of the window or the absolute
    ceiling (0 disables the ceiling). Without a window only the ceiling applies."""
    candidates: list[int] = []
    pct = int(percent) if percent else DEFAULT_HANDOFF_PERCENT
    if window:
        candidates.append(int(window) * pct // 100)
    ceiling = int(at_tokens) if at_tokens else DEFAULT_HANDOFF_AT_TOKENS
    if ceiling > 0:
        candidates.append(ceiling)
    return min(candidates) if candidates else None


@dataclass
class Handoff:
    number: int
    items_before: int
    items_after: int
    tokens_before: int
    tokens_after: int

    def line(self) -> str:
        return handoff_line(self.number, self.items_before, self.items_after,
                            self.tokens_before, self.tokens_after)


@dataclass
class Session:
    session_id: str
    system_prompt: str
    threshold: int | None = None
    history: list[str] = field(default_factory=list)
    input_tokens: int = 0
    output_tokens: int = 0
    cached_tokens: int = 0
    handoffs: int = 0
    _last_context: int = 0

    def context_tokens(self) -> int:
        return tokens(self.system_prompt) + sum(tokens(item) for item in self.history)

    def read(self, text: str) -> Handoff | None:
        """One model call that reads `text` after the history. Returns the handoff it caused
        first, if the context would cross the threshold (history summarised into one item)."""
        handoff = None
        self.history.append(text)
        context = self.context_tokens()
        if self.threshold is not None and context > self.threshold and len(self.history) > 1:
            self.handoffs += 1
            summary = "summary: " + " | ".join(item[:40] for item in self.history)[:400]
            before_items = len(self.history)
            self.history = [summary]
            self._last_context = 0  # a fresh context: nothing cached any more
            handoff = Handoff(self.handoffs, before_items, 1, context, self.context_tokens())
            context = self.context_tokens()
        self.input_tokens += context
        self.cached_tokens += min(self._last_context, context)
        self._last_context = context
        return handoff

    def write(self, text: str) -> None:
        self.history.append(text)
        self.output_tokens += tokens(text)
        self._last_context += tokens(text)

    def bill(self, input_tokens: int, output_tokens: int, cached_tokens: int) -> None:
        """One model endpoint response's own counts, summed as buzz-agent sums them into the
        session's cumulative usage (input includes the cached part)."""
        self.input_tokens += input_tokens
        self.output_tokens += output_tokens
        self.cached_tokens += cached_tokens

    def line(self) -> str:
        return usage_line(self.session_id, self.input_tokens, self.output_tokens, self.cached_tokens)
