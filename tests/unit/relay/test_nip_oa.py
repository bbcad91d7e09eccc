"""NIP-OA auth tags (docs/tenant.md#auth-tags): compute, verify with the Rust-side structural rules, conditions."""

from __future__ import annotations

import hashlib
import json

import coincurve
import pytest
from buzz_operator.relay.nip_oa import (
    AuthTagError,
    Condition,
    compute_auth_tag,
    conditions_hold,
    event_is_attested,
    parse_conditions,
    verify_auth_tag,
)
from buzz_operator.relay.nostr import Keypair, sign_event

OWNER = Keypair.from_secret("11" * 32)
AGENT = Keypair.from_secret("22" * 32)


def test_tag_is_compact_json_over_the_documented_preimage() -> None:
    tag = compute_auth_tag(OWNER.secret_hex, AGENT.pubkey_hex)
    assert tag.startswith(f'["auth","{OWNER.pubkey_hex}","","') and " " not in tag
    sig = json.loads(tag)[3]
    digest = hashlib.sha256(f"nostr:agent-auth:{AGENT.pubkey_hex}:".encode()).digest()
    assert coincurve.PublicKeyXOnly(bytes.fromhex(OWNER.pubkey_hex)).verify(bytes.fromhex(sig), digest)
    assert verify_auth_tag(tag, AGENT.pubkey_hex, OWNER.pubkey_hex)
    assert compute_auth_tag(OWNER.secret_hex, AGENT.pubkey_hex) == tag  # deterministic


def test_conditions_are_signed_into_the_preimage() -> None:
    tag = compute_auth_tag(OWNER.secret_hex, AGENT.pubkey_hex, "kind=9&created_at<2000000000")
    assert verify_auth_tag(tag, AGENT.pubkey_hex, OWNER.pubkey_hex)
    parts = json.loads(tag)
    parts[2] = "kind=9"
    assert not verify_auth_tag(json.dumps(parts), AGENT.pubkey_hex, OWNER.pubkey_hex)


def test_verify_rejects_wrong_owner_wrong_agent_and_self_attestation() -> None:
    tag = compute_auth_tag(OWNER.secret_hex, AGENT.pubkey_hex)
    other = Keypair.generate()
    assert not verify_auth_tag(tag, other.pubkey_hex, OWNER.pubkey_hex)
    assert not verify_auth_tag(tag, AGENT.pubkey_hex, other.pubkey_hex)
    with pytest.raises(AuthTagError, match="self-attestation"):
        compute_auth_tag(OWNER.secret_hex, OWNER.pubkey_hex)
    # a hand-made self-attestation with a valid signature is still refused
    digest = hashlib.sha256(f"nostr:agent-auth:{OWNER.pubkey_hex}:".encode()).digest()
    self_sig = OWNER.sign_digest(digest)
    assert not verify_auth_tag(["auth", OWNER.pubkey_hex, "", self_sig], OWNER.pubkey_hex, OWNER.pubkey_hex)


@pytest.mark.parametrize(
    "mutate",
    [
        lambda t: t[:3],                                  # 3 elements
        lambda t: [*t, "extra"],                          # 5 elements
        lambda t: ["Auth", *t[1:]],                       # wrong name
        lambda t: [t[0], t[1].upper(), t[2], t[3]],      # uppercase owner
        lambda t: [t[0], t[1], t[2], t[3].upper()],      # uppercase sig
        lambda t: [t[0], t[1], t[2], t[3][:-2]],         # 126-hex sig
        lambda t: [t[0], t[1], "kind=x", t[3]],           # bad conditions
        lambda t: [t[0], t[1], t[2], 5],                  # non-string
    ],
)
def test_structural_rules(mutate) -> None:
    tag = json.loads(compute_auth_tag(OWNER.secret_hex, AGENT.pubkey_hex))
    assert not verify_auth_tag(mutate(tag), AGENT.pubkey_hex, OWNER.pubkey_hex)
    assert not verify_auth_tag(json.dumps(mutate(tag)), AGENT.pubkey_hex, OWNER.pubkey_hex)
    assert not verify_auth_tag("not json", AGENT.pubkey_hex, OWNER.pubkey_hex)


def test_conditions_grammar() -> None:
    assert parse_conditions("") == ()
    assert parse_conditions("kind=1&created_at<10&created_at>5") == (
        Condition("kind", "=", 1), Condition("created_at", "<", 10), Condition("created_at", ">", 5)
    )
    for bad in ("kind=", "kind=1&", "&kind=1", "kind>1", "created_at=5", "kind=-1", "kind=01",
                "kind=70000", "created_at<99999999999999999999", "kind = 1", "pubkey=ab"):
        with pytest.raises(AuthTagError):
            parse_conditions(bad)


def test_conditions_evaluate_against_an_event() -> None:
    event = {"kind": 9, "created_at": 100}
    assert conditions_hold("", event)
    assert conditions_hold("kind=9&created_at>99&created_at<101", event)
    assert not conditions_hold("kind=1", event)
    assert not conditions_hold("created_at<100", event)
    assert not conditions_hold("created_at>100", event)
    assert not conditions_hold("kind=9", {"kind": "9", "created_at": 100})


def test_event_is_attested_checks_author_and_conditions() -> None:
    tag = compute_auth_tag(OWNER.secret_hex, AGENT.pubkey_hex, "kind=9")
    assert event_is_attested(sign_event(AGENT, 9, "x", [], auth_tag=tag), OWNER.pubkey_hex)
    assert not event_is_attested(sign_event(AGENT, 0, "{}", [], auth_tag=tag), OWNER.pubkey_hex)
    assert not event_is_attested(sign_event(Keypair.generate(), 9, "x", [], auth_tag=tag), OWNER.pubkey_hex)
    assert not event_is_attested(sign_event(AGENT, 9, "x", []), OWNER.pubkey_hex)
