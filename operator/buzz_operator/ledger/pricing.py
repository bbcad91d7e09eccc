"""The seed's pricing formula, bit for bit (docs/accounting.md#pricing).

Users compare cost figures with the Docker harness, so the arithmetic keeps its exact order of
operations (float addition is not associative) and Python's round-half-to-even.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol


class PriceTerms(Protocol):
    """USD per million tokens for one endpoint; ``condition.Price`` satisfies it (docs/condition.md#prices)."""

    @property
    def input_per_million_usd(self) -> float: ...
    @property
    def cached_input_per_million_usd(self) -> float: ...
    @property
    def output_per_million_usd(self) -> float: ...
    @property
    def cache_read_rate(self) -> float: ...


@dataclass(frozen=True, slots=True)
class PricedUsage:
    """A cost together with the cache assumption behind it."""

    cost_usd: float
    # The same usage with no cache discount: the assumption's leverage stays visible.
    cost_usd_no_cache_discount: float
    # Cache-read tokens actually used for pricing: measured when the agent reported `cached=`,
    # modelled from cache_read_rate otherwise (see cache_read_tokens_are_estimated).
    estimated_cache_read_tokens: int
    cache_read_rate: float
    cache_read_tokens_are_estimated: bool = True


# What a seat whose endpoint has no price is charged: zero, flagged by a warning (docs/accounting.md#reconciliation).
UNPRICED = PricedUsage(0.0, 0.0, 0, 0.0)


def price_usage(
    price: PriceTerms,
    input_tokens: int,
    output_tokens: int,
    measured_cache_read_tokens: int | None = None,
) -> PricedUsage:
    """Cost in USD, billing the cache-served slice of input at the cached rate (docs/accounting.md#pricing).

    ``measured_cache_read_tokens`` is a *subset* of the inclusive ``input_tokens``, so it is
    subtracted, never added; it is clamped to [0, input] so a cached count above the total cannot
    turn into a credit. Without it, ``cache_read_rate`` of the input is modelled as cached.
    Reasoning tokens are billed at the output rate, so they are already priced inside output.
    """
    if measured_cache_read_tokens is None:
        cache_read = round(input_tokens * price.cache_read_rate)
        estimated = True
    else:
        cache_read = max(0, min(measured_cache_read_tokens, input_tokens))
        estimated = False
    uncached = input_tokens - cache_read
    output_cost = output_tokens * price.output_per_million_usd
    return PricedUsage(
        cost_usd=(
            uncached * price.input_per_million_usd
            + cache_read * price.cached_input_per_million_usd
            + output_cost
        )
        / 1_000_000,
        cost_usd_no_cache_discount=(input_tokens * price.input_per_million_usd + output_cost) / 1_000_000,
        estimated_cache_read_tokens=cache_read,
        cache_read_rate=price.cache_read_rate,
        cache_read_tokens_are_estimated=estimated,
    )


def handoff_bound_cost(price: PriceTerms, input_upper_bound: int, output_upper_bound: int) -> float:
    """Worst-case cost of the unmetered auto-compaction calls (docs/accounting.md#pricing).

    Priced with no cache discount: a summarisation prompt is a freshly assembled digest, and
    assuming a warm cache would push something labelled an upper bound in the wrong direction.
    """
    return price_usage(price, input_upper_bound, output_upper_bound).cost_usd_no_cache_discount
