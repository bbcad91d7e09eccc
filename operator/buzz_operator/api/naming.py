"""Kubernetes names and label values derived from free text, deterministically.

Sweep names may be 253-character DNS subdomains with dots; trial and pod names also end up
in label values and hostnames, which allow 63 characters and no dots. Whenever text has to
be cut or rewritten, a short hash of the original is appended so two different inputs can
never map to the same name.
"""

from __future__ import annotations

import hashlib
import re

DNS_LABEL_MAX = 63
_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_LABEL_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")
_NOT_DNS = re.compile(r"[^a-z0-9-]+")
_NOT_LABEL = re.compile(r"[^A-Za-z0-9_.-]+")
_SUFFIX_HEX = 6


def sha256_hex(*parts: str) -> str:
    """sha256 over the parts, NUL-separated so ("ab", "c") and ("a", "bc") differ."""
    return hashlib.sha256("\0".join(parts).encode("utf-8")).hexdigest()


def is_dns_label(text: str) -> bool:
    return len(text) <= DNS_LABEL_MAX and bool(_DNS_LABEL.match(text))


def is_label_value(text: str) -> bool:
    return len(text) <= DNS_LABEL_MAX and bool(_LABEL_VALUE.match(text))


def _fit(text: str, cleaned: str, limit: int, edge: str) -> str:
    if cleaned == text and len(cleaned) <= limit and cleaned:
        return cleaned
    keep = limit - _SUFFIX_HEX - 1
    head = cleaned[:keep].strip(edge)
    suffix = sha256_hex(text)[:_SUFFIX_HEX]
    return f"{head}-{suffix}" if head else suffix


def dns_label_prefix(text: str, limit: int) -> str:
    """A DNS-1123 label of at most ``limit`` characters that is unique to ``text``."""
    cleaned = _NOT_DNS.sub("-", text.lower()).strip("-")
    return _fit(text, cleaned, limit, "-")


def label_value(text: str) -> str:
    """A valid label value unique to ``text`` (unchanged when it already is one)."""
    cleaned = _NOT_LABEL.sub("-", text).strip("-_.")
    return _fit(text, cleaned, DNS_LABEL_MAX, "-_.")
