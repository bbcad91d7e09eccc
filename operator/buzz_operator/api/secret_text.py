"""Every kind of secret the project knows by its shape, and the one function that takes them out
of any text a person may read: a condition, a trial's status message, an Event
(docs/failures.md#scrubbing).

The bundle's secret scan (ledger/secret_scan.py) looks for the same kinds, from this list, so a
key the scan would flag in a bundle can never stand in a status. What no shape betrays (a model
API key of a provider's own format, a relay auth tag) is passed in as a literal by whoever holds
it: a trial's drive knows the Secrets it read.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Annotated

from pydantic import AfterValidator, PlainSerializer

# docs/bundle.md#secret-scan, in the seed's order (the order findings on one line are reported in).
SECRET_KINDS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("nostr-private-key", re.compile(r"\bnsec1[02-9ac-hj-np-z]{20,}", re.IGNORECASE)),
    ("anthropic-key", re.compile(r"\bsk-ant-[A-Za-z0-9_-]{20,}")),
    ("openai-key", re.compile(r"\bsk-[A-Za-z0-9]{32,}")),
    ("databricks-token", re.compile(r"\bdapi[0-9a-f]{32,}", re.IGNORECASE)),
    ("bearer-header", re.compile(r"[Aa]uthorization:\s*Bearer\s+\S{16,}")),
    # The wire form of a Nostr secret key, but also of every pubkey and digest a bundle must
    # contain, so the scan only asks a person to look; a status has no need of one either way.
    ("hex-64", re.compile(r"(?<![0-9a-fA-F])[0-9a-fA-F]{64}(?![0-9a-fA-F])")),
)

# Shapes a status must not show although a bundle may hold them: looser than the scan's, since a
# status message is short and read by anyone who may list the object.
_STATUS_ONLY: tuple[tuple[re.Pattern[str], str], ...] = (
    # user:password@ in any URL (Postgres DSNs, S3 endpoints)
    (re.compile(r"(\b[a-z][a-z0-9+.-]*://[^/\s:@]*):[^@\s/]*@", re.IGNORECASE), r"\1:***@"),
    (re.compile(r"\bnsec1[0-9a-z]{6,}", re.IGNORECASE), "nsec1***"),
    # longer hex runs: a Schnorr signature (an auth tag's), a key glued to another
    (re.compile(r"(?<![0-9a-fA-F])[0-9a-fA-F]{65,}(?![0-9a-fA-F])"), "<hex>"),
    (re.compile(r"\bBearer\s+\S+", re.IGNORECASE), "Bearer ***"),
    (re.compile(r"\bsk-[A-Za-z0-9_-]{8,}"), "sk-***"),
    (re.compile(r"\bdapi[0-9a-z]{8,}", re.IGNORECASE), "dapi***"),
    (re.compile(r"((?:password|passwd|secret|token|api[_-]?key)[\"']?\s*[:=]\s*[\"']?)[^\s\"',;}&]+", re.IGNORECASE),
     r"\1***"),
)
# The shortest literal worth replacing: shorter ones collide with ordinary words.
MIN_LITERAL = 4
_REPLACEMENTS = {"hex-64": "<64 hex>", "bearer-header": "Authorization: Bearer ***"}


def scrub(text: str, literals: Iterable[str] = ()) -> str:
    """`text` without the given literals and without anything shaped like a secret kind."""
    if not text:
        return text
    for literal in sorted((s for s in literals if s and len(s) >= MIN_LITERAL), key=len, reverse=True):
        text = text.replace(literal, "***")
    for kind, pattern in SECRET_KINDS:
        text = pattern.sub(_REPLACEMENTS.get(kind, f"<{kind}>"), text)
    for pattern, replacement in _STATUS_ONLY:
        text = pattern.sub(replacement, text)
    return text


def _scrubbed(text: str | None) -> str | None:
    return scrub(text) if text else text


# A status field a person reads (a condition's message, a failure's details): whatever a writer
# puts there is scrubbed as the model is built and again as it is serialized for the API, since
# `model_copy(update=…)`, which the corridor's state machine builds statuses with, validates
# nothing: no path to the status can skip it.
StatusText = Annotated[str, AfterValidator(scrub), PlainSerializer(scrub, return_type=str)]
OptionalStatusText = Annotated[str | None, AfterValidator(_scrubbed), PlainSerializer(_scrubbed, return_type=str | None)]
