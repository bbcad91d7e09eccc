"""Owner keys are checked where the Secret is first read: hex or nsec1…, whitespace tolerated,
anything else refused naming the Secret key without quoting the value; relay URLs that the CRD
pattern admits but no URL parser takes apart are refused naming spec.relay.url; an HTTP answer
to the tenant handshake that says "not this host" is the spec's fault, an outage is not."""

from __future__ import annotations

import pytest
from buzz_operator.api.common import SecretKeyRef
from buzz_operator.inputs.errors import InputError
from buzz_operator.inputs.fetch.resolve import dsn_problem, owner_key_hex
from buzz_operator.relay.bech32 import encode_nsec
from buzz_operator.relay.hosts import handshake_refusal, relay_url_problem
from buzz_operator.relay.nostr import SECP256K1_ORDER, KeyFormatError, Keypair, secret_key_hex

KEY = Keypair.from_int(0xC0FFEE).secret_hex  # fixed: xdist workers must collect the same ids
REF = SecretKeyRef(name="relay-owner", key="owner-key")


@pytest.mark.parametrize("value", [KEY, KEY.upper(), f"{KEY}\n", f"  {KEY} ", encode_nsec(KEY),
                                   encode_nsec(KEY).upper() + "\n"])
def test_hex_and_nsec_keys_are_read_as_hex(value: str) -> None:
    assert secret_key_hex(value) == KEY
    assert owner_key_hex(value, REF) == KEY


@pytest.mark.parametrize("value", ["not-a-hex-key", "", KEY[:-1], KEY + "00", "0x" + KEY[2:], "0" * 64,
                                   f"{SECP256K1_ORDER:064x}", encode_nsec(KEY)[:-1] + "q", "nsec1", "npub1" + KEY,
                                   "é" * 64])
def test_malformed_keys_are_refused_naming_the_secret_key(value: str) -> None:
    with pytest.raises(KeyFormatError):
        secret_key_hex(value)
    with pytest.raises(InputError) as raised:
        owner_key_hex(value, REF)
    assert raised.value.field == "spec.relay.ownerKeySecretRef"
    assert "Secret relay-owner key owner-key is not a secret key" in str(raised.value)
    if len(value) >= 16:
        assert value.strip() not in str(raised.value) and value[5:20] not in str(raised.value)


@pytest.mark.parametrize("url", ["ws://localhost:3600", "wss://relay.example.com", "ws://localhost:80",
                                 "ws://[::1]:3600/path", "ws://user@relay:1"])
def test_parseable_relay_urls_pass(url: str) -> None:
    assert relay_url_problem(url) is None


@pytest.mark.parametrize(("url", "problem"), [
    ("ws://[::1:3600", "'ws://[::1:3600' is not a URL: Invalid IPv6 URL"),
    ("ws://h:99999", "'ws://h:99999' is not a URL: Port out of range 0-65535"),
    ("ws://h:x", "'ws://h:x' is not a URL: Port could not be cast to integer value as 'x'"),
    ("ws://h:0", "'ws://h:0': port 0 cannot be dialled"),
    ("ws://:80", "'ws://:80' must be ws:// or wss:// with a host"),
    ("ws://h/a b", "'ws://h/a b' holds whitespace or control characters"),
    ("http://h", "'http://h' must be ws:// or wss:// with a host"),
])
def test_unparseable_relay_urls_are_refused(url: str, problem: str) -> None:
    assert relay_url_problem(url) == problem


def test_handshake_answers() -> None:
    refusal = handshake_refusal("ws://localhost:80", 404)
    assert refusal is not None and "localhost with HTTP 404" in refusal and "another host" in refusal
    assert handshake_refusal("wss://relay.example.com", 421) == (
        "the relay answers the websocket handshake for relay.example.com with HTTP 421: it is bound to another "
        "host (spec.relay.url must be the URL the relay was started with)")
    for outage in (408, 429, 500, 502, 503):
        assert handshake_refusal("wss://relay.example.com", outage) is None


@pytest.mark.parametrize("dsn", ["postgresql://relay:pw@10.0.0.1:5432/relay", "postgres://h/db?sslmode=require",
                                 "postgresql://h1:5432,h2:5433/db", "postgresql:///db?host=/tmp",
                                 "postgresql://[::1]:5432/db"])
def test_dsns_asyncpg_dials_pass(dsn: str) -> None:
    assert dsn_problem(dsn) is None


@pytest.mark.parametrize("dsn", ["not a dsn", "mysql://x", "postgresql://u:secretpw@[::1/db", "postgresql://h:x/db",
                                 "postgresql://,", "postgres://?_", "postgres://h/db?sslmode=on",
                                 "postgres://h/db?target_session_attrs=x", "postgres://h/db?port=x"])
def test_dsns_asyncpg_refuses_are_named_without_the_password(dsn: str) -> None:
    problem = dsn_problem(dsn)
    assert problem is not None and "secretpw" not in problem
