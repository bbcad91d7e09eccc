"""Tenant request validation (errors name the field), handle JSON round trip, secret strings."""

from __future__ import annotations

import json

import pytest
from buzz_operator.condition.seats import Seat
from buzz_operator.relay.nip_oa import compute_auth_tag
from buzz_operator.relay.nostr import Keypair, encode_nsec
from buzz_operator.relay.tenant import channel_name, derive_secrets
from buzz_operator.relay.tenant_models import (
    DirectoryEntry,
    ProvisioningError,
    RelayTarget,
    SeatIdentity,
    SeatSecret,
    TenantHandle,
    TenantRequest,
    TenantSecrets,
    UserIdentity,
)

LEAD = Seat("lead-1", "lead", "orchestrator", "lead", "ep", "rev", "buzz-agent", True, 1)
WORKER = Seat("worker-1", "worker", "worker", "w", "ep", "rev", "buzz-agent", True, 1)


def _req(**kw: object) -> TenantRequest:
    base: dict[str, object] = {"run_id": "r", "trial_id": "0123456789abcdef", "manifest_sha256": "a" * 64,
                               "seats": [LEAD, WORKER]}
    base.update(kw)
    return TenantRequest(**base)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("kw", "field"),
    [
        ({"run_id": ""}, "run_id"),
        ({"trial_id": "a\0b"}, "trial_id"),
        ({"manifest_sha256": "A" * 64}, "manifest_sha256"),
        ({"seats": []}, "seats"),
        ({"seats": [WORKER, LEAD]}, "seats"),
        ({"seats": [LEAD, LEAD]}, "seats"),
        ({"user_display_name": "John Vincent Doe"}, "task_name"),
        ({"directory": [DirectoryEntry("x", "user"), DirectoryEntry("x", "bot")]}, "directory"),
    ],
)
def test_validation_names_the_field(kw: dict[str, object], field: str) -> None:
    with pytest.raises(ProvisioningError, match=f"^{field}:"):
        _req(**kw).validate()


def test_channel_names_follow_the_seed() -> None:
    assert channel_name(_req(channel_label="reply-to-thread")) == "reply-to-thread-01234567"
    assert channel_name(_req()) == "trial-01234567-aaaaaaaa"


def test_handle_round_trips_and_holds_no_secret() -> None:
    handle = TenantHandle("r", "t", "a" * 64, "c", "n", "ws://localhost:3600",
                          (SeatIdentity("lead-1", "orchestrator", "lead", "b" * 64, "ep"),),
                          UserIdentity("user", "c" * 64, "seat:user"), task_name="x")
    assert TenantHandle.from_json(handle.to_json()) == handle
    with pytest.raises(ProvisioningError, match="malformed"):
        TenantHandle.from_dict({"run_id": "r"})
    secrets = derive_secrets("0f" * 32, handle)
    assert not any(s in handle.to_json() for s in secrets.secret_strings())


def test_secret_strings_and_reprs() -> None:
    owner, kp = Keypair.generate(), Keypair.generate()
    tag = compute_auth_tag(owner.secret_hex, kp.pubkey_hex)
    secrets = TenantSecrets({"lead-1": SeatSecret(kp.secret_hex, tag)}, kp.secret_hex, tag)
    strings = secrets.secret_strings()
    assert kp.secret_hex in strings and encode_nsec(kp.secret_hex) in strings and tag in strings
    assert json.loads(tag)[3] not in strings  # the tag signature is public by protocol (docs/relay-protocol.md#auth)
    assert kp.secret_hex not in repr(secrets)
    target = RelayTarget("ws://localhost:3600", owner.secret_hex, "postgresql://u:pw@h/db")
    assert owner.secret_hex not in repr(target) and "pw" not in repr(target)
    assert target.authority == "localhost:3600" and target.dial_url == "ws://localhost:3600"
