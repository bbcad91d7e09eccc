"""Key validation: every key that could escape a store root or read differently per backend is
refused, with an error that names the field."""

from __future__ import annotations

import pytest
from buzz_operator.storage.errors import InvalidKey
from buzz_operator.storage.keys import (
    MAX_KEY_BYTES,
    join_key,
    relative_key,
    validate_key,
    validate_prefix,
    validate_segment,
)


@pytest.mark.parametrize(
    "key",
    [
        "a",
        "a/b/c.json",
        "sweep-1/trial_2/agent/buzz/lead.stdout.log",
        ".hidden",
        "a/..b",
        "a/b..",
        "ünïcode/ok",
    ],
)
def test_valid_keys_pass_unchanged(key: str) -> None:
    assert validate_key(key) == key


@pytest.mark.parametrize(
    ("key", "reason"),
    [
        ("", "must not be empty"),
        ("/etc/passwd", "absolute"),
        ("../escape", "'..' segment"),
        ("a/../../escape", "'..' segment"),
        ("a/..", "'..' segment"),
        ("./a", "'.' segment"),
        ("a\\b", "backslash"),
        ("..\\windows", "backslash"),
        ("a//b", "empty segment"),
        ("a/b/", "empty segment"),
        ("a\nb", "control character"),
        ("a\x00b", "control character"),
        ("x" * (MAX_KEY_BYTES + 1), "longer than"),
    ],
)
def test_unsafe_keys_are_refused_with_reason(key: str, reason: str) -> None:
    with pytest.raises(InvalidKey, match="key") as caught:
        validate_key(key)
    assert reason in str(caught.value)


def test_error_names_the_field() -> None:
    with pytest.raises(InvalidKey, match=r"^agent file '\.\./x'"):
        validate_key("../x", field="agent file")


def test_non_string_key_is_refused() -> None:
    with pytest.raises(InvalidKey, match="key must be a string, got int"):
        validate_key(3)


def test_invalid_key_is_also_a_value_error() -> None:
    # callers that validate user input generically can catch ValueError
    with pytest.raises(ValueError):
        validate_key("../x")


def test_prefix_may_be_empty_but_otherwise_follows_key_rules() -> None:
    assert validate_prefix("") == ""
    assert validate_prefix("a/b") == "a/b"
    with pytest.raises(InvalidKey, match="prefix"):
        validate_prefix("a/")


def test_segment_refuses_slashes() -> None:
    assert validate_segment("trial-7", field="trial") == "trial-7"
    with pytest.raises(InvalidKey, match=r"trial 'a/b' must be a single path segment"):
        validate_segment("a/b", field="trial")
    with pytest.raises(InvalidKey, match=r"'\.\.' segment"):
        validate_segment("..", field="sweep")


def test_join_skips_empty_parts_and_validates() -> None:
    assert join_key("", "a", "b/c") == "a/b/c"
    with pytest.raises(InvalidKey):
        join_key("a", "../b")


def test_relative_key() -> None:
    assert relative_key("a/b", "a/b/c/d") == "c/d"
    assert relative_key("", "x") == "x"
    with pytest.raises(InvalidKey, match="not under prefix"):
        relative_key("a/b", "a/bc")
