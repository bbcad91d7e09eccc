"""Nostr primitives: secp256k1 keys with x-only pubkeys, NIP-01 event ids and BIP-340 signatures,
NIP-42 AUTH events, plus re-exports of NIP-OA auth tags and NIP-19 encoding (docs/tenant.md#auth-tags, docs/relay-protocol.md)."""

from __future__ import annotations

import hashlib
import json
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import coincurve

from buzz_operator.relay.bech32 import Bech32Error, decode_bech32, decode_key, encode_npub, encode_nsec
from buzz_operator.relay.nip_oa import (
    AuthTagError,
    compute_auth_tag,
    conditions_hold,
    event_auth_tag,
    event_is_attested,
    parse_conditions,
    verify_auth_tag,
)

__all__ = [
    "KIND_AUTH",
    "AuthTagError",
    "Bech32Error",
    "KeyFormatError",
    "Keypair",
    "auth_event",
    "compute_auth_tag",
    "conditions_hold",
    "decode_bech32",
    "decode_key",
    "encode_npub",
    "encode_nsec",
    "event_auth_tag",
    "event_id",
    "event_is_attested",
    "event_shape_error",
    "parse_conditions",
    "secret_key_hex",
    "serialize_event",
    "sign_event",
    "verify_auth_tag",
    "verify_event",
]

KIND_AUTH = 22242
_HEX64 = re.compile(r"^[0-9a-f]{64}$")
_HEX128 = re.compile(r"^[0-9a-f]{128}$")
# secp256k1 group order; secrets live in [1, n-1]
SECP256K1_ORDER = 0xFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFEBAAEDCE6AF48A03BBFD25E8CD0364141


class KeyFormatError(ValueError):
    """A secret key that is neither 64 hex characters nor an `nsec1…`; the message never quotes it."""


def secret_key_hex(secret: object) -> str:
    """The lowercase 64-hex form of a secret key given as hex or NIP-19 `nsec1…`, surrounding
    whitespace allowed (Secrets made with `echo` end in a newline). Checked here, where a key is
    first read, so a malformed one is named at once instead of failing deep in a handshake."""
    if not isinstance(secret, str):
        raise KeyFormatError("not a string")
    text = secret.strip()
    if text[:5].lower() == "nsec1":
        try:
            text = decode_key(text, "nsec")
        except Bech32Error as exc:
            raise KeyFormatError(f"an nsec1 key that does not decode ({str(exc).split(':')[-1].strip()})") from None
    elif not (text.isascii() and _HEX64.fullmatch(text.lower())):
        raise KeyFormatError(f"not 64 hex characters or an nsec1 key ({_shape(text)})")
    if not 0 < int(text, 16) < SECP256K1_ORDER:
        raise KeyFormatError("outside the secp256k1 range (zero or at least the group order)")
    return text.lower()


def _shape(text: str) -> str:
    # what is wrong, without quoting a single character of what may be a real key
    if not text:
        return "empty"
    bad = sum(1 for c in text if c not in "0123456789abcdefABCDEF")
    return f"{len(text)} characters, {bad} of them not hex" if bad else f"{len(text)} hex characters"


@dataclass(frozen=True, repr=False)
class Keypair:
    """A secp256k1 key. `repr` hides the secret so a stray log line cannot leak it."""

    secret_hex: str
    pubkey_hex: str

    def __repr__(self) -> str:
        return f"Keypair(pubkey_hex={self.pubkey_hex!r})"

    @classmethod
    def generate(cls) -> Keypair:
        key = coincurve.PrivateKey()
        return cls(key.to_hex(), key.public_key_xonly.format().hex())

    @classmethod
    def from_secret(cls, secret: str) -> Keypair:
        """Accepts 64-hex or `nsec1…`."""
        key = coincurve.PrivateKey(bytes.fromhex(secret_key_hex(secret)))
        return cls(key.to_hex(), key.public_key_xonly.format().hex())

    @classmethod
    def from_int(cls, secret: int) -> Keypair:
        return cls.from_secret(secret.to_bytes(32, "big").hex())

    def sign_digest(self, digest32: bytes, aux: bytes = b"") -> str:
        return coincurve.PrivateKey(bytes.fromhex(self.secret_hex)).sign_schnorr(digest32, aux).hex()


def serialize_event(pubkey: str, created_at: int, kind: int, tags: Sequence[Sequence[str]], content: str) -> bytes:
    """NIP-01 canonical form: compact JSON, UTF-8, no ASCII escaping (JSON.stringify-compatible)."""
    return json.dumps(
        [0, pubkey, created_at, kind, tags, content], separators=(",", ":"), ensure_ascii=False
    ).encode("utf-8")


def event_id(pubkey: str, created_at: int, kind: int, tags: Sequence[Sequence[str]], content: str) -> str:
    return hashlib.sha256(serialize_event(pubkey, created_at, kind, tags, content)).hexdigest()


def sign_event(
    keypair: Keypair,
    kind: int,
    content: str,
    tags: Sequence[Sequence[str]] | None = None,
    created_at: int | None = None,
    auth_tag: str | None = None,
) -> dict[str, Any]:
    """Build and sign an event. With `auth_tag`, the NIP-OA tag is appended (docs/relay-protocol.md#auth: every event
    an attested identity signs carries it), unless the caller already put one in `tags`."""
    tag_list = [list(t) for t in (tags or [])]
    if auth_tag is not None and not any(t and t[0] == "auth" for t in tag_list):
        tag_list.append(list(json.loads(auth_tag)))
    ts = int(time.time()) if created_at is None else int(created_at)
    eid = event_id(keypair.pubkey_hex, ts, kind, tag_list, content)
    return {
        "id": eid,
        "pubkey": keypair.pubkey_hex,
        "created_at": ts,
        "kind": kind,
        "tags": tag_list,
        "content": content,
        "sig": keypair.sign_digest(bytes.fromhex(eid)),
    }


def event_shape_error(event: Any) -> str | None:
    """Why an event is structurally invalid, or None. Used by the relay for `invalid:` replies."""
    if not isinstance(event, dict):
        return "event must be an object"
    for field, kind in (("id", str), ("pubkey", str), ("sig", str), ("content", str)):
        if not isinstance(event.get(field), kind):
            return f"{field} must be a string"
    for field in ("created_at", "kind"):
        value = event.get(field)
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            return f"{field} must be a non-negative integer"
    if event["kind"] > 65535:
        return "kind out of range"
    tags = event.get("tags")
    if not isinstance(tags, list) or not all(
        isinstance(t, list) and all(isinstance(x, str) for x in t) for t in tags
    ):
        return "tags must be a list of string lists"
    if not _HEX64.match(event["id"]) or not _HEX64.match(event["pubkey"]):
        return "id and pubkey must be 64 lowercase hex characters"
    if not _HEX128.match(event["sig"]):
        return "sig must be 128 lowercase hex characters"
    return None


def verify_event(event: Any) -> bool:
    """Shape, id (recomputed) and BIP-340 signature all check out."""
    if event_shape_error(event) is not None:
        return False
    expected = event_id(event["pubkey"], event["created_at"], event["kind"], event["tags"], event["content"])
    if expected != event["id"]:
        return False
    try:
        return coincurve.PublicKeyXOnly(bytes.fromhex(event["pubkey"])).verify(
            bytes.fromhex(event["sig"]), bytes.fromhex(event["id"])
        )
    except ValueError:
        return False


def auth_event(keypair: Keypair, relay_url: str, challenge: str, auth_tag: str | None = None) -> dict[str, Any]:
    """NIP-42 AUTH response (kind 22242, tags relay + challenge; plus the NIP-OA tag, docs/relay-protocol.md#auth)."""
    return sign_event(keypair, KIND_AUTH, "", [["relay", relay_url], ["challenge", challenge]], auth_tag=auth_tag)
