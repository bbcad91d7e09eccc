"""Deterministic directory seeding (docs/tenant.md#directory): pubkeys derived from the owner key, profiles published
only for pubkeys the relay has none for, so reruns publish nothing and pubkeys never drift.

Every trial's seats are attested by the same relay owner, so on a shared relay any agent may
publish a kind-0 profile under any name. A directory identity's auth tag therefore carries the
NIP-OA condition `kind=0` (profile only; seats and users get unconditioned tags): only the owner
can sign such a tag, so a profile whose own auth tag says `kind=0` is one the provisioner made.
The development relay refuses other identities' profiles under those names, and the stand-in's
directory lookup trusts them over any look-alike published before them.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from buzz_operator.relay.client import RelayClient
from buzz_operator.relay.identities import stable_keypair
from buzz_operator.relay.nip_oa import compute_auth_tag, event_auth_tag
from buzz_operator.relay.nostr import Keypair, sign_event
from buzz_operator.relay.tenant_models import DirectoryEntry, DirectoryIdentity, ProvisioningError

PROFILE_BATCH = 200  # the CLI's `users get --pubkey` batch size (docs/tenant.md#directory)
KIND_PROFILE = 0
DIRECTORY_CONDITIONS = f"kind={KIND_PROFILE}"


def is_directory_profile(event: Mapping[str, Any]) -> bool:
    """A kind-0 event whose own (first) auth tag grants profiles only: a provisioned directory
    identity. Says nothing about the tag's signature — a relay verified it before storing the
    event (dev/relay/server.py admits nothing else), so readers of stored events may rely on it."""
    tag = event_auth_tag(event)
    return event.get("kind") == KIND_PROFILE and tag is not None and len(tag) == 4 and tag[2] == DIRECTORY_CONDITIONS


def profile_content(name: str, about: str | None) -> str:
    """The kind-0 content of a directory identity, as `buzz users set-profile --name [--about]`."""
    fields = {"name": name} if about is None else {"name": name, "about": about}
    return json.dumps(fields, separators=(",", ":"))


def _same_profile(stored: str, wanted: str) -> bool:
    try:
        return bool(json.loads(stored) == json.loads(wanted))
    except (TypeError, ValueError):
        return False


async def existing_profiles(client: RelayClient, wanted: Mapping[str, str]) -> set[str]:
    """The pubkeys (keys of `wanted`, pubkey → content) whose stored profile is already the
    directory profile wanted. One published before directory tags carried `kind=0`, or with
    another name or `about`, does not count: it is published again (kind 0 is replaceable)."""
    pubkeys = list(wanted)
    found: set[str] = set()
    batches = [pubkeys[i : i + PROFILE_BATCH] for i in range(0, len(pubkeys), PROFILE_BATCH)]
    for batch in batches:
        events = await client.query([{"kinds": [KIND_PROFILE], "authors": batch}])
        found.update(e["pubkey"] for e in events
                     if is_directory_profile(e) and _same_profile(e.get("content"), wanted.get(e["pubkey"], "")))
    return found


# Opens a relay connection authenticated as (keypair, auth tag). Block's relay refuses an event
# whose pubkey is not the connection's authenticated identity ("event pubkey does not match
# authenticated identity"), so a profile is published over its own identity's connection — as the
# seed harness does with `buzz users set-profile` per identity — never over the user's.
OpenAs = Callable[[Keypair, str], RelayClient]
SELF_PUBLISH_CONCURRENCY = 8


async def publish_as_self(open_as: OpenAs, owner_secret_hex: str,
                          profiles: Sequence[tuple[Keypair, str, str]], what: str) -> None:
    """Publish `(keypair, content, conditions)` profiles (content from `profile_content`), each
    signed by and sent as its own identity."""
    gate = asyncio.Semaphore(SELF_PUBLISH_CONCURRENCY)

    async def one(keypair: Keypair, content: str, conditions: str) -> tuple[bool, str]:
        tag = compute_auth_tag(owner_secret_hex, keypair.pubkey_hex, conditions)
        event = sign_event(keypair, KIND_PROFILE, content, [], auth_tag=tag)
        async with gate, open_as(keypair, tag) as client:
            return await client.publish(event)

    results = await asyncio.gather(*(one(*profile) for profile in profiles))
    refused = [msg for ok, msg in results if not ok]
    if refused:
        raise ProvisioningError(f"relay refused {len(refused)} {what}: {refused[0]}")


async def publish_all(client: RelayClient, events: Sequence[dict[str, object]], what: str) -> None:
    results = await asyncio.gather(*(client.publish(e) for e in events))
    refused = [msg for ok, msg in results if not ok]
    if refused:
        raise ProvisioningError(f"relay refused {len(refused)} {what}: {refused[0]}")


async def seed_directory(
    client: RelayClient, owner_secret_hex: str, entries: Sequence[DirectoryEntry], open_as: OpenAs,
) -> tuple[DirectoryIdentity, ...]:
    keypairs = [stable_keypair(owner_secret_hex, entry.stable_id) for entry in entries]
    contents = {kp.pubkey_hex: profile_content(entry.name, entry.about) for kp, entry in zip(keypairs, entries, strict=True)}
    have = await existing_profiles(client, contents)
    missing = [(kp, contents[kp.pubkey_hex], DIRECTORY_CONDITIONS) for kp in keypairs if kp.pubkey_hex not in have]
    await publish_as_self(open_as, owner_secret_hex, missing, "directory profiles")
    return tuple(
        DirectoryIdentity(entry.name, entry.role, kp.pubkey_hex, entry.stable_id, entry.about or "")
        for kp, entry in zip(keypairs, entries, strict=True)
    )
