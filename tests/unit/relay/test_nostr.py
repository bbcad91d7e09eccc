"""NIP-01 ids, BIP-340 vectors (from the BIP's test-vectors.csv) and event signing."""

from __future__ import annotations

import hashlib

import coincurve
import pytest
from buzz_operator.relay.nostr import (
    Keypair,
    auth_event,
    compute_auth_tag,
    encode_nsec,
    event_id,
    serialize_event,
    sign_event,
    verify_event,
)

# (secret, pubkey, aux_rand, message, signature) — BIP-340 vectors 0, 1, 2
SIGNING_VECTORS = [
    ("0000000000000000000000000000000000000000000000000000000000000003",
     "F9308A019258C31049344F85F89D5229B531C845836F99B08601F113BCE036F9",
     "0000000000000000000000000000000000000000000000000000000000000000",
     "0000000000000000000000000000000000000000000000000000000000000000",
     "E907831F80848D1069A5371B402410364BDF1C5F8307B0084C55F1CE2DCA8215"
     "25F66A4A85EA8B71E482A74F382D2CE5EBEEE8FDB2172F477DF4900D310536C0"),
    ("B7E151628AED2A6ABF7158809CF4F3C762E7160F38B4DA56A784D9045190CFEF",
     "DFF1D77F2A671C5F36183726DB2341BE58FEAE1DA2DECED843240F7B502BA659",
     "0000000000000000000000000000000000000000000000000000000000000001",
     "243F6A8885A308D313198A2E03707344A4093822299F31D0082EFA98EC4E6C89",
     "6896BD60EEAE296DB48A229FF71DFE071BDE413E6D43F917DC8DCF8C78DE3341"
     "8906D11AC976ABCCB20B091292BFF4EA897EFCB639EA871CFA95F6DE339E4B0A"),
    ("C90FDAA22168C234C4C6628B80DC1CD129024E088A67CC74020BBEA63B14E5C9",
     "DD308AFEC5777E13121FA72B9CC1B7CC0139715309B086C960E18FD969774EB8",
     "C87AA53824B4D7AE2EB035A2B5BBBCCC080E76CDC6D1692C4B0B62D798E6D906",
     "7E2D58D8B3BCDF1ABADEC7829054F90DDA9805AAB56C77333024B9D0A508B75C",
     "5831AAEED7B44BB74E5EAB94BA9D4294C49BCF2A60728D8B4C200F50DD313C1B"
     "AB745879A5AD954A72C45A91C3A51D3C7ADEA98D82F8481E0E1E03674A6F3FB7"),
]


@pytest.mark.parametrize(("secret", "pubkey", "aux", "message", "signature"), SIGNING_VECTORS)
def test_bip340_signing_vectors(secret: str, pubkey: str, aux: str, message: str, signature: str) -> None:
    kp = Keypair.from_secret(secret)
    assert kp.pubkey_hex == pubkey.lower()
    assert kp.sign_digest(bytes.fromhex(message), bytes.fromhex(aux)) == signature.lower()
    assert coincurve.PublicKeyXOnly(bytes.fromhex(pubkey)).verify(bytes.fromhex(signature), bytes.fromhex(message))


def test_bip340_vector_6_bad_signature_fails() -> None:
    # vector 6: has_even_y(R) is false
    pubkey = "DFF1D77F2A671C5F36183726DB2341BE58FEAE1DA2DECED843240F7B502BA659"
    message = "243F6A8885A308D313198A2E03707344A4093822299F31D0082EFA98EC4E6C89"
    sig = ("FFF97BD5755EEEA420453A14355235D382F6472F8568A18B2F057A1460297556"
           "3CC27944640AC607CD107AE10923D9EF7A73C643E166BE5EBEAFA34B1AC553E2")
    assert not coincurve.PublicKeyXOnly(bytes.fromhex(pubkey)).verify(bytes.fromhex(sig), bytes.fromhex(message))


def test_nip01_serialisation_is_compact_utf8_with_json_escapes() -> None:
    pk = "ab" * 32
    content = 'quote " backslash \\ newline \n tab \t é ✓'
    expected = ('[0,"' + pk + '",1700000000,9,[["h","c"],["p","x"]],'
                '"quote \\" backslash \\\\ newline \\n tab \\t é ✓"]').encode()
    assert serialize_event(pk, 1700000000, 9, [["h", "c"], ["p", "x"]], content) == expected
    assert event_id(pk, 1700000000, 9, [["h", "c"], ["p", "x"]], content) == hashlib.sha256(expected).hexdigest()


def test_sign_and_verify_and_tamper() -> None:
    kp = Keypair.generate()
    event = sign_event(kp, 9, "hello", [["h", "c"]], created_at=1700000000)
    assert verify_event(event)
    assert not verify_event({**event, "content": "hellO"})
    assert not verify_event({**event, "sig": event["sig"][:-2] + ("00" if event["sig"][-2:] != "00" else "01")})
    assert not verify_event({**event, "pubkey": Keypair.generate().pubkey_hex})
    assert not verify_event({**event, "kind": "9"})
    assert not verify_event("not an event")


def test_auth_tag_is_appended_once_to_signed_events() -> None:
    owner, agent = Keypair.generate(), Keypair.generate()
    tag = compute_auth_tag(owner.secret_hex, agent.pubkey_hex)
    event = sign_event(agent, 9, "x", [["h", "c"]], auth_tag=tag)
    assert event["tags"] == [["h", "c"], ["auth", owner.pubkey_hex, "", tag.split('"')[-2]]]
    again = sign_event(agent, 9, "x", event["tags"], auth_tag=tag)
    assert sum(t[0] == "auth" for t in again["tags"]) == 1


def test_nip42_auth_event_shape() -> None:
    kp = Keypair.generate()
    event = auth_event(kp, "ws://localhost:3600", "abc")
    assert event["kind"] == 22242 and event["content"] == ""
    assert event["tags"] == [["relay", "ws://localhost:3600"], ["challenge", "abc"]]
    assert verify_event(event)


def test_keypair_from_secret_accepts_nsec_and_hides_secret_in_repr() -> None:
    kp = Keypair.generate()
    assert Keypair.from_secret(encode_nsec(kp.secret_hex)) == kp
    assert kp.secret_hex not in repr(kp)
    with pytest.raises(ValueError, match="64 hex"):
        Keypair.from_secret("zz")
    with pytest.raises(ValueError, match="range"):
        Keypair.from_secret("0" * 64)
