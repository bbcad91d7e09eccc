"""NIP-01 event ids and signatures, key parsing and the NIP-OA tag of the stand-in stack."""

from __future__ import annotations

import hashlib
import json

import coincurve
import pytest
from buzz_operator.dev.agent.nostr import (
    CredentialError,
    Keys,
    encode_nsec,
    event_id,
    latest_by,
    parse_auth_tag,
    sign_event,
    thread_tags,
    verify_event,
)

SECRET = "67dea2ed018072d675f5415ecfaed7d2597555e202d85b3d65ea4e58d2d92ffa"
# NIP-19's own example pair
NSEC = "nsec1vl029mgpspedva04g90vltkh6fvh240zqtv9k0t9af8935ke9laqsnlfe5"
AUTH_TAG = '["auth","' + "ab" * 32 + '","","' + "cd" * 64 + '"]'


def test_event_id_is_sha256_of_compact_utf8_serialization() -> None:
    tags = [["h", "chan"], ["p", "ff" * 32]]
    content = "grüße \"quoted\"\nnew line"
    expected = hashlib.sha256(
        json.dumps([0, "aa" * 32, 1700000000, 9, tags, content], separators=(",", ":"),
                   ensure_ascii=False).encode()
    ).hexdigest()
    assert event_id("aa" * 32, 1700000000, 9, tags, content) == expected
    # NIP-01 forbids \\u escapes for non-ASCII: ensure_ascii=True would give another id
    ascii_id = hashlib.sha256(json.dumps([0, "aa" * 32, 1700000000, 9, tags, content],
                                         separators=(",", ":")).encode()).hexdigest()
    assert expected != ascii_id


def test_keys_from_hex_and_nsec_agree_with_coincurve() -> None:
    from_hex = Keys.from_text(SECRET)
    from_nsec = Keys.from_text(NSEC)
    assert from_hex == from_nsec
    assert encode_nsec(from_hex.secret) == NSEC
    assert from_hex.pubkey == coincurve.PrivateKey(bytes.fromhex(SECRET)).public_key_xonly.format().hex()
    with pytest.raises(CredentialError):
        Keys.from_text(NSEC[:-1] + ("q" if NSEC[-1] != "q" else "p"))
    with pytest.raises(CredentialError):
        Keys.from_text("not-a-key")


def test_signed_event_carries_auth_tag_and_verifies_with_coincurve() -> None:
    keys = Keys.from_text(SECRET)
    tag = parse_auth_tag(AUTH_TAG)
    event = sign_event(keys, 9, "hello", [["h", "c1"]], auth_tag=tag, created_at=1700000001)
    assert event["tags"] == [["h", "c1"], tag]
    assert event["id"] == event_id(keys.pubkey, 1700000001, 9, event["tags"], "hello")
    assert coincurve.PublicKeyXOnly(bytes.fromhex(keys.pubkey)).verify(
        bytes.fromhex(event["sig"]), bytes.fromhex(event["id"]))
    assert verify_event(event)
    assert not verify_event({**event, "content": "tampered"})


@pytest.mark.parametrize("bad", ["{}", '["auth","x"]', "not json", '["p","a","b","c"]'])
def test_malformed_auth_tag_is_rejected(bad: str) -> None:
    with pytest.raises(CredentialError):
        parse_auth_tag(bad)


def test_absent_auth_tag_is_none() -> None:
    assert parse_auth_tag("") is None
    assert parse_auth_tag(None) is None


def test_thread_tags_direct_and_nested() -> None:
    root = {"id": "r", "tags": [["h", "c"]]}
    direct = {"id": "d", "tags": [["h", "c"], ["e", "r", "", "reply"]]}
    nested = {"id": "n", "tags": [["e", "r", "", "root"], ["e", "d", "", "reply"]]}
    assert thread_tags(root) == [["e", "r", "", "reply"]]
    assert thread_tags(direct) == [["e", "r", "", "root"], ["e", "d", "", "reply"]]
    assert thread_tags(nested) == [["e", "r", "", "root"], ["e", "n", "", "reply"]]


def test_latest_by_author_and_by_d_tag() -> None:
    events = [
        {"pubkey": "a", "created_at": 1, "tags": [["d", "x"]], "content": "old"},
        {"pubkey": "a", "created_at": 3, "tags": [["d", "y"]], "content": "new"},
        {"pubkey": "b", "created_at": 2, "tags": [["d", "x"]], "content": "x2"},
    ]
    assert {k: e["content"] for k, e in latest_by(events, "pubkey").items()} == {"a": "new", "b": "x2"}
    assert {k: e["content"] for k, e in latest_by(events, "d").items()} == {"x": "x2", "y": "new"}
