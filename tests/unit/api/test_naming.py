"""Derived names are valid Kubernetes names and never collide for different inputs."""

from __future__ import annotations

from buzz_operator.api.naming import dns_label_prefix, is_dns_label, is_label_value, label_value, sha256_hex
from hypothesis import given
from hypothesis import strategies as st


def test_valid_names_pass_through_unchanged() -> None:
    assert dns_label_prefix("demo-oracle", 47) == "demo-oracle"
    assert label_value("reply-to-thread") == "reply-to-thread"
    assert label_value("Task_1.v2") == "Task_1.v2"


def test_rewritten_names_carry_a_hash_of_the_original() -> None:
    assert dns_label_prefix("Demo.Oracle", 47) == "demo-oracle-" + sha256_hex("Demo.Oracle")[:6]
    long = "x" * 80
    assert label_value(long) == "x" * 56 + "-" + sha256_hex(long)[:6]


def test_parts_are_separated_in_hashes() -> None:
    assert sha256_hex("ab", "c") != sha256_hex("a", "bc")


@given(st.text(max_size=300), st.integers(min_value=8, max_value=63))
def test_dns_prefix_is_always_a_dns_label(text: str, limit: int) -> None:
    name = dns_label_prefix(text, limit)
    assert is_dns_label(name)
    assert len(name) <= limit


@given(st.text(max_size=300))
def test_label_value_is_always_valid(text: str) -> None:
    assert is_label_value(label_value(text))


@given(st.text(min_size=1, max_size=80), st.text(min_size=1, max_size=80))
def test_different_texts_give_different_prefixes(first: str, second: str) -> None:
    if first != second:
        assert dns_label_prefix(first, 47) != dns_label_prefix(second, 47)
        assert label_value(first) != label_value(second)
