"""Pure-Python secp256k1 BIP-340 Schnorr signatures.

The stand-in agent runs inside the task container, whose only runtime is a bare `python3`
(no coincurve), so it carries its own signer. Jacobian coordinates keep a signature at a few
milliseconds, which is plenty for a chat agent. Not constant-time: the keys are throwaway
per-trial identities on a loopback relay, never wallet keys.
"""

from __future__ import annotations

import hashlib
import os
from typing import Optional

P = 0xFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFEFFFFFC2F
N = 0xFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFEBAAEDCE6AF48A03BBFD25E8CD0364141
_GX = 0x79BE667EF9DCBBAC55A06295CE870B07029BFCDB2DCE28D959F2815B16F81798
_GY = 0x483ADA7726A3C4655DA4FBFC0E1108A8FD17B448A68554199C47D08FFB10D4B8

# Affine points are (x, y) tuples; None is the point at infinity.
Point = Optional[tuple[int, int]]  # noqa: UP045 -- runtime alias; `|` needs 3.10 (compat.py)
_Jacobian = tuple[int, int, int]
G: tuple[int, int] = (_GX, _GY)


class SchnorrError(ValueError):
    """A key or signature input that BIP-340 rejects."""


def _to_jacobian(point: tuple[int, int]) -> _Jacobian:
    return (point[0], point[1], 1)


def _from_jacobian(point: _Jacobian) -> Point:
    x, y, z = point
    if z == 0:
        return None
    z_inv = pow(z, P - 2, P)
    z_inv2 = z_inv * z_inv % P
    return (x * z_inv2 % P, y * z_inv2 * z_inv % P)


def _double(point: _Jacobian) -> _Jacobian:
    x, y, z = point
    if z == 0 or y == 0:
        return (0, 1, 0)
    y2 = y * y % P
    s = 4 * x * y2 % P
    m = 3 * x * x % P
    nx = (m * m - 2 * s) % P
    ny = (m * (s - nx) - 8 * y2 * y2) % P
    nz = 2 * y * z % P
    return (nx, ny, nz)


def _add(a: _Jacobian, b: _Jacobian) -> _Jacobian:
    if a[2] == 0:
        return b
    if b[2] == 0:
        return a
    x1, y1, z1 = a
    x2, y2, z2 = b
    z1z1 = z1 * z1 % P
    z2z2 = z2 * z2 % P
    u1 = x1 * z2z2 % P
    u2 = x2 * z1z1 % P
    s1 = y1 * z2 * z2z2 % P
    s2 = y2 * z1 * z1z1 % P
    if u1 == u2:
        if s1 != s2:
            return (0, 1, 0)
        return _double(a)
    h = (u2 - u1) % P
    r = (s2 - s1) % P
    h2 = h * h % P
    h3 = h * h2 % P
    u1h2 = u1 * h2 % P
    nx = (r * r - h3 - 2 * u1h2) % P
    ny = (r * (u1h2 - nx) - s1 * h3) % P
    nz = h * z1 * z2 % P
    return (nx, ny, nz)


def point_mul(point: Point, scalar: int) -> Point:
    if point is None:
        return None
    result: _Jacobian = (0, 1, 0)
    addend = _to_jacobian(point)
    while scalar:
        if scalar & 1:
            result = _add(result, addend)
        addend = _double(addend)
        scalar >>= 1
    return _from_jacobian(result)


def point_add(a: Point, b: Point) -> Point:
    if a is None:
        return b
    if b is None:
        return a
    return _from_jacobian(_add(_to_jacobian(a), _to_jacobian(b)))


def tagged_hash(tag: str, data: bytes) -> bytes:
    tag_hash = hashlib.sha256(tag.encode()).digest()
    return hashlib.sha256(tag_hash + tag_hash + data).digest()


def _lift_x(x: int) -> Point:
    if x >= P:
        return None
    y_sq = (pow(x, 3, P) + 7) % P
    y = pow(y_sq, (P + 1) // 4, P)
    if pow(y, 2, P) != y_sq:
        return None
    return (x, y if y & 1 == 0 else P - y)


def _int(data: bytes) -> int:
    return int.from_bytes(data, "big")


def _bytes32(value: int) -> bytes:
    return value.to_bytes(32, "big")


def _secret_scalar(secret: bytes) -> int:
    if len(secret) != 32:
        raise SchnorrError("secret key must be 32 bytes")
    d = _int(secret)
    if not 1 <= d < N:
        raise SchnorrError("secret key out of range")
    return d


def xonly_pubkey(secret: bytes) -> bytes:
    """The 32-byte x-only public key (what Nostr calls the pubkey)."""
    point = point_mul(G, _secret_scalar(secret))
    assert point is not None  # d in [1, N) never multiplies G to infinity
    return _bytes32(point[0])


def sign(message: bytes, secret: bytes, aux_rand: bytes | None = None) -> bytes:
    """BIP-340 signature of a 32-byte message; fresh aux randomness unless given (vectors)."""
    if len(message) != 32:
        raise SchnorrError("message must be 32 bytes")
    aux = os.urandom(32) if aux_rand is None else aux_rand
    if len(aux) != 32:
        raise SchnorrError("aux_rand must be 32 bytes")
    d0 = _secret_scalar(secret)
    pub = point_mul(G, d0)
    assert pub is not None
    d = d0 if pub[1] % 2 == 0 else N - d0
    t = _bytes32(d ^ _int(tagged_hash("BIP0340/aux", aux)))
    k0 = _int(tagged_hash("BIP0340/nonce", t + _bytes32(pub[0]) + message)) % N
    if k0 == 0:
        raise SchnorrError("nonce is zero (negligible probability)")
    r_point = point_mul(G, k0)
    assert r_point is not None
    k = k0 if r_point[1] % 2 == 0 else N - k0
    e = _int(tagged_hash("BIP0340/challenge", _bytes32(r_point[0]) + _bytes32(pub[0]) + message)) % N
    return _bytes32(r_point[0]) + _bytes32((k + e * d) % N)


def verify(message: bytes, pubkey: bytes, signature: bytes) -> bool:
    """BIP-340 verification; False (never an exception) for any malformed input."""
    if len(message) != 32 or len(pubkey) != 32 or len(signature) != 64:
        return False
    pub = _lift_x(_int(pubkey))
    if pub is None:
        return False
    r = _int(signature[:32])
    s = _int(signature[32:])
    if r >= P or s >= N:
        return False
    e = _int(tagged_hash("BIP0340/challenge", signature[:32] + pubkey + message)) % N
    neg_pub = (pub[0], P - pub[1])
    point = point_add(point_mul(G, s), point_mul(neg_pub, e))
    return point is not None and point[1] % 2 == 0 and point[0] == r
