"""Deterministic identity derivations. Nothing here is stored: every secret can be recomputed from
the relay owner key, which is what makes provisioning crash-safe without writing secrets down."""

from __future__ import annotations

import functools
import hashlib
import uuid

from buzz_operator.relay.nostr import SECP256K1_ORDER, Keypair


def _secret_from_digest(digest: bytes) -> Keypair:
    return Keypair.from_int((int.from_bytes(digest, "big") % (SECP256K1_ORDER - 1)) + 1)


# Every trial derives the same 60 directory keys again; an EC point multiplication each is
# ~0.1 ms, ~7 ms of CPU per provisioning (bench/relay.py profile). Cached: pure and stable.
@functools.lru_cache(maxsize=4096)
def stable_keypair(owner_secret_hex: str, identity_id: str) -> Keypair:
    """The seed's `_stable_credential` (docs/tenant.md#keys): directory identities and fixture users
    (`task-user:<task>`) keep one pubkey per owner key across every trial and run."""
    digest = hashlib.sha256(
        b"buzz-benchmark-directory-v1\0" + bytes.fromhex(owner_secret_hex) + b"\0" + identity_id.encode()
    ).digest()
    return _secret_from_digest(digest)


def seat_keypair(owner_secret_hex: str, run_id: str, trial_id: str, seat_id: str) -> Keypair:
    """Per-trial seat (and default user) key: fresh for every (run, trial) like the seed's
    `generate_keypair()` (docs/tenant.md#keys), but recomputable, so it is never written to Postgres."""
    digest = hashlib.sha256(
        b"buzz-operator-seat-v1\0"
        + bytes.fromhex(owner_secret_hex)
        + b"\0"
        + f"{run_id}\0{trial_id}\0{seat_id}".encode()
    ).digest()
    return _secret_from_digest(digest)


def trial_lock_key(run_id: str, trial_id: str) -> int:
    """`pg_advisory_xact_lock` key of docs/tenant.md#provisioning (signed big-endian int64 of the sha256 prefix)."""
    return int.from_bytes(hashlib.sha256(f"{run_id}\x00{trial_id}".encode()).digest()[:8], "big", signed=True)


def trial_channel_id(owner_pubkey_hex: str, run_id: str, trial_id: str) -> str:
    """Channel UUID fixed by the trial, so a provisioning retried after a crash finds the channel
    it already created instead of making a second one (the seed used the CLI's random UUID)."""
    digest = hashlib.sha256(f"buzz-operator-channel-v1\0{owner_pubkey_hex}\0{run_id}\0{trial_id}".encode()).digest()
    return str(uuid.UUID(bytes=digest[:16], version=4))
