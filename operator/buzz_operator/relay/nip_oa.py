"""NIP-OA owner attestation ("auth tag"), docs/tenant.md#auth-tags.

The relay owner signs `sha256("nostr:agent-auth:<agent_pk>:<conditions>")`; the agent carries the
compact JSON `["auth","<owner_pk>","<conditions>","<sig>"]` and appends it as a tag to every event
it signs (docs/relay-protocol.md#auth), so the relay can admit it without a membership table lookup. Verification
mirrors the Rust side (`crates/buzz-sdk/src/nip_oa.rs`): exactly 4 string elements, lowercase
hex, 64-hex owner key, 128-hex signature, no self-attestation, and a strict conditions grammar.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import coincurve

_HEX64 = re.compile(r"^[0-9a-f]{64}$")
_HEX128 = re.compile(r"^[0-9a-f]{128}$")
_CLAUSE = re.compile(r"^(kind=|created_at<|created_at>)([0-9]+)$")
_U64_MAX = 2**64 - 1
_KIND_MAX = 65535


class AuthTagError(ValueError):
    """An auth tag or conditions string that does not follow the NIP-OA rules."""


@dataclass(frozen=True)
class Condition:
    """One clause: `field` is `kind` or `created_at`, `op` is `=`, `<` or `>`."""

    field: str
    op: str
    value: int

    def holds(self, kind: int, created_at: int) -> bool:
        actual = kind if self.field == "kind" else created_at
        if self.op == "=":
            return actual == self.value
        if self.op == "<":
            return actual < self.value
        return actual > self.value


def parse_conditions(conditions: str) -> tuple[Condition, ...]:
    """Parse `kind=N&created_at<N&created_at>N` (any subset, any order; empty = unconditional)."""
    if not isinstance(conditions, str):
        raise AuthTagError("conditions must be a string")
    if conditions == "":
        return ()
    parsed: list[Condition] = []
    for clause in conditions.split("&"):
        match = _CLAUSE.match(clause)
        if match is None:
            raise AuthTagError(f"conditions: invalid clause {clause!r}")
        prefix, digits = match.groups()
        if len(digits) > 1 and digits.startswith("0"):
            raise AuthTagError(f"conditions: leading zero in {clause!r}")
        value = int(digits)
        field, op = ("kind", "=") if prefix == "kind=" else ("created_at", prefix[-1])
        limit = _KIND_MAX if field == "kind" else _U64_MAX
        if value > limit:
            raise AuthTagError(f"conditions: value out of range in {clause!r}")
        parsed.append(Condition(field, op, value))
    return tuple(parsed)


def conditions_hold(conditions: str, event: Mapping[str, Any]) -> bool:
    """Every clause must hold for the event (clauses are a conjunction, as `&` reads)."""
    kind = event.get("kind")
    created_at = event.get("created_at")
    if not isinstance(kind, int) or not isinstance(created_at, int):
        return False
    return all(c.holds(kind, created_at) for c in parse_conditions(conditions))


def _preimage_digest(agent_pubkey_hex: str, conditions: str) -> bytes:
    return hashlib.sha256(f"nostr:agent-auth:{agent_pubkey_hex}:{conditions}".encode()).digest()


def compute_auth_tag(owner_secret_hex: str, agent_pubkey_hex: str, conditions: str = "") -> str:
    """The compact JSON auth tag the relay owner grants to `agent_pubkey_hex`."""
    if not _HEX64.match(agent_pubkey_hex or ""):
        raise AuthTagError("agent_pubkey_hex must be 64 lowercase hex characters")
    parse_conditions(conditions)
    try:
        owner = coincurve.PrivateKey(bytes.fromhex(owner_secret_hex))
    except ValueError as exc:
        raise AuthTagError("owner_secret_hex is not a valid secp256k1 secret key") from exc
    owner_pk = owner.public_key_xonly.format().hex()
    if owner_pk == agent_pubkey_hex:
        raise AuthTagError("self-attestation: the owner cannot attest its own key")
    # zero aux randomness (allowed by BIP-340) makes the tag a pure function of its inputs, so a
    # re-derived tenant hands out byte-identical tags (crash-safe idempotence, see tenant.py)
    sig = owner.sign_schnorr(_preimage_digest(agent_pubkey_hex, conditions), bytes(32)).hex()
    return json.dumps(["auth", owner_pk, conditions, sig], separators=(",", ":"))


def parse_auth_tag(tag: str | list[Any]) -> list[str]:
    """Structural checks on a tag given as JSON text or as an already-parsed event tag."""
    if isinstance(tag, str):
        try:
            tag = json.loads(tag)
        except json.JSONDecodeError as exc:
            raise AuthTagError("auth tag is not valid JSON") from exc
    if not isinstance(tag, list) or len(tag) != 4 or not all(isinstance(x, str) for x in tag):
        raise AuthTagError("auth tag must be a list of exactly 4 strings")
    if tag[0] != "auth":
        raise AuthTagError("auth tag must start with 'auth'")
    if not _HEX64.match(tag[1]):
        raise AuthTagError("auth tag owner pubkey must be 64 lowercase hex characters")
    if not _HEX128.match(tag[3]):
        raise AuthTagError("auth tag signature must be 128 lowercase hex characters")
    parse_conditions(tag[2])
    return tag


def verify_auth_tag(tag_json: str | list[Any], agent_pubkey_hex: str, owner_pubkey_hex: str) -> bool:
    """True iff the tag is well formed, names `owner_pubkey_hex`, and its signature verifies."""
    try:
        _, owner_pk, conditions, sig = parse_auth_tag(tag_json)
    except AuthTagError:
        return False
    if owner_pk != owner_pubkey_hex or owner_pk == agent_pubkey_hex:
        return False
    if not _HEX64.match(agent_pubkey_hex or ""):
        return False
    try:
        return coincurve.PublicKeyXOnly(bytes.fromhex(owner_pk)).verify(
            bytes.fromhex(sig), _preimage_digest(agent_pubkey_hex, conditions)
        )
    except ValueError:
        return False


def event_auth_tag(event: Mapping[str, Any]) -> list[str] | None:
    """The first `auth` tag of an event, if any (shape not yet checked)."""
    for tag in event.get("tags") or ():
        if isinstance(tag, list) and tag and tag[0] == "auth":
            return tag
    return None


def event_is_attested(event: Mapping[str, Any], owner_pubkey_hex: str) -> bool:
    """The event's own auth tag attests its author under the owner, and its conditions hold."""
    tag = event_auth_tag(event)
    if tag is None or not verify_auth_tag(tag, str(event.get("pubkey", "")), owner_pubkey_hex):
        return False
    return conditions_hold(tag[2], event)
