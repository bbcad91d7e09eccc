"""Pricing (docs/accounting.md#pricing), against numbers worked out by hand."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from buzz_operator.ledger.pricing import handoff_bound_cost, price_usage


@dataclass(frozen=True)
class P:
    input_per_million_usd: float = 0.2
    cached_input_per_million_usd: float = 0.02
    output_per_million_usd: float = 1.2
    cache_read_rate: float = 0.0


def test_no_cache_rate_is_the_full_rate() -> None:
    # 1_000_000 in × $0.2 + 500_000 out × $1.2 = $0.20 + $0.60
    priced = price_usage(P(), 1_000_000, 500_000)
    assert priced.cost_usd == pytest.approx(0.8, rel=1e-15)
    assert priced.cost_usd_no_cache_discount == pytest.approx(0.8, rel=1e-15)
    assert (priced.estimated_cache_read_tokens, priced.cache_read_tokens_are_estimated) == (0, True)


def test_modelled_cache_rate_rounds_half_to_even() -> None:
    # 12345 × 0.5 = 6172.5 → 6172 (banker's rounding), 6173 uncached:
    # 6173×0.2 + 6172×0.02 + 678×1.2 = 1234.6 + 123.44 + 813.6 = 2171.64 micro-dollars
    priced = price_usage(P(cache_read_rate=0.5), 12345, 678)
    assert priced.estimated_cache_read_tokens == 6172
    assert priced.cost_usd == pytest.approx(0.00217164, rel=1e-12)
    # no discount: 12345×0.2 + 678×1.2 = 2469 + 813.6
    assert priced.cost_usd_no_cache_discount == pytest.approx(0.0032826, rel=1e-12)
    assert priced.cache_read_rate == 0.5
    # 2500.5 → 2500, 2501.5 → 2502
    assert price_usage(P(cache_read_rate=0.5), 5001, 0).estimated_cache_read_tokens == 2500
    assert price_usage(P(cache_read_rate=0.5), 5003, 0).estimated_cache_read_tokens == 2502


def test_measured_cache_is_a_clamped_subset_of_input() -> None:
    # 10000 in, 4000 cached: 6000×0.2 + 4000×0.02 = 1200 + 80
    priced = price_usage(P(cache_read_rate=0.9), 10_000, 0, measured_cache_read_tokens=4000)
    assert priced.cost_usd == pytest.approx(0.00128, rel=1e-12)
    assert (priced.estimated_cache_read_tokens, priced.cache_read_tokens_are_estimated) == (4000, False)
    assert price_usage(P(), 100, 0, measured_cache_read_tokens=500).estimated_cache_read_tokens == 100
    assert price_usage(P(), 100, 0, measured_cache_read_tokens=-5).estimated_cache_read_tokens == 0


def test_float_arithmetic_follows_the_seed_order() -> None:
    price = P(input_per_million_usd=3.3, cached_input_per_million_usd=0.33, output_per_million_usd=16.5, cache_read_rate=0.37)
    priced = price_usage(price, 987_654, 32_109)
    cached = round(987_654 * 0.37)
    expected = ((987_654 - cached) * 3.3 + cached * 0.33 + 32_109 * 16.5) / 1_000_000
    assert priced.cost_usd == expected  # bit-identical, not approximately


def test_handoff_bound_has_no_cache_discount() -> None:
    # 150_000 in × $5 + 64_000 out × $25 = 0.75 + 1.6
    opus = P(input_per_million_usd=5.0, cached_input_per_million_usd=0.5, output_per_million_usd=25.0, cache_read_rate=0.9)
    assert handoff_bound_cost(opus, 150_000, 64_000) == pytest.approx(2.35, rel=1e-15)
