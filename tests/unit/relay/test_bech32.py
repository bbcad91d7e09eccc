"""NIP-19 vectors (from the NIP text) and decoding errors."""

from __future__ import annotations

import pytest
from buzz_operator.relay.bech32 import Bech32Error, decode_bech32, decode_key, encode_npub, encode_nsec

NPUB = "npub10elfcs4fr0l0r8af98jlmgdh9c8tcxjvz9qkw038js35mp4dma8qzvjptg"
NPUB_HEX = "7e7e9c42a91bfef19fa929e5fda1b72e0ebc1a4c1141673e2794234d86addf4e"
NSEC = "nsec1vl029mgpspedva04g90vltkh6fvh240zqtv9k0t9af8935ke9laqsnlfe5"
NSEC_HEX = "67dea2ed018072d675f5415ecfaed7d2597555e202d85b3d65ea4e58d2d92ffa"


def test_nip19_vectors_encode_and_decode() -> None:
    assert encode_npub(NPUB_HEX) == NPUB
    assert encode_nsec(NSEC_HEX) == NSEC
    assert decode_key(NPUB, "npub") == NPUB_HEX
    assert decode_key(NSEC.upper(), "nsec") == NSEC_HEX
    assert decode_bech32(NSEC) == ("nsec", bytes.fromhex(NSEC_HEX))


@pytest.mark.parametrize(
    ("text", "match"),
    [
        (NSEC[:-1] + ("q" if NSEC[-1] != "q" else "p"), "checksum"),
        ("nsec1" + "q" * 10, "checksum"),
        ("Nsec1vl029mgpspedva04g90vltkh6fvh240zqtv9k0t9af8935ke9laqsnlfe5", "mixed case"),
        ("nsec1vl029mgpspedva04g90vltkh6fvh240zqtv9k0t9af8935ke9laqsnlfeb", "invalid character"),
        ("nosep", "separator"),
        ("", "empty"),
    ],
)
def test_bad_bech32_is_rejected(text: str, match: str) -> None:
    with pytest.raises(Bech32Error, match=match):
        decode_bech32(text)


def test_wrong_prefix_and_wrong_length_are_named() -> None:
    with pytest.raises(Bech32Error, match="expected 'nsec'"):
        decode_key(NPUB, "nsec")
    with pytest.raises(Bech32Error, match="32 bytes"):
        encode_npub("ab" * 31)
