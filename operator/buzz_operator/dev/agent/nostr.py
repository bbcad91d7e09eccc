"""Nostr events for the stand-in stack: NIP-01 ids, BIP-340 signatures, the NIP-OA auth tag.

Stdlib only (see schnorr.py for why).
"""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import dataclass
from typing import Any

from . import schnorr

_BECH32_CHARSET = "qpzry9x8gf2tvdw0s3jn54khce6mua7l"

Tags = list[list[str]]
Event = dict[str, Any]


class CredentialError(ValueError):
    """A private key or auth tag that cannot be used."""


_BECH32_GENERATOR = (0x3B6A57B2, 0x26508E6D, 0x1EA119FA, 0x3D4233DD, 0x2A1462B3)


def _polymod(hrp: str, data: list[int]) -> int:
    chk = 1
    for value in [ord(c) >> 5 for c in hrp] + [0] + [ord(c) & 31 for c in hrp] + data:
        top = chk >> 25
        chk = (chk & 0x1FFFFFF) << 5 ^ value
        for i, gen in enumerate(_BECH32_GENERATOR):
            if (top >> i) & 1:
                chk ^= gen
    return chk


def _nsec_to_hex(text: str) -> str:
    """Decode NIP-19 `nsec1…` (plain bech32). Checksum is verified so a typo fails loudly."""
    text = text.lower()
    hrp, _, rest = text.rpartition("1")
    if hrp != "nsec" or len(rest) < 7:
        raise CredentialError("not an nsec key")
    try:
        data = [_BECH32_CHARSET.index(c) for c in rest]
    except ValueError as exc:
        raise CredentialError("invalid bech32 character") from exc
    if _polymod(hrp, data) != 1:
        raise CredentialError("bad nsec checksum")
    acc, bits, out = 0, 0, bytearray()
    for value in data[:-6]:
        acc = (acc << 5) | value
        bits += 5
        if bits >= 8:
            bits -= 8
            out.append((acc >> bits) & 0xFF)
    if len(out) != 32:
        raise CredentialError("nsec payload is not 32 bytes")
    return out.hex()


def _encode_bech32(hrp: str, payload: bytes) -> str:
    acc, bits, data = 0, 0, []
    for byte in payload:
        acc = (acc << 8) | byte
        bits += 8
        while bits >= 5:
            bits -= 5
            data.append((acc >> bits) & 31)
    if bits:
        data.append((acc << (5 - bits)) & 31)
    checksum = _polymod(hrp, [*data, 0, 0, 0, 0, 0, 0]) ^ 1
    data += [(checksum >> 5 * (5 - i)) & 31 for i in range(6)]
    return hrp + "1" + "".join(_BECH32_CHARSET[d] for d in data)


def encode_nsec(secret: bytes) -> str:
    """NIP-19 `nsec1…` of a 32-byte secret: the form buzz-acp hands its MCP server (and the one
    the `leaky` policy prints)."""
    return _encode_bech32("nsec", secret)


def encode_npub(pubkey_hex: str) -> str:
    """NIP-19 `npub1…` of an x-only pubkey, as buzz-acp names senders in a prompt."""
    return _encode_bech32("npub", bytes.fromhex(pubkey_hex))


@dataclass(frozen=True)
class Keys:
    secret: bytes
    pubkey: str  # lowercase x-only hex

    @classmethod
    def from_text(cls, text: str) -> Keys:
        """Hex or nsec, like the real CLI's BUZZ_PRIVATE_KEY."""
        text = text.strip()
        hex_key = _nsec_to_hex(text) if text.lower().startswith("nsec1") else text
        try:
            secret = bytes.fromhex(hex_key)
        except ValueError as exc:
            raise CredentialError("private key is neither hex nor nsec") from exc
        try:
            pubkey = schnorr.xonly_pubkey(secret).hex()
        except schnorr.SchnorrError as exc:
            raise CredentialError(str(exc)) from exc
        return cls(secret=secret, pubkey=pubkey)


def parse_auth_tag(text: str | None) -> list[str] | None:
    """The NIP-OA tag from BUZZ_AUTH_TAG (compact JSON `["auth", owner, conditions, sig]`)."""
    if not text or not text.strip():
        return None
    try:
        tag = json.loads(text)
    except json.JSONDecodeError as exc:
        raise CredentialError("BUZZ_AUTH_TAG is not JSON") from exc
    if not (isinstance(tag, list) and len(tag) == 4 and tag[0] == "auth"
            and all(isinstance(part, str) for part in tag)):
        raise CredentialError('BUZZ_AUTH_TAG must be ["auth", owner, conditions, sig]')
    return tag


def event_id(pubkey: str, created_at: int, kind: int, tags: Tags, content: str) -> str:
    """NIP-01: sha256 of the compact UTF-8 JSON array [0, pubkey, created_at, kind, tags, content]."""
    serialized = json.dumps([0, pubkey, created_at, kind, tags, content],
                            separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(serialized.encode("utf-8")).hexdigest()


def sign_event(keys: Keys, kind: int, content: str, tags: Tags,
               auth_tag: list[str] | None = None, created_at: int | None = None) -> Event:
    """A signed event; the NIP-OA tag is appended to every event, as the real SDK does."""
    all_tags = [list(tag) for tag in tags]
    if auth_tag is not None:
        all_tags.append(list(auth_tag))
    stamp = int(time.time()) if created_at is None else created_at
    ident = event_id(keys.pubkey, stamp, kind, all_tags, content)
    sig = schnorr.sign(bytes.fromhex(ident), keys.secret).hex()
    return {"id": ident, "pubkey": keys.pubkey, "created_at": stamp, "kind": kind,
            "tags": all_tags, "content": content, "sig": sig}


def verify_event(event: Event) -> bool:
    try:
        expected = event_id(event["pubkey"], event["created_at"], event["kind"],
                            event["tags"], event["content"])
        return expected == event["id"] and schnorr.verify(
            bytes.fromhex(event["id"]), bytes.fromhex(event["pubkey"]), bytes.fromhex(event["sig"]))
    except (KeyError, TypeError, ValueError):
        return False


def tag_values(event: Event, name: str) -> list[str]:
    return [tag[1] for tag in event.get("tags", [])
            if isinstance(tag, list) and len(tag) >= 2 and tag[0] == name]


# The NIP-OA conditions the operator's provisioner gives directory identities (profiles only);
# the stack cannot import buzz_operator.relay.directory, which spells it DIRECTORY_CONDITIONS.
DIRECTORY_CONDITIONS = "kind=0"


def provisioned_by(event: Event, owner_pubkey: str) -> bool:
    """Whether the event's own (first) auth tag is `owner_pubkey`'s profile-only grant: a
    directory identity that owner's provisioner made. The signature is the relay's to check —
    it stores no event whose auth tag does not verify — so it is not checked again here."""
    tag = next((t for t in event.get("tags", []) if isinstance(t, list) and t and t[0] == "auth"), None)
    return tag is not None and len(tag) == 4 and tag[1] == owner_pubkey and tag[2] == DIRECTORY_CONDITIONS


def thread_tags(parent: Event) -> Tags:
    """NIP-10 tags for a reply to `parent`, like the SDK: a direct reply to a root, or root +
    reply when `parent` is itself a reply (its root is its "root" marker, or the event a direct
    reply's lone "reply" marker names)."""
    markers = {str(tag[3]): str(tag[1]) for tag in parent.get("tags", [])
               if isinstance(tag, list) and len(tag) >= 4 and tag[0] == "e"}
    root = markers.get("root") or markers.get("reply")
    if root is None:
        return [["e", str(parent["id"]), "", "reply"]]
    return [["e", root, "", "root"], ["e", str(parent["id"]), "", "reply"]]


def latest_by(events: list[Event], key: str) -> dict[str, Event]:
    """The newest event per author (`key="pubkey"`) or per `d` tag (`key="d"`, replaceable
    relay state such as kind 39000/39002)."""
    latest: dict[str, Event] = {}
    for event in events:
        ident = (tag_values(event, "d") or [""])[0] if key == "d" else str(event.get("pubkey", ""))
        if ident and (ident not in latest or event.get("created_at", 0) >= latest[ident].get("created_at", 0)):
            latest[ident] = event
    return latest

