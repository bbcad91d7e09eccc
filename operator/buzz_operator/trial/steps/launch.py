"""Launching (docs/corridor.md#launch): the pod, the trust store, prompts, one buzz-acp per seat
with the exact env, and readiness.

Idempotent: launching adopts an existing pod, re-uploads identical prompts and leaves a seat
whose recorded pid is alive alone.
"""

from __future__ import annotations

import asyncio

from buzz_operator.api.stack import StackDigests
from buzz_operator.api.trial import BuzzTrialStatus
from buzz_operator.condition import agent_env, compose_system_prompt, remote_prompt_path, teammates_of
from buzz_operator.condition.paths import BUZZ_ACP, REMOTE_PROMPTS
from buzz_operator.kube import objects
from buzz_operator.kube.pods import trial_status_reporter, wait_running
from buzz_operator.relay.tenant_models import TenantHandle, TenantSecrets
from buzz_operator.trial import runtime_shell
from buzz_operator.trial.failures import StepFailure
from buzz_operator.trial.podspec import build_trial_pod, forwarder_listen_address
from buzz_operator.trial.runtime_context import TrialContext
from buzz_operator.trial.runtime_io import sh, upload_files
from buzz_operator.trial.runtime_keys import read_api_keys
from buzz_operator.trial.runtime_relay_ca import install_relay_ca
from buzz_operator.trial.runtime_shell import await_subscribed, launch_seat
from buzz_operator.trial.stack_install import READ_MANIFEST
from buzz_operator.trial.state import Launched
from buzz_operator.trial.steps.stack import digests_of
from buzz_operator.trial.steps.tenant import read_tenant_secrets, tenant_of

READY_TIMEOUT_S = 60.0  # docs/corridor.md#readiness readiness_timeout_seconds
READY_ROUND_S = 10.0


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
        # status.waiting says why the pod waits; a pod queued through Kueue may wait queueSeconds
        # for admission first, and past that fails as QueueWaitExceeded (docs/queueing.md)
        state = await wait_running(ctx.kube, ctx.namespace, name, timeout_s=ctx.spec.deadlines.schedule_seconds,
                                   queue_s=ctx.spec.deadlines.queue_wait_s(ctx.spec.queue_name is not None),
                                   report=trial_status_reporter(ctx.kube, ctx.namespace, ctx.name))
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


async def prepare_pod(ctx: TrialContext, pod: str) -> StackDigests:
    """One exec (runtime_shell.prepare_pod): the installed stack's digests, the pod's directories,
    the trust store seeded and recorded — three scripts and a record before (bench/trial.py)."""
    result = await sh(ctx, pod, runtime_shell.prepare_pod(READ_MANIFEST))
    lines = result.text().splitlines()
    last = lines[-1] if lines else ""
    if not result.ok:
        raise StepFailure("StackInstallFailed", f"preparing the pod: exit {result.exit_code}")
    if last.startswith(runtime_shell.MANIFEST_FAILED):
        raise StepFailure("StackInstallFailed", f"reading the stack's digests: exit {last.split()[-1]}")
    if last.startswith(runtime_shell.PREPARE_FAILED):
        raise StepFailure("StackInstallFailed", f"preparing the pod's directories: exit {last.split()[-1]}")
    if not last.startswith(runtime_shell.TRUST_STORE_LINE):
        raise StepFailure("StackInstallFailed", f"preparing the pod: unexpected output {last[:100]!r}")
    return digests_of("\n".join(lines[:-1]) + "\n")


async def launch(ctx: TrialContext, status: BuzzTrialStatus) -> Launched:
    retry = status.retries
    pod = await _start_pod(ctx, retry)
    stack = await prepare_pod(ctx, pod)
    handle, _ = await tenant_of(ctx, retry)
    secrets = await read_tenant_secrets(ctx, status)
    if ctx.relay.ca_pem is not None:  # after seeding: the task's own trust store stays the seed's
        await install_relay_ca(ctx, pod, ctx.relay.ca_pem)
    await _upload_prompts(ctx, pod, handle)
    await _launch_seats(ctx, pod, handle, secrets)
    await wait_ready(ctx, pod, handle.channel_id)
    return Launched(pod=pod, stack=stack)
