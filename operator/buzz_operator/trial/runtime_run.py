"""The run (§4.1 steps 6–7, §4.5, §4.6): the task posted as the user with the orchestrator
mention, DONE: awaited through a live relay subscription bounded by the agent deadline,
liveness probed meanwhile, then usage settled and every seat stopped for real.

Idempotent across an operator restart mid-run: the task message is looked up before it is
posted, the DONE wait counts from when Running began (recorded in status), and stopping an
already stopped pod finds nothing left to stop.
"""

from __future__ import annotations

import asyncio
import time
from datetime import UTC, datetime
from typing import Any

from buzz_operator.api.trial import BuzzTrialStatus
from buzz_operator.ledger import TURN_END_MARKERS, USAGE_MARKER
from buzz_operator.relay.client import RelayClient, RelayError
from buzz_operator.relay.messages import KIND_MESSAGE, post_task, wait_for_done
from buzz_operator.relay.tenant import client_as, healthcheck
from buzz_operator.relay.tenant_models import ProvisioningError, TenantHandle
from buzz_operator.trial.failures import StepFailure
from buzz_operator.trial.runtime_context import TrialContext
from buzz_operator.trial.runtime_io import record, sh
from buzz_operator.trial.runtime_launch import read_tenant_secrets, tenant_of
from buzz_operator.trial.runtime_shell import STOP_ENV, STOP_SEATS, read_logs, seats_alive
from buzz_operator.trial.state import Ran

LIVENESS_EVERY_S = 10.0  # the seed probed every 10th one-second poll
SOLO_POLL_S = 2.0
USAGE_SETTLE_S = 60.0  # §0 usage_settle_seconds
SETTLE_POLL_S = 0.5
STOP_ROUNDS = 3


async def _existing_task_event(user: RelayClient, handle: TenantHandle) -> str | None:
    events = await user.query([{"kinds": [KIND_MESSAGE], "#h": [handle.channel_id],
                                "authors": [handle.user.pubkey], "#p": [handle.orchestrator.pubkey]}], timeout=30)
    prefix = f"@{handle.orchestrator.seat_id} "
    found = [e for e in events if str(e.get("content", "")).startswith(prefix)]
    return str(found[0]["id"]) if found else None


async def _watch_seats(ctx: TrialContext, pod: str, solo: bool) -> str:
    """Returns "stopped" when a solo seat ended its turn without DONE (§4.5); raises when every
    seat process died."""
    seat_ids = [s.seat_id for s in ctx.seats]
    last_liveness = time.monotonic()
    while True:
        await asyncio.sleep(SOLO_POLL_S if solo else LIVENESS_EVERY_S)
        if solo:
            text = (await sh(ctx, pod, read_logs(seat_ids[0]))).text()
            if any(marker in text for marker in TURN_END_MARKERS):
                return "stopped"
        if time.monotonic() - last_liveness >= LIVENESS_EVERY_S:
            last_liveness = time.monotonic()
            alive = (await sh(ctx, pod, seats_alive(seat_ids))).text()
            dead = [line.split()[0] for line in alive.splitlines() if line.endswith(" dead")]
            if dead and len(dead) == len(seat_ids):
                raise StepFailure("AgentsExitedEarly", f"agent processes exited early: {dead}")


def _remaining_s(ctx: TrialContext, status: BuzzTrialStatus) -> float:
    budget = float(ctx.spec.deadlines.agent_seconds)
    started = status.phase_times.running or datetime.now(UTC)
    return max(0.0, budget - (datetime.now(UTC) - started).total_seconds())


async def _await_completion(
    ctx: TrialContext, pod: str, user: RelayClient, handle: TenantHandle, since: int, remaining: float
) -> tuple[dict[str, Any] | None, bool]:
    """(DONE message or None, timed_out)."""
    done = asyncio.create_task(wait_for_done(user, handle.channel_id, handle.orchestrator.pubkey, since))
    watch = asyncio.create_task(_watch_seats(ctx, pod, solo=len(ctx.seats) == 1))
    try:
        finished, _ = await asyncio.wait({done, watch}, timeout=remaining, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in (done, watch):
            task.cancel()
        await asyncio.gather(done, watch, return_exceptions=True)
    if done in finished and done.exception() is None:
        return done.result(), False
    if watch in finished:
        if (error := watch.exception()) is not None:
            raise error
        return None, False
    if done in finished and (error := done.exception()) is not None:
        raise StepFailure("RelayUnavailable", f"DONE subscription: {error}"[:300]) from error
    return None, True


async def _relay_trouble(ctx: TrialContext, user: RelayClient) -> str | None:
    """Why the relay cannot be trusted for this run, or None: the run's own connection was lost
    meanwhile, or the relay (or its Postgres) is not ready now."""
    if user.disconnects:
        return f"the relay connection was lost {user.disconnects} time(s) during the run"
    try:
        await healthcheck(ctx.relay)
    except ProvisioningError as exc:
        return f"the relay was not ready ({exc})"
    return None


async def settle_usage(ctx: TrialContext, pod: str) -> float:
    """§4.6: until each live seat has logged usage, at most 60 s; misses are not errors."""
    started = time.monotonic()
    pending = [s.seat_id for s in ctx.seats]
    while pending and time.monotonic() - started < USAGE_SETTLE_S:
        alive = (await sh(ctx, pod, seats_alive(pending))).text()
        live = {line.split()[0] for line in alive.splitlines() if line.endswith(" alive")}
        pending = [s for s in pending if s in live and USAGE_MARKER not in (await sh(ctx, pod, read_logs(s))).text()]
        if pending:
            await asyncio.sleep(SETTLE_POLL_S)
    return time.monotonic() - started


async def stop_seats(ctx: TrialContext, pod: str) -> None:
    """TERM, 2 s, KILL every stack process, then verify by exec that none is left."""
    for _ in range(STOP_ROUNDS):
        result = await sh(ctx, pod, STOP_SEATS, env=STOP_ENV)
        if result.last_line() == "left 0":
            return
    raise StepFailure("InternalError", f"agent processes survived SIGKILL: {result.last_line()}")


async def run(ctx: TrialContext, status: BuzzTrialStatus) -> Ran:
    pod = status.pod or ctx.pod(status.retries)
    handle, _ = await tenant_of(ctx, status.retries)
    secrets = await read_tenant_secrets(ctx, status)
    started = status.phase_times.running or datetime.now(UTC)
    since = int(started.timestamp()) - 1
    try:
        async with client_as(ctx.relay, secrets.user_secret_hex, secrets.user_auth_tag) as user:
            task_event_id = await _existing_task_event(user, handle)
            if task_event_id is None:
                await record(ctx, pod, {"active_started": time.time()})
                task_event_id = await post_task(user, handle.channel_id, handle.orchestrator.seat_id,
                                                handle.orchestrator.pubkey, ctx.task.instruction)
            completion, timed_out = await _await_completion(ctx, pod, user, handle, since, _remaining_s(ctx, status))
            if completion is None and not timed_out and (outage := await _relay_trouble(ctx, user)):
                # A team that stops without DONE while the relay is away most likely lost a
                # publish to the outage: the platform's failure, retried — never scored 0.
                raise StepFailure("RelayUnavailable", f"the team stopped without DONE while {outage}"[:300])
    except (OSError, RelayError) as exc:
        raise StepFailure("RelayUnavailable", str(exc)[:300]) from exc
    await record(ctx, pod, {"active_finished": time.time(), "stopped_without_done": completion is None and not timed_out,
                            "completion_message": (completion or {}).get("content", "")})
    settled = await settle_usage(ctx, pod)
    await stop_seats(ctx, pod)
    await record(ctx, pod, {"usage_settle_seconds": settled})
    return Ran(task_event_id=task_event_id, completion_message_id=(completion or {}).get("id"), timed_out=timed_out)
