"""One trial's agent tries to poison another trial's directory on the shared dev relay.

Every trial's seats are attested by the same relay owner, so before directory profiles carried
their profile-only grant (`kind=0`) any agent could publish a kind-0 profile named
`benchmark-user-07` and the next trial's orchestrator would invite the look-alike. Here the
poisoner is a real provisioned seat of trial A, publishing through the real relay:

- before trial B is provisioned it claims B's directory names with a `created_at` ten minutes
  ahead (the relay allows 15 minutes of skew), so a newest-wins lookup would pick it: the relay
  cannot refuse those yet (nobody holds the names), so the stand-in's lookup must prefer the
  provisioned profiles;
- once B's directory is provisioned it publishes the names again, under `name` and, spelled
  differently, under `display_name`: the relay refuses each with `restricted:`.

B's oracle then creates the channel and invites by name; its real verifier grades the channel's
members against B's provisioned directory and must give full reward."""

from __future__ import annotations

import json
import secrets
import time
from pathlib import Path

import pytest
from buzz_operator.condition import ExperimentManifest, plan_seats
from buzz_operator.relay.client import RelayClient
from buzz_operator.relay.identities import stable_keypair
from buzz_operator.relay.nostr import Keypair
from buzz_operator.relay.tenant import provision
from buzz_operator.relay.tenant_models import TenantRequest

pytestmark = pytest.mark.timeout(180)

INVITED = ["benchmark-user-07", "benchmark-user-19", "benchmark-user-42", "benchmark-bot-03", "benchmark-bot-08"]
AHEAD_S = 600
MANIFESTS = Path(__file__).resolve().parents[3] / "manifests"


async def _poisoner(stage) -> RelayClient:  # type: ignore[no-untyped-def]
    """Trial A's orchestrator: a seat the same owner attested, with its own key and auth tag."""
    manifest = ExperimentManifest.load(MANIFESTS / "standin-oracle.yaml")
    request = TenantRequest(run_id=f"run-{secrets.token_hex(4)}", trial_id=f"trial-{secrets.token_hex(8)}",
                            manifest_sha256=manifest.sha256, seats=plan_seats(manifest), channel_label="poison",
                            task_name="user-mention", user_display_name=None, directory=())
    _, tenant_secrets = await provision(stage.target, request)
    seat = next(iter(tenant_secrets.seats.values()))
    return RelayClient(stage.target.dial_url, Keypair.from_secret(seat.secret_hex), seat.auth_tag,
                       host=stage.target.authority)


async def test_a_trials_agent_cannot_poison_another_trials_directory(trial, stage) -> None:  # type: ignore[no-untyped-def]
    poisoner = await _poisoner(stage)
    refused: list[str] = []
    async with poisoner:
        ahead = int(time.time()) + AHEAD_S
        for name in INVITED:
            ok, message = await poisoner.publish(poisoner.sign(0, json.dumps({"name": name}), [], created_at=ahead))
            assert ok, f"a name nobody holds yet is the poisoner's to take: {message}"
            ahead += 1  # one replaceable profile per author: each claim newer than the last

        async def poison_again(user, handle, tenant_secrets) -> None:  # type: ignore[no-untyped-def]
            later = int(time.time()) + AHEAD_S + len(INVITED) + 1
            for index, name in enumerate(INVITED):
                content = {"name": name} if index % 2 else {"display_name": f" {name.upper()} "}
                ok, message = await poisoner.publish(poisoner.sign(0, json.dumps(content), [],
                                                                   created_at=later + index))
                if not ok:
                    refused.append(message)

        outcome = await trial(policy="oracle", task_name="create-channel-invite-users", before_task=poison_again)
    assert refused and len(refused) == len(INVITED), refused
    assert all(m.startswith("restricted:") and "provisioned for another identity" in m for m in refused), refused
    assert outcome.reward["reward"] == 1.0, outcome.reward
    owner = stage.target.owner_secret_hex
    [channel] = outcome.evidence["observed_channels"]
    members = {m["pubkey"] for m in channel["members"]}
    assert {stable_keypair(owner, name).pubkey_hex for name in INVITED} <= members
    assert poisoner.keypair.pubkey_hex not in members
