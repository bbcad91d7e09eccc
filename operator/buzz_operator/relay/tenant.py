"""Per-trial relay tenant (docs/tenant.md): seats with keys and NIP-OA tags, the trial user, a private
stream channel with every seat as member, profiles, the deterministic directory; archive on
teardown; healthcheck. Idempotent and concurrency-safe under the advisory lock (docs/tenant.md#provisioning).

Improvement on the seed (docs/tenant.md#handle): the stored handle is public data only. Seat and user secrets are
derived from the owner key (identities.py), so a second `provision()` — after a crash, or from a
restarted operator — returns the same handle *and* the same secrets without any secret at rest.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from urllib.parse import urlsplit

import asyncpg

from buzz_operator.relay.benchmark_schema import apply_benchmark_schema
from buzz_operator.relay.client import RelayClient, RelayError
from buzz_operator.relay.directory import profile_content, publish_all, publish_as_self, seed_directory
from buzz_operator.relay.identities import seat_keypair, stable_keypair, trial_channel_id, trial_lock_key
from buzz_operator.relay.nip_oa import compute_auth_tag
from buzz_operator.relay.nostr import Keypair
from buzz_operator.relay.tenant_models import (
    ProvisioningError,
    RelayTarget,
    SeatIdentity,
    SeatSecret,
    TenantHandle,
    TenantRequest,
    TenantSecrets,
    UserIdentity,
)
from buzz_operator.relay.tls import describe_tls_failure

KIND_CREATE_CHANNEL = 9007
KIND_ADD_MEMBER = 9000
KIND_EDIT_METADATA = 9002
KIND_CHANNEL_METADATA = 39000
USER_SEAT = "user"


def channel_name(req: TenantRequest) -> str:
    """docs/tenant.md#channel: `<label>-<trial_id[:8]>` or `trial-<trial[:8]>-<hash[:8]>`."""
    if req.channel_label:
        return f"{req.channel_label}-{req.trial_id[:8]}"
    return f"trial-{req.trial_id[:8]}-{req.manifest_sha256[:8]}"


def _user_keypair(owner_secret_hex: str, run_id: str, trial_id: str, identity_id: str) -> Keypair:
    if identity_id.startswith("task-user:"):
        return stable_keypair(owner_secret_hex, identity_id)
    return seat_keypair(owner_secret_hex, run_id, trial_id, USER_SEAT)


def actor_secrets(owner_secret_hex: str, identity_ids: Iterable[str]) -> dict[str, SeatSecret]:
    """The scripted actors' keys: their directory identity's stable key, with an auth tag free of
    the directory's `kind=0` condition so they can post messages (Block's harness signs fixture
    events with the directory credential). Derived where they are used, never stored."""
    out: dict[str, SeatSecret] = {}
    for identity_id in identity_ids:
        kp = stable_keypair(owner_secret_hex, identity_id)
        out[identity_id] = SeatSecret(kp.secret_hex, compute_auth_tag(owner_secret_hex, kp.pubkey_hex))
    return out


def derive_secrets(owner_secret_hex: str, handle: TenantHandle) -> TenantSecrets:
    """Recompute every secret of a provisioned tenant from the owner key and its public handle."""
    seats: dict[str, SeatSecret] = {}
    for seat in handle.seats:
        kp = seat_keypair(owner_secret_hex, handle.run_id, handle.trial_id, seat.seat_id)
        seats[seat.seat_id] = SeatSecret(kp.secret_hex, compute_auth_tag(owner_secret_hex, kp.pubkey_hex))
    user = _user_keypair(owner_secret_hex, handle.run_id, handle.trial_id, handle.user.identity_id)
    return TenantSecrets(seats, user.secret_hex, compute_auth_tag(owner_secret_hex, user.pubkey_hex),
                         actor_secrets(owner_secret_hex, handle.scripted_actors))


def client_as(target: RelayTarget, secret_hex: str, auth_tag: str) -> RelayClient:
    return RelayClient(target.dial_url, Keypair.from_secret(secret_hex), auth_tag, host=target.authority,
                       tls=target.tls, server_name=target.server_name)


def _plan(target: RelayTarget, req: TenantRequest) -> tuple[TenantHandle, TenantSecrets]:
    """Everything but the directory is decided before touching the relay (pure and repeatable)."""
    owner = target.owner_secret_hex
    seats = tuple(
        SeatIdentity(s.seat_id, s.kind, s.role,
                     seat_keypair(owner, req.run_id, req.trial_id, s.seat_id).pubkey_hex, s.endpoint)
        for s in req.seats
    )
    if req.user_display_name:
        user = UserIdentity(req.user_display_name, "", f"task-user:{req.task_name}")
    else:
        user = UserIdentity(USER_SEAT, "", f"seat:{USER_SEAT}")
    user_kp = _user_keypair(owner, req.run_id, req.trial_id, user.identity_id)
    user = UserIdentity(user.name, user_kp.pubkey_hex, user.identity_id)
    owner_pk = Keypair.from_secret(owner).pubkey_hex
    handle = TenantHandle(
        run_id=req.run_id,
        trial_id=req.trial_id,
        manifest_sha256=req.manifest_sha256,
        channel_id=trial_channel_id(owner_pk, req.run_id, req.trial_id),
        channel_name=channel_name(req),
        relay_url=target.url,
        seats=seats,
        user=user,
        task_name=req.task_name or "",
        scripted_actors=tuple(req.scripted_actors),
    )
    return handle, derive_secrets(owner, handle)


async def _channel_exists(client: RelayClient, channel_id: str) -> bool:
    return bool(await client.query([{"kinds": [KIND_CHANNEL_METADATA], "#d": [channel_id]}]))


async def _provision_on_relay(
    target: RelayTarget, req: TenantRequest, handle: TenantHandle, secrets: TenantSecrets
) -> TenantHandle:
    async with client_as(target, secrets.user_secret_hex, secrets.user_auth_tag) as user:
        description = f"run={req.run_id} trial={req.trial_id} manifest={req.manifest_sha256}"
        create = user.sign(KIND_CREATE_CHANNEL, "", [
            ["h", handle.channel_id], ["name", handle.channel_name], ["visibility", "private"],
            ["channel_type", "stream"], ["about", description],
        ])
        ok, message = await user.publish(create)
        # a provisioning retried after a crash finds its own channel already there
        if not ok and not ("already exists" in message and await _channel_exists(user, handle.channel_id)):
            raise ProvisioningError(f"relay refused to create channel {handle.channel_name}: {message}")
        await publish_all(user, [
            user.sign(KIND_ADD_MEMBER, "", [["h", handle.channel_id], ["p", seat.pubkey], ["role", "member"]])
            for seat in handle.seats
        ], "member additions")
        def open_as(keypair: Keypair, auth_tag: str) -> RelayClient:
            return client_as(target, keypair.secret_hex, auth_tag)

        profiles = [(Keypair.from_secret(secrets.user_secret_hex), profile_content(handle.user.name, None), "")]
        profiles += [(Keypair.from_secret(secrets.seats[s.seat_id].secret_hex), profile_content(s.seat_id, None), "")
                     for s in handle.seats]
        await publish_as_self(open_as, target.owner_secret_hex, profiles, "profiles")
        directory = await seed_directory(user, target.owner_secret_hex, req.directory, open_as)
        members = [(identity, entry) for identity, entry in zip(directory, req.directory, strict=True)
                   if entry.channel_member]
        # Block's provisioner adds them with role "bot" or "member", as a human would invite them
        await publish_all(user, [
            user.sign(KIND_ADD_MEMBER, "", [["h", handle.channel_id], ["p", identity.pubkey],
                                            ["role", "bot" if identity.role == "bot" else "member"]])
            for identity, _ in members
        ], "directory member additions")
    return TenantHandle(**{**handle.__dict__, "directory": directory})


async def provision(target: RelayTarget, req: TenantRequest) -> tuple[TenantHandle, TenantSecrets]:
    """Create (or return the already created) tenant of one trial."""
    req.validate()
    handle, secrets = _plan(target, req)
    try:
        conn = await asyncpg.connect(target.pg_dsn, timeout=10)
    except (OSError, asyncpg.PostgresError, TimeoutError) as exc:
        raise ProvisioningError(f"cannot connect to postgres: {type(exc).__name__}") from exc
    try:
        await apply_benchmark_schema(conn)
        async with conn.transaction():
            await conn.execute("SELECT pg_advisory_xact_lock($1)", trial_lock_key(req.run_id, req.trial_id))
            row = await conn.fetchrow(
                "SELECT manifest_hash, handle FROM benchmark.trial_manifest WHERE run_id = $1 AND trial_id = $2",
                req.run_id, req.trial_id,
            )
            if row is not None:
                if row["manifest_hash"] != req.manifest_sha256:
                    raise ProvisioningError(
                        f"trial ({req.run_id}, {req.trial_id}) already provisioned with manifest {row['manifest_hash']}"
                    )
                stored = TenantHandle.from_json(row["handle"])
                return stored, derive_secrets(target.owner_secret_hex, stored)
            try:
                handle = await _provision_on_relay(target, req, handle, secrets)
            except (OSError, RelayError, TimeoutError) as exc:
                raise ProvisioningError(f"relay unreachable or refused auth: {exc}") from exc
            await conn.execute(
                "INSERT INTO benchmark.trial_manifest (run_id, trial_id, manifest_hash, channel_id, handle) "
                "VALUES ($1, $2, $3, $4::uuid, $5::jsonb)",
                req.run_id, req.trial_id, req.manifest_sha256, handle.channel_id, handle.to_json(),
            )
        return handle, secrets
    finally:
        await conn.close()


async def teardown(target: RelayTarget, handle: TenantHandle, secrets: TenantSecrets) -> None:
    """Archive as the orchestrator (docs/tenant.md#teardown, the seed's credentials[0]); never delete events."""
    orchestrator = secrets.seats[handle.orchestrator.seat_id]
    try:
        async with client_as(target, orchestrator.secret_hex, orchestrator.auth_tag) as client:
            ok, message = await client.publish(
                client.sign(KIND_EDIT_METADATA, "", [["h", handle.channel_id], ["archived", "true"]])
            )
    except (OSError, RelayError, TimeoutError) as exc:
        raise ProvisioningError(f"relay unreachable during teardown: {exc}") from exc
    if not ok and "archived" not in message:
        raise ProvisioningError(f"relay refused to archive channel {handle.channel_id}: {message}")
    conn = await asyncpg.connect(target.pg_dsn, timeout=10)
    try:
        await conn.execute(
            "UPDATE benchmark.trial_manifest SET archived_at = COALESCE(archived_at, now()) "
            "WHERE run_id = $1 AND trial_id = $2",
            handle.run_id, handle.trial_id,
        )
    finally:
        await conn.close()


async def _http_status(target: RelayTarget, path: str) -> int:
    """GET `path` at `target.dial_url` presenting the canonical Host: plain HTTP for ws://, HTTPS
    (the certificate checked for the canonical host, against `target.tls`) for wss://."""
    parts = urlsplit(target.dial_url)
    tls = target.tls
    port = parts.port or (443 if tls is not None else 80)
    reader, writer = await asyncio.open_connection(parts.hostname, port)
    try:
        if tls is not None:
            # TLS after the TCP connect, so a failure here is told apart from an unreachable relay:
            # a server that speaks no TLS may just reset the connection on a ClientHello
            try:
                await writer.start_tls(tls, server_hostname=target.server_name)
            except (OSError, EOFError) as exc:
                raise ProvisioningError(describe_tls_failure(exc, target.authority,
                                                             has_ca_bundle=target.ca_pem is not None)) from exc
        writer.write(f"GET {path} HTTP/1.1\r\nHost: {target.authority}\r\nConnection: close\r\n\r\n".encode())
        await writer.drain()
        status_line = await reader.readline()
    finally:
        writer.close()
    fields = status_line.decode("latin-1").split()
    if len(fields) < 2 or not fields[1].isdigit():
        raise ProvisioningError(f"relay readiness returned a malformed status line: {status_line[:80]!r}")
    return int(fields[1])


# What a Postgres that is down, unreachable or refusing the DSN raises (InterfaceError/ValueError:
# asyncpg refusing the DSN itself, before dialling). Name only the type in a message: the DSN
# and so the error's text can hold a password.
POSTGRES_ERRORS = (OSError, asyncpg.PostgresError, asyncpg.InterfaceError, ValueError, TimeoutError)


async def postgres_select_one(dsn: str) -> None:
    """Postgres answers `SELECT 1` on a fresh connection within 5 s, or one of POSTGRES_ERRORS is
    raised; the relay's readiness (healthcheck) and preflight's postgres check both ask this."""
    conn = await asyncpg.connect(dsn, timeout=5)
    try:
        await conn.fetchval("SELECT 1")
    finally:
        await conn.close()


async def healthcheck(target: RelayTarget) -> None:
    """docs/tenant.md#teardown: `/_readiness` must answer 200 within 5 s, and Postgres must answer `SELECT 1`."""
    try:
        async with asyncio.timeout(5.0):
            status = await _http_status(target, "/_readiness")
    except (OSError, TimeoutError) as exc:
        raise ProvisioningError(f"relay readiness unreachable: {type(exc).__name__}: {exc}") from exc
    if status != 200:
        raise ProvisioningError(f"relay readiness returned HTTP {status}")
    try:
        await postgres_select_one(target.pg_dsn)
    except POSTGRES_ERRORS as exc:
        raise ProvisioningError(f"postgres healthcheck failed: {type(exc).__name__}") from exc


async def await_healthy(target: RelayTarget, *, timeout_s: float, poll_s: float = 0.5) -> None:
    """`healthcheck` until it passes; after `timeout_s` its last ProvisioningError is raised. For a
    relay that was just started — kube-proxy programs a ClusterIP a moment after the Endpoints
    appear, and a relay process needs a moment to bind."""
    deadline = asyncio.get_running_loop().time() + timeout_s
    while True:
        try:
            await healthcheck(target)
            return
        except ProvisioningError:
            if asyncio.get_running_loop().time() >= deadline:
                raise
            await asyncio.sleep(poll_s)
