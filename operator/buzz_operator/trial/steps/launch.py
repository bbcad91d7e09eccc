"""Launching (docs/corridor.md#launch): the pod, the trust store, prompts, one buzz-acp per seat
with the exact env, and readiness — all but the pod's start and late readiness rounds in one
exec (pod/launch_script.py).

Idempotent: launching adopts an existing pod, re-uploads identical prompts and leaves a seat
whose recorded pid is alive alone.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from typing import Any

from kubernetes_asyncio.client.exceptions import ApiException

from buzz_operator.api.stack import StackDigests
from buzz_operator.api.trial import BuzzTrialStatus, PodStart
from buzz_operator.condition import agent_env, compose_system_prompt, remote_prompt_path, teammates_of
from buzz_operator.condition.paths import BUZZ_ACP, REMOTE_ROOT
from buzz_operator.kube import objects, tar
from buzz_operator.kube.client import Kube
from buzz_operator.kube.exec import env_prelude
from buzz_operator.kube.kueue import pod_events
from buzz_operator.kube.pods import wait_running
from buzz_operator.pod import launch_script
from buzz_operator.pod.pull_events import pulls
from buzz_operator.pod.relay_ca import RELAY_CA_NAME
from buzz_operator.pod.shell import await_subscribed
from buzz_operator.pod.stack_install import read_manifest_command
from buzz_operator.pod.trial_pod import build_trial_pod, forwarder_listen_address
from buzz_operator.pod.warm_pod import claim_patch, claimable, is_warm
from buzz_operator.relay.tenant_models import TenantHandle, TenantSecrets
from buzz_operator.scoring.failures import StepFailure
from buzz_operator.trial.drive.context import Redacted, TrialContext
from buzz_operator.trial.drive.model_keys import read_api_keys
from buzz_operator.trial.drive.pod_exec import sh
from buzz_operator.trial.drive.waiting import trial_status_reporter
from buzz_operator.trial.healthcheck import await_healthy
from buzz_operator.trial.state import Launched
from buzz_operator.trial.steps.stack import digests_of
from buzz_operator.trial.steps.tenant import read_tenant_secrets, tenant_of

NOT_FOUND = 404
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


async def create_or_claim(kube: Kube, namespace: str, pod: dict[str, Any], trial_name: str, trial_uid: str) -> bool:
    """The try's pod created, or the sweep's warm pod of that name claimed (docs/warm-pods.md#claim);
    whether it was warm. A warm pod that is not the pod this trial would make (a stale spec) or
    is on its way out is deleted and a cold one made in its place."""
    name = pod["metadata"]["name"]
    for _ in range(3):  # a warm pod deleted by its sweep between two calls: made afresh
        try:
            found = await objects.create_pod(kube, namespace, pod)
            if not is_warm(found):
                return False  # made now, or this trial's own from before a restart
            if claimable(found, pod):
                await objects.patch_pod(kube, namespace, name, claim_patch(trial_name, trial_uid))
                return True
            await objects.delete_pod(kube, namespace, name, grace_seconds=0)
            await objects.wait_pod_gone(kube, namespace, name, timeout_s=60)
        except ApiException as error:
            if error.status != NOT_FOUND:
                raise
    return False


async def _pod_start(ctx: TrialContext, name: str, warm: bool, seconds: float) -> PodStart:
    """How the pod came to run, with the kubelet's pulls from its Events (unset when unreadable)."""
    events = await pod_events(ctx.kube, ctx.namespace, name)
    found = pulls(events) if events else None
    return PodStart(warm=warm, seconds=round(seconds, 3), pull_seconds=found.seconds if found else None,
                    pulled=found.pulled if found else 0, present=found.present if found else 0)


async def _start_pod(ctx: TrialContext, retry: int) -> tuple[str, PodStart]:
    name = ctx.pod(retry)
    listen, target = await _forwarder(ctx)
    pod = build_trial_pod(
        trial_name=ctx.name, trial_uid=ctx.uid, namespace=ctx.namespace, retry=retry, spec=ctx.spec,
        trial_labels=ctx.labels, relay_listen=listen, relay_target=target,
    )
    began = time.monotonic()
    warm = await create_or_claim(ctx.kube, ctx.namespace, pod, ctx.name, ctx.uid)
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
    return name, await _pod_start(ctx, name, warm, time.monotonic() - began)


def _files(ctx: TrialContext, handle: TenantHandle) -> dict[str, tuple[bytes, int]]:
    """What the launch exec unpacks into REMOTE_ROOT: every seat's composed prompt, and the
    relay's private CA when spec.relay.caBundle names one (pod/relay_ca.py)."""
    seats, pubkeys = ctx.seats, {s.seat_id: s.pubkey for s in handle.seats}
    files = {}
    for seat in seats:
        prompt = compose_system_prompt(
            ctx.prompts[seat.class_id], seat_id=seat.seat_id, seat_pubkey=pubkeys[seat.seat_id],
            channel_id=handle.channel_id, user_name=handle.user.name, user_pubkey=handle.user.pubkey,
            teammates=teammates_of(seat.seat_id, seats, pubkeys))
        files[_under_root(remote_prompt_path(seat.seat_id))] = (prompt, 0o600)
    if ctx.relay.ca_pem is not None:
        files[RELAY_CA_NAME] = (ctx.relay.ca_pem.encode(), 0o644)
    return files


def _under_root(path: str) -> str:
    return path.removeprefix(f"{REMOTE_ROOT}/")


def _seat_envs(ctx: TrialContext, handle: TenantHandle, secrets: TenantSecrets, keys: Redacted) -> list[bytes]:
    """Each seat's exact environment (docs/corridor.md#agent-environment) as the export lines its
    subshell evals; in memory only, on the exec's stdin."""
    envs = []
    for seat in ctx.seats:
        seat_secret = secrets.seats[seat.seat_id]
        envs.append(env_prelude(agent_env(
            manifest=ctx.manifest, seat=seat, endpoint=ctx.endpoints[seat.endpoint], relay_url=ctx.relay.url,
            secret_key_hex=seat_secret.secret_hex, auth_tag=seat_secret.auth_tag, channel_id=handle.channel_id,
            api_key=ctx.api_key_for(seat, keys), prompt_path=remote_prompt_path(seat.seat_id),
        )))
    return envs


def _judge(line: str, waiting: list[str]) -> list[str]:
    """The seats still waiting after await_subscribed's `line`; raises when one died."""
    if line == "ready":
        return []
    if line.startswith("dead "):
        raise StepFailure("AgentsExitedEarly", f"agent processes exited early: {line.split()[1:]}")
    if line.startswith("waiting "):
        return line.split()[1:]
    return waiting


async def _start_and_launch(ctx: TrialContext, pod: str, handle: TenantHandle, secrets: TenantSecrets,
                            keys: Redacted) -> StackDigests:
    """The launch exec (pod/launch_script.py), then readiness rounds until every seat's logs
    say `subscribed to channel <id>`: within 60 s of the exec's start (docs/corridor.md#readiness)."""
    marker = f"subscribed to channel {handle.channel_id}"
    waiting = [s.seat_id for s in ctx.seats]
    archive, envs = tar.pack(_files(ctx, handle)), _seat_envs(ctx, handle, secrets, keys)
    relay_ca = ctx.relay.ca_pem is not None
    text = launch_script.script(
        read_manifest=read_manifest_command(ctx.spec.stack_source), files_bytes=len(archive), relay_ca=relay_ca, marker=marker,
        seats=[(seat_id, len(env)) for seat_id, env in zip(waiting, envs, strict=True)], ready_round_s=READY_ROUND_S,
        agent_user=ctx.task.config.agent.user)
    try:
        async with asyncio.timeout(READY_TIMEOUT_S):
            result = await sh(ctx, pod, text, env={launch_script.SEAT_COMMAND_VAR: BUZZ_ACP},
                              stdin=archive + b"".join(envs))
            outcome = launch_script.parse(result.text(), result.exit_code, waiting, relay_ca=relay_ca)
            stack = digests_of(outcome.manifest)
            waiting = _judge(outcome.readiness, waiting)
            while waiting:
                # the pod waits and checks liveness itself; each exec is bounded so a lost
                # stream costs at most one round
                line = (await sh(ctx, pod, await_subscribed(waiting, marker, READY_ROUND_S))).last_line()
                waiting = _judge(line, waiting)
    except TimeoutError as exc:
        raise StepFailure("AgentsNotReady", "agents did not subscribe to trial channel before readiness "
                                            f"timeout: {waiting}") from exc
    return stack


async def _tenant_while_starting(ctx: TrialContext, status: BuzzTrialStatus
                                 ) -> tuple[tuple[str, PodStart], TenantHandle, TenantSecrets, Redacted]:
    """The pod started, and meanwhile the tenant, its secrets and the model API keys read: the
    reads need no pod, and the pod's start (about 1.5 s, bench/trial.py) hides them."""
    starting = asyncio.create_task(_start_pod(ctx, status.retries))
    try:
        handle, _ = await tenant_of(ctx, status.retries)
        secrets = await read_tenant_secrets(ctx, status)
        keys = await read_api_keys(ctx)
    except BaseException:
        starting.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await starting
        raise
    return await starting, handle, secrets, keys


async def _healthy(ctx: TrialContext, pod: str) -> None:
    """task.toml's healthcheck, passed before the agents start, as Harbor runs it before agent
    setup (trial/healthcheck.py); each run is `sh -c` in the task container, as Harbor's Docker
    environment runs it."""
    check = ctx.task.config.environment.healthcheck
    if check is None:
        return

    async def run(command: str, timeout_s: float) -> int | None:
        try:
            return (await sh(ctx, pod, command, timeout_s=timeout_s)).exit_code
        except TimeoutError:
            return None

    await await_healthy(check, run, time.monotonic, asyncio.sleep)


async def launch(ctx: TrialContext, status: BuzzTrialStatus) -> Launched:
    (pod, started), handle, secrets, keys = await _tenant_while_starting(ctx, status)
    await _healthy(ctx, pod)
    stack = await _start_and_launch(ctx, pod, handle, secrets, keys)
    return Launched(pod=pod, stack=stack, pod_start=started)
