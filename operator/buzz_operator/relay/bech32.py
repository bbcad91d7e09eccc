"""NIP-19 bech32 encoding of 32-byte keys (`nsec1…`, `npub1…`).

Plain bech32 (BIP-173 constant 1), not bech32m: NIP-19 keys predate bech32m and every Nostr
client decodes them with the original checksum.
"""

from __future__ import annotations

_CHARSET = "qpzry9x8gf2tvdw0s3jn54khce6mua7l"
_GENERATOR = (0x3B6A57B2, 0x26508E6D, 0x1EA119FA, 0x3D4233DD, 0x2A1462B3)


class Bech32Error(ValueError):
    """A bech32 string that is malformed, has a bad checksum, or an unexpected prefix."""


def _polymod(values: list[int]) -> int:
    chk = 1
    for value in values:
        top = chk >> 25
        chk = (chk & 0x1FFFFFF) << 5 ^ value
        for i, gen in enumerate(_GENERATOR):
            if (top >> i) & 1:
                chk ^= gen
    return chk


def _hrp_expand(hrp: str) -> list[int]:
    return [ord(c) >> 5 for c in hrp] + [0] + [ord(c) & 31 for c in hrp]


def _convert_bits(data: bytes | list[int], from_bits: int, to_bits: int, pad: bool) -> list[int]:
    acc = 0
    bits = 0
    out: list[int] = []
    maxv = (1 << to_bits) - 1
    for value in data:
        if value < 0 or value >> from_bits:
            raise Bech32Error("bech32: data value out of range")
        acc = (acc << from_bits) | value
        bits += from_bits
        while bits >= to_bits:
            bits -= to_bits
            out.append((acc >> bits) & maxv)
    if pad:
        if bits:
            out.append((acc << (to_bits - bits)) & maxv)
    elif bits >= from_bits or ((acc << (to_bits - bits)) & maxv):
        raise Bech32Error("bech32: invalid padding")
    return out


def bech32_encode(hrp: str, payload: bytes) -> str:
    data = _convert_bits(payload, 8, 5, True)
    checksum_input = _hrp_expand(hrp) + data + [0] * 6
    polymod = _polymod(checksum_input) ^ 1
    checksum = [(polymod >> 5 * (5 - i)) & 31 for i in range(6)]
    return hrp + "1" + "".join(_CHARSET[d] for d in data + checksum)


def decode_bech32(text: str) -> tuple[str, bytes]:
    """Decode any bech32 string into (hrp, payload bytes)."""
    if not isinstance(text, str) or not text:
        raise Bech32Error("bech32: empty or non-string input")
    if text.lower() != text and text.upper() != text:
        raise Bech32Error("bech32: mixed case")
    text = text.lower()
    pos = text.rfind("1")
    if pos < 1 or pos + 7 > len(text):
        raise Bech32Error("bech32: missing separator or checksum")
    hrp, rest = text[:pos], text[pos + 1 :]
    try:
        data = [_CHARSET.index(c) for c in rest]
    except ValueError as exc:
        # the text may be a secret key: say where, never what
        where = pos + 1 + next(i for i, c in enumerate(rest) if c not in _CHARSET)
        raise Bech32Error(f"bech32: invalid character at position {where}") from exc
    if _polymod(_hrp_expand(hrp) + data) != 1:
        raise Bech32Error("bech32: bad checksum")
    return hrp, bytes(_convert_bits(data[:-6], 5, 8, False))


def _encode_key(hrp: str, key_hex: str) -> str:
    try:
        raw = bytes.fromhex(key_hex)
    except ValueError as exc:
        raise Bech32Error(f"{hrp}: key is not hex") from exc
    if len(raw) != 32:
        raise Bech32Error(f"{hrp}: key must be 32 bytes, got {len(raw)}")
    return bech32_encode(hrp, raw)


def encode_nsec(secret_hex: str) -> str:
    return _encode_key("nsec", secret_hex)


def encode_npub(pubkey_hex: str) -> str:
    return _encode_key("npub", pubkey_hex)


def decode_key(text: str, expected_hrp: str) -> str:
    """Decode `nsec1…`/`npub1…` to lowercase hex, insisting on the prefix the caller expects."""
    hrp, payload = decode_bech32(text)
    if hrp != expected_hrp:
        raise Bech32Error(f"bech32: expected {expected_hrp!r} prefix, got {hrp!r}")
    if len(payload) != 32:
        raise Bech32Error(f"{hrp}: payload must be 32 bytes, got {len(payload)}")
    return payload.hex()
