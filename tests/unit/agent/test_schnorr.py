"""The stand-in's pure-Python BIP-340 signer against the BIP's own vectors and coincurve."""

from __future__ import annotations

import csv
import os
from pathlib import Path

import coincurve
import pytest
from buzz_operator.dev.agent import schnorr

VECTORS = list(csv.DictReader((Path(__file__).parent / "bip340_vectors.csv").open()))


@pytest.mark.parametrize("row", VECTORS, ids=[row["index"] for row in VECTORS])
def test_bip340_vector(row: dict[str, str]) -> None:
    pubkey = bytes.fromhex(row["public key"])
    message = bytes.fromhex(row["message"])
    signature = bytes.fromhex(row["signature"])
    if row["secret key"]:
        secret = bytes.fromhex(row["secret key"])
        assert schnorr.xonly_pubkey(secret) == pubkey
        assert schnorr.sign(message, secret, bytes.fromhex(row["aux_rand"])) == signature
    assert schnorr.verify(message, pubkey, signature) is (row["verification result"] == "TRUE")


@pytest.mark.parametrize("seed", range(8))
def test_matches_coincurve_both_ways(seed: int) -> None:
    secret = os.urandom(32)
    message = os.urandom(32)
    key = coincurve.PrivateKey(secret)
    ours_pub = schnorr.xonly_pubkey(secret)
    assert ours_pub == key.public_key_xonly.format()

    ours_sig = schnorr.sign(message, secret)
    assert key.public_key_xonly.verify(ours_sig, message)
    theirs_sig = key.sign_schnorr(message)
    assert schnorr.verify(message, ours_pub, theirs_sig)
    assert not schnorr.verify(bytes([message[0] ^ 1]) + message[1:], ours_pub, theirs_sig)


def test_rejects_bad_inputs() -> None:
    with pytest.raises(schnorr.SchnorrError):
        schnorr.xonly_pubkey(b"\x00" * 32)
    with pytest.raises(schnorr.SchnorrError):
        schnorr.sign(b"short", b"\x01" * 32)
    assert schnorr.verify(b"\x00" * 32, b"\x00" * 31, b"\x00" * 64) is False
