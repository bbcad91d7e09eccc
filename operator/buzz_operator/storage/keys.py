"""Object keys: '/'-separated relative paths, validated before any backend sees them.

The same key names a file under a FileStore root and an object under an S3 prefix, so a key that
could climb out of its root (Argo's artifact traversal warning: `../` in a key) or that two
backends would read differently (backslashes, empty segments) is rejected with an error that
names the offending field and the reason."""

from __future__ import annotations

import re

from .errors import InvalidKey

# S3's limit; FileStore shares it so a bundle that fits one backend fits the other.
MAX_KEY_BYTES = 1024
# C0 controls and DEL, found by one regex search: 1.2 us for a bundle's 90-character key where a
# per-character test took 10.5 us, and every key of every bundle passes here (docs/performance.md#cpu)
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def validate_key(key: object, *, field: str = "key") -> str:
    """Return `key` unchanged when it is a safe relative object key, else raise InvalidKey."""
    if not isinstance(key, str):
        raise InvalidKey(f"{field} must be a string, got {type(key).__name__}")
    if not key:
        raise InvalidKey(f"{field} must not be empty")
    if len(key.encode("utf-8")) > MAX_KEY_BYTES:
        raise InvalidKey(f"{field} is longer than {MAX_KEY_BYTES} bytes: {key[:60]!r}...")
    if "\\" in key:
        raise InvalidKey(f"{field} {key!r} contains a backslash; keys use '/' only")
    if key.startswith("/"):
        raise InvalidKey(f"{field} {key!r} is absolute; keys are relative to the store's root")
    if _CONTROL.search(key):
        raise InvalidKey(f"{field} {key!r} contains a control character")
    for segment in key.split("/"):
        if segment == "":
            raise InvalidKey(f"{field} {key!r} has an empty segment ('//' or a trailing '/')")
        if segment in (".", ".."):
            raise InvalidKey(f"{field} {key!r} has a {segment!r} segment (path traversal)")
    return key


def validate_prefix(prefix: object, *, field: str = "prefix") -> str:
    """A prefix is a key naming a 'directory', or '' for the whole store."""
    if prefix == "":
        return ""
    return validate_key(prefix, field=field)


def validate_segment(name: object, *, field: str) -> str:
    """One path segment, such as a sweep or trial name: a valid key without '/'."""
    name = validate_key(name, field=field)
    if "/" in name:
        raise InvalidKey(f"{field} {name!r} must be a single path segment (no '/')")
    return name


def join_key(*parts: str) -> str:
    """Join non-empty parts with '/' and validate the result."""
    return validate_key("/".join(p for p in parts if p))


def relative_key(prefix: str, key: str) -> str:
    """`key` with the directory `prefix` removed; raises when key is not under prefix."""
    if not prefix:
        return key
    if not key.startswith(prefix + "/"):
        raise InvalidKey(f"key {key!r} is not under prefix {prefix!r}")
    return key[len(prefix) + 1 :]
