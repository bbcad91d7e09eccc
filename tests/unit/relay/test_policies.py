"""Pure policies: docs/relay-protocol.md#auth retry, docs/relay-protocol.md#tenancy host normalisation, docs/tenant.md#keys/docs/tenant.md#keys derivations."""

from __future__ import annotations

import hashlib
import random

import pytest
from buzz_operator.relay.hosts import http_url_for, normalize_host, relay_url_authority
from buzz_operator.relay.identities import seat_keypair, stable_keypair, trial_channel_id, trial_lock_key
from buzz_operator.relay.nostr import SECP256K1_ORDER, Keypair
from buzz_operator.relay.retry import MAX_ATTEMPTS, is_retryable, retry_delay

OWNER = "0f" * 32


def test_retryable_markers_match_the_seed() -> None:
    assert is_retryable('{"error":"x", "retryable" : true}')
    assert is_retryable("rate-limited: slow down")
    assert is_retryable("RATE-LIMITED")
    assert not is_retryable("invalid: bad signature")
    assert not is_retryable('{"retryable":false}')
    assert MAX_ATTEMPTS == 7


class _Fixed(random.Random):
    def __init__(self, value: float) -> None:
        super().__init__()
        self.value = value

    def uniform(self, a: float, b: float) -> float:
        return a + (b - a) * self.value


def test_retry_delay_is_exponential_capped_hinted_and_jittered() -> None:
    low, high = _Fixed(0.0), _Fixed(1.0)
    assert [retry_delay(a, "", low) for a in range(1, 8)] == [1, 2, 4, 8, 16, 32, 32]
    assert retry_delay(1, "rate-limited: retry in 10s", low) == 10
    assert retry_delay(6, "retry in 3s", low) == 32  # the hint is a floor, not a cap
    assert retry_delay(2, "", high) == 3.0  # ×1.5 jitter at most


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("LOCALHOST:3600", "localhost:3600"),
        ("127.0.0.1:3600", "localhost:3600"),
        ("[::1]:3600", "localhost:3600"),
        ("example.com.:443", "example.com"),
        ("example.com:80", "example.com"),
        ("relay.example.com:8080", "relay.example.com:8080"),
        ("127.0.0.1", "localhost"),
    ],
)
def test_normalize_host(raw: str, expected: str) -> None:
    assert normalize_host(raw) == expected


def test_relay_url_authority_and_http_url() -> None:
    assert relay_url_authority("ws://localhost:3600") == "localhost:3600"
    assert relay_url_authority("wss://Relay.Example.com/") == "relay.example.com"
    assert http_url_for("ws://localhost:3600") == "http://localhost:3600"
    with pytest.raises(ValueError, match="relay url"):
        relay_url_authority("localhost:3600")


def test_stable_keypair_follows_the_directory_v1_derivation() -> None:
    digest = hashlib.sha256(b"buzz-benchmark-directory-v1\0" + bytes.fromhex(OWNER) + b"\0benchmark-user-07").digest()
    expected = (int.from_bytes(digest, "big") % (SECP256K1_ORDER - 1)) + 1
    assert stable_keypair(OWNER, "benchmark-user-07") == Keypair.from_int(expected)
    assert stable_keypair(OWNER, "benchmark-user-07") != stable_keypair("0e" * 32, "benchmark-user-07")


def test_seat_keypair_is_fresh_per_trial_and_recomputable() -> None:
    digest = hashlib.sha256(b"buzz-operator-seat-v1\0" + bytes.fromhex(OWNER) + b"\0run\0trial\0lead-1").digest()
    expected = (int.from_bytes(digest, "big") % (SECP256K1_ORDER - 1)) + 1
    assert seat_keypair(OWNER, "run", "trial", "lead-1") == Keypair.from_int(expected)
    assert seat_keypair(OWNER, "run", "trial2", "lead-1") != seat_keypair(OWNER, "run", "trial", "lead-1")


def test_trial_lock_key_is_the_signed_sha256_prefix() -> None:
    prefix = hashlib.sha256(b"run-1\x00trial-1").digest()[:8]
    assert trial_lock_key("run-1", "trial-1") == int.from_bytes(prefix, "big", signed=True)
    keys = {trial_lock_key("r", f"t{i}") for i in range(200)}
    assert any(k < 0 for k in keys) and all(-(2**63) <= k < 2**63 for k in keys)


def test_trial_channel_id_is_a_stable_uuid4() -> None:
    a = trial_channel_id("ab" * 32, "run", "trial")
    assert a == trial_channel_id("ab" * 32, "run", "trial")
    assert a != trial_channel_id("ab" * 32, "run", "trial-2")
    assert a[14] == "4"
