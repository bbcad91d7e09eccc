"""The try's relay tenant, for every step that needs it (docs/tenant.md): what provisioning is
asked for, the tenant itself (created once, then kept), the seat keys read back from the try's
Secret, and archiving at teardown — with one mapping of a relay or Postgres error to the
failure the corridor records.

Not a step: provision, run, collect, bundle and teardown all come here, so no step imports
another for its tenant.
"""

from __future__ import annotations

from collections import OrderedDict

from kubernetes_asyncio.client.exceptions import ApiException

from buzz_operator.api.trial import BuzzTrialStatus
from buzz_operator.dataset.config import USER_ACTOR
from buzz_operator.relay import tenant
from buzz_operator.relay.tenant_models import (
    DirectoryEntry,
    ProvisioningError,
    TenantHandle,
    TenantRequest,
    TenantSecrets,
)
from buzz_operator.scoring.failures import StepFailure
from buzz_operator.trial.drive.context import TrialContext, secrets_from_data


def tenant_request(ctx: TrialContext, retry: int) -> TenantRequest:
    buzz = ctx.task.buzz
    return TenantRequest(
        run_id=ctx.run_id, trial_id=ctx.trial_id(retry), manifest_sha256=ctx.manifest.sha256,
        seats=ctx.seats, channel_label=ctx.task.name, task_name=ctx.task.name,
        user_display_name=buzz.user_display_name,
        directory=[DirectoryEntry(e.name, e.role, e.identity_id, e.about, e.channel_member) for e in buzz.directory],
        scripted_actors=scripted_actors(ctx),
    )


def scripted_actors(ctx: TrialContext) -> list[str]:
    """The directory identities that sign the task's scripted messages."""
    return sorted({m.actor for m in ctx.task.buzz.scripted_messages if m.actor != USER_ACTOR})


def provisioning_failure(exc: ProvisioningError) -> StepFailure:
    """The one reading of a tenant error: its Postgres down, or else the relay."""
    reason = "PostgresUnavailable" if "postgres" in str(exc) else "RelayUnavailable"
    return StepFailure(reason, str(exc)[:300])


# Every step of a try asks for its tenant; once provisioned it never changes, so later steps
# reuse it instead of a Postgres connect + lock + lookup each (bench/trial.py: six per trial,
# ~0.2 s). Keyed by everything provisioning is keyed by; bounded, and lost on restart, when
# the stored tenant is read again.
_TENANTS: OrderedDict[tuple[str, ...], tuple[TenantHandle, TenantSecrets]] = OrderedDict()
_TENANTS_KEPT = 256


async def tenant_of(ctx: TrialContext, retry: int) -> tuple[TenantHandle, TenantSecrets]:
    """The try's tenant: created on first call, the stored one on every later call."""
    request = tenant_request(ctx, retry)
    key = (ctx.relay.url, ctx.relay.pg_dsn, ctx.relay.owner_secret_hex, request.run_id, request.trial_id,
           request.manifest_sha256)
    if (kept := _TENANTS.get(key)) is not None:
        _TENANTS.move_to_end(key)
        return kept
    try:
        provisioned = await tenant.provision(ctx.relay, request)
    except ProvisioningError as exc:
        raise provisioning_failure(exc) from exc
    _TENANTS[key] = provisioned
    while len(_TENANTS) > _TENANTS_KEPT:
        _TENANTS.popitem(last=False)
    return provisioned


async def read_tenant_secrets(ctx: TrialContext, status: BuzzTrialStatus) -> TenantSecrets:
    """The try's seat keys from its Kubernetes Secret (written by provisioning), read once a drive."""
    name = status.tenant_secret or ctx.secret(status.retries)
    try:
        data = await ctx.secret_reads(ctx.kube, ctx.namespace, name)
    except ApiException as exc:
        raise StepFailure("ApiServerUnavailable", f"reading Secret {name}: HTTP {exc.status}") from exc
    return secrets_from_data(data, [s.seat_id for s in ctx.seats])


async def archive(ctx: TrialContext, retry: int) -> None:
    """The try's channel archived (its events are never deleted)."""
    handle, secrets = await tenant_of(ctx, retry)
    try:
        await tenant.teardown(ctx.relay, handle, secrets)
    except ProvisioningError as exc:
        raise provisioning_failure(exc) from exc
