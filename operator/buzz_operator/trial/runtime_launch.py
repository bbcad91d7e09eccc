"""Provisioning and launching (docs/corridor.md#launch): the relay tenant and the per-try Secret, then
the pod, the trust store, prompts, one buzz-acp per seat with the exact env, and readiness.

Both steps are idempotent: provisioning returns the stored tenant and keeps an existing
Secret; launching adopts an existing pod, re-uploads identical prompts and leaves a seat
whose recorded pid is alive alone.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict

from kubernetes_asyncio.client.exceptions import ApiException

from buzz_operator.api import labels as label_keys
from buzz_operator.api.ownership import owner_reference
from buzz_operator.api.stack import StackDigests
from buzz_operator.api.trial import BuzzTrialStatus
from buzz_operator.condition import agent_env, compose_system_prompt, remote_prompt_path, teammates_of
from buzz_operator.condition.paths import BUZZ_ACP, REMOTE_PROMPTS
from buzz_operator.dataset.config import USER_ACTOR
from buzz_operator.kube import objects
from buzz_operator.kube.pods import wait_running
from buzz_operator.relay import tenant
from buzz_operator.relay.tenant_models import (
    DirectoryEntry,
    ProvisioningError,
    TenantHandle,
    TenantRequest,
    TenantSecrets,
)
from buzz_operator.trial.failures import StepFailure
from buzz_operator.trial.podspec import build_trial_pod, forwarder_listen_address
from buzz_operator.trial.runtime_context import TrialContext, secret_data, secrets_from_data
from buzz_operator.trial.runtime_io import record, sh, upload_files
from buzz_operator.trial.runtime_keys import read_api_keys
from buzz_operator.trial.runtime_relay_ca import install_relay_ca
from buzz_operator.trial.runtime_shell import PREPARE, SEED_TRUST_STORE, await_subscribed, launch_seat
from buzz_operator.trial.stack_install import READ_MANIFEST, ManifestError, parse_manifest
from buzz_operator.trial.state import Launched, Provisioned

READY_TIMEOUT_S = 60.0  # docs/corridor.md#readiness readiness_timeout_seconds
READY_ROUND_S = 10.0


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
        reason = "PostgresUnavailable" if "postgres" in str(exc) else "RelayUnavailable"
        raise StepFailure(reason, str(exc)[:300]) from exc
    _TENANTS[key] = provisioned
    while len(_TENANTS) > _TENANTS_KEPT:
        _TENANTS.popitem(last=False)
    return provisioned


async def _clear_earlier_tries(ctx: TrialContext, retry: int) -> None:
    for earlier in range(retry):
        await objects.delete_pod(ctx.kube, ctx.namespace, ctx.pod(earlier), grace_seconds=0)
        await objects.delete_secret(ctx.kube, ctx.namespace, ctx.secret(earlier))


async def provision(ctx: TrialContext, status: BuzzTrialStatus) -> Provisioned:
    retry = status.retries
    await _clear_earlier_tries(ctx, retry)
    handle, secrets = await tenant_of(ctx, retry)
    name = ctx.secret(retry)
    body = objects.secret_body(
        name, secret_data(secrets),  # seat keys only: API keys stay in the user's Secret (runtime_keys.py)
        labels={label_keys.TRIAL: ctx.name, label_keys.RETRY: str(retry),
                label_keys.MANAGED_BY: label_keys.MANAGER},
        owner=owner_reference("BuzzTrial", ctx.name, ctx.uid),
    )
    try:
        await objects.create_secret(ctx.kube, ctx.namespace, body)
    except ApiException as exc:
        raise StepFailure("ApiServerUnavailable", f"creating Secret {name}: HTTP {exc.status}") from exc
    return Provisioned(trial_id=handle.trial_id, tenant_secret=name, channel_id=handle.channel_id)


async def read_tenant_secrets(ctx: TrialContext, status: BuzzTrialStatus) -> TenantSecrets:
    name = status.tenant_secret or ctx.secret(status.retries)
    try:
        data = await objects.read_secret(ctx.kube, ctx.namespace, name)
    except ApiException as exc:
        raise StepFailure("ApiServerUnavailable", f"reading Secret {name}: HTTP {exc.status}") from exc
    return secrets_from_data(data, [s.seat_id for s in ctx.seats])


async def _forwarder(ctx: TrialContext) -> tuple[str | None, str | None]:
    """(listen, target) of the pod's forwarder for a loopback relay URL; (None, None) when
    agents dial the relay URL directly. The Service is resolved per pod: its ClusterIP is what
    the forwarder dials, and a recreated Service has a new one."""
    if ctx.relay_service is None:
        return None, None
    service = ctx.relay_service
    target = await objects.service_target(ctx.kube, ctx.namespace, service.name, service.port)
    return forwarder_listen_address(ctx.relay.url), target


async def _start_pod(ctx: TrialContext, retry: int) -> str:
    name = ctx.pod(retry)
    listen, target = await _forwarder(ctx)
    pod = build_trial_pod(
        trial_name=ctx.name, trial_uid=ctx.uid, namespace=ctx.namespace, retry=retry, spec=ctx.spec,
        trial_labels=ctx.labels, relay_listen=listen, relay_target=target,
    )
    await objects.create_pod(ctx.kube, ctx.namespace, pod)
    try:
        state = await wait_running(ctx.kube, ctx.namespace, name, timeout_s=ctx.spec.deadlines.schedule_seconds)
    except TimeoutError as exc:
        raise StepFailure("ScheduleTimeout", f"pod {name} not running after "
                                             f"{ctx.spec.deadlines.schedule_seconds}s") from exc
    if not state.ready:
        raise StepFailure(state.reason or "PodLost", state.message[:300])
    return name


async def _upload_prompts(ctx: TrialContext, pod: str, handle: TenantHandle) -> None:
    seats, pubkeys = ctx.seats, {s.seat_id: s.pubkey for s in handle.seats}
    files = {}
    for seat in seats:
        prompt = compose_system_prompt(
            ctx.prompts[seat.class_id], seat_id=seat.seat_id, seat_pubkey=pubkeys[seat.seat_id],
            channel_id=handle.channel_id, user_name=handle.user.name, user_pubkey=handle.user.pubkey,
            teammates=teammates_of(seat.seat_id, seats, pubkeys))
        files[f"{seat.seat_id}.system-prompt.md"] = (prompt, 0o600)
    await upload_files(ctx, pod, REMOTE_PROMPTS, files)


async def _launch_seats(ctx: TrialContext, pod: str, handle: TenantHandle, secrets: TenantSecrets) -> None:
    keys = await read_api_keys(ctx)
    for seat in ctx.seats:
        seat_secret = secrets.seats[seat.seat_id]
        env = agent_env(
            manifest=ctx.manifest, seat=seat, endpoint=ctx.endpoints[seat.endpoint], relay_url=ctx.relay.url,
            secret_key_hex=seat_secret.secret_hex, auth_tag=seat_secret.auth_tag, channel_id=handle.channel_id,
            api_key=ctx.api_key_for(seat, keys), prompt_path=remote_prompt_path(seat.seat_id),
        )
        result = await sh(ctx, pod, launch_seat(seat.seat_id, BUZZ_ACP), env=env)
        if not result.ok or not result.last_line().isdigit():
            raise StepFailure("AgentsNotReady", f"cannot launch {seat.seat_id}: exit {result.exit_code}")


async def wait_ready(ctx: TrialContext, pod: str, channel_id: str) -> None:
    """docs/corridor.md#readiness: every seat's logs say `subscribed to channel <id>` within 60 s."""
    marker = f"subscribed to channel {channel_id}"
    waiting = [s.seat_id for s in ctx.seats]
    try:
        async with asyncio.timeout(READY_TIMEOUT_S):
            while True:
                # the pod waits and checks liveness itself; each exec is bounded so a lost
                # stream costs at most one round
                line = (await sh(ctx, pod, await_subscribed(waiting, marker, READY_ROUND_S))).last_line()
                if line == "ready":
                    return
                if line.startswith("dead "):
                    raise StepFailure("AgentsExitedEarly", f"agent processes exited early: {line.split()[1:]}")
                if line.startswith("waiting "):
                    waiting = line.split()[1:]
    except TimeoutError as exc:
        raise StepFailure("AgentsNotReady", "agents did not subscribe to trial channel before readiness "
                                            f"timeout: {waiting}") from exc


async def installed_stack(ctx: TrialContext, pod: str) -> StackDigests:
    """The digests the pod's stack init container wrote: what this try's agents will run,
    whatever the image's tag points to by now (trial/stack_install.py)."""
    listed = await sh(ctx, pod, READ_MANIFEST)
    if not listed.ok:
        raise StepFailure("StackInstallFailed", f"reading the stack's digests: exit {listed.exit_code}")
    try:
        return parse_manifest(listed.text())
    except ManifestError as exc:
        raise StepFailure("StackInstallFailed", str(exc)[:300]) from exc


async def launch(ctx: TrialContext, status: BuzzTrialStatus) -> Launched:
    retry = status.retries
    pod = await _start_pod(ctx, retry)
    stack = await installed_stack(ctx, pod)
    handle, _ = await tenant_of(ctx, retry)
    secrets = await read_tenant_secrets(ctx, status)
    prepared = await sh(ctx, pod, PREPARE)
    if not prepared.ok:
        raise StepFailure("StackInstallFailed", f"preparing the pod's directories: exit {prepared.exit_code}")
    trust_store = (await sh(ctx, pod, SEED_TRUST_STORE)).last_line() or "failed"
    await record(ctx, pod, {"container_trust_store": trust_store})
    if ctx.relay.ca_pem is not None:  # after seeding: the task's own trust store stays the seed's
        await install_relay_ca(ctx, pod, ctx.relay.ca_pem)
    await _upload_prompts(ctx, pod, handle)
    await _launch_seats(ctx, pod, handle, secrets)
    await wait_ready(ctx, pod, handle.channel_id)
    return Launched(pod=pod, stack=stack)
