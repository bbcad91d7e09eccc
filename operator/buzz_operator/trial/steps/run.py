"""The run (docs/corridor.md#run, docs/completion.md#what-is-watched, docs/corridor.md#stop): the task posted as the user with the orchestrator
mention, the task's scripted messages right after it, completion awaited (docs/completion.md)
bounded by the agent deadline, liveness probed meanwhile, then usage settled and every seat
stopped for real (one exec: shell.settle_then_stop).

Completion is watched, never polled: DONE: through a live relay subscription, a solo seat's turns
and delivery receipts by following its log stream (ledger/turn_log.py). A solo task with scripted
events ends only when the seat is idle and every scripted event was acknowledged (Block's rule,
block/buzz #6487); DONE: does not end it.

Idempotent across an operator restart mid-run: the task and scripted messages are looked up
before they are posted, the wait counts from when Running began (recorded in status), and stopping
an already stopped pod finds nothing left to stop.
"""

from __future__ import annotations

import asyncio
import time
from datetime import UTC, datetime
from typing import Any

from buzz_operator.api.trial import BuzzTrialStatus
from buzz_operator.condition.paths import remote_stderr_log, remote_stdout_log
from buzz_operator.ledger import USAGE_MARKER
from buzz_operator.ledger.turn_log import TurnLog
from buzz_operator.pod.shell import STATE_DIR, STOP_ENV, seats_alive, settle_then_stop
from buzz_operator.relay.client import RelayClient, RelayError
from buzz_operator.relay.messages import KIND_MESSAGE, find_done, find_task, post_task, wait_for_done
from buzz_operator.relay.scripted import ScriptedEvent, publish_scripted
from buzz_operator.relay.tenant import actor_secrets, client_as, healthcheck
from buzz_operator.relay.tenant_models import ProvisioningError, TenantHandle
from buzz_operator.scoring.failures import StepFailure
from buzz_operator.trial.drive.context import TrialContext
from buzz_operator.trial.drive.pod_exec import SHORT_S, fact_files, follow, record, sh, upload_then
from buzz_operator.trial.state import Ran
from buzz_operator.trial.steps.tenant import read_tenant_secrets, tenant_of

LIVENESS_EVERY_S = 10.0  # the seed probed every 10th one-second poll
FOLLOW_AGAIN_S = 1.0  # before following a seat's log again after its stream broke
FOLLOW_SLACK_S = 30
USAGE_SETTLE_S = 60.0  # docs/corridor.md#usage-settle usage_settle_seconds


async def _existing_task_event(user: RelayClient, handle: TenantHandle, instruction: str) -> str | None:
    """The task message a run before a restart posted, or None (relay/messages.find_task)."""
    events = await user.query([{"kinds": [KIND_MESSAGE], "#h": [handle.channel_id],
                                "authors": [handle.user.pubkey], "#p": [handle.orchestrator.pubkey]}], timeout=30)
    return find_task(events, handle.orchestrator.seat_id, instruction)


async def _probe_liveness(ctx: TrialContext, pod: str) -> None:
    """Raises when every seat process died; otherwise runs until cancelled."""
    seat_ids = [s.seat_id for s in ctx.seats]
    while True:
        await asyncio.sleep(LIVENESS_EVERY_S)
        alive = (await sh(ctx, pod, seats_alive(seat_ids))).text()
        dead = [line.split()[0] for line in alive.splitlines() if line.endswith(" dead")]
        if dead and len(dead) == len(seat_ids):
            raise StepFailure("AgentsExitedEarly", f"agent processes exited early: {dead}")


async def _watch_solo(ctx: TrialContext, pod: str, turns: TurnLog, scripted_ids: frozenset[str],
                      remaining: float) -> None:
    """Returns when the solo seat's log says it finished (TurnLog.finished), following the log as
    it is written. A broken stream is followed again from the start, into a fresh count. The
    `tail` is bounded by the run's deadline: closing an exec stream need not end its process."""
    seat = ctx.seats[0].seat_id
    script = (f"exec timeout {int(remaining) + FOLLOW_SLACK_S} tail -n +1 -F "
              f"{remote_stdout_log(seat)} {remote_stderr_log(seat)} 2>/dev/null")
    while True:
        fresh = TurnLog()
        try:
            async for chunk in follow(ctx, pod, script):
                fresh.feed(chunk.decode("utf-8", "replace"))
                turns.starts, turns.ends, turns.delivered = fresh.starts, fresh.ends, fresh.delivered
                if fresh.finished(scripted_ids):
                    return
        except StepFailure as exc:
            if exc.reason != "ExecStreamBroken":
                raise
        await asyncio.sleep(FOLLOW_AGAIN_S)


def _remaining_s(ctx: TrialContext, status: BuzzTrialStatus) -> float:
    budget = float(ctx.spec.deadlines.agent_seconds)
    started = status.phase_times.running or datetime.now(UTC)
    return max(0.0, budget - (datetime.now(UTC) - started).total_seconds())


async def _never() -> None:
    await asyncio.Event().wait()


async def _await_completion(
    ctx: TrialContext, pod: str, user: RelayClient, handle: TenantHandle, since: int, remaining: float,
    turns: TurnLog, scripted_ids: frozenset[str],
) -> tuple[dict[str, Any] | None, bool]:
    """(DONE message or None, timed_out)."""
    solo = len(ctx.seats) == 1
    # DONE: ends a team's run and a solo run without scripted events, not a scripted solo run
    done = asyncio.create_task(
        _never() if solo and scripted_ids else wait_for_done(user, handle.channel_id, handle.orchestrator.pubkey, since)
    )
    watch = asyncio.create_task(_watch_solo(ctx, pod, turns, scripted_ids, remaining) if solo else _never())
    liveness = asyncio.create_task(_probe_liveness(ctx, pod))
    tasks = (done, watch, liveness)
    try:
        finished, _ = await asyncio.wait(set(tasks), timeout=remaining, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    if done in finished and done.exception() is None:
        return done.result(), False
    for task in (watch, liveness):
        if task in finished:
            if (error := task.exception()) is not None:
                raise error
            # The seat's log can show the turn's end before the relay delivers the DONE: it
            # published in that turn; a DONE already stored is still the run's completion.
            return await find_done(user, handle.channel_id, handle.orchestrator.pubkey, since), False
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


async def settle_and_stop(ctx: TrialContext, pod: str, finished: dict[str, Any]) -> None:
    """The run's end facts recorded, usage settled and every seat stopped, in one exec
    (shell.settle_then_stop): survivors of SIGKILL are InternalError."""
    script = settle_then_stop([s.seat_id for s in ctx.seats], USAGE_MARKER, USAGE_SETTLE_S)
    result = await upload_then(ctx, pod, STATE_DIR, fact_files(finished), script, env=STOP_ENV,
                               timeout_s=USAGE_SETTLE_S + SHORT_S)
    if result.last_line() != "left 0":
        raise StepFailure("InternalError", f"agent processes survived SIGKILL: {result.last_line()}"[:300])


async def run(ctx: TrialContext, status: BuzzTrialStatus) -> Ran:
    pod = status.pod or ctx.pod(status.retries)
    handle, _ = await tenant_of(ctx, status.retries)
    secrets = await read_tenant_secrets(ctx, status)
    started = status.phase_times.running or datetime.now(UTC)
    since = int(started.timestamp()) - 1
    try:
        async with client_as(ctx.relay, secrets.user_secret_hex, secrets.user_auth_tag) as user:
            task_event_id = await _existing_task_event(user, handle, ctx.task.instruction)
            if task_event_id is None:
                await record(ctx, pod, {"active_started": time.time()})
                task_event_id = await post_task(user, handle.channel_id, handle.orchestrator.seat_id,
                                                handle.orchestrator.pubkey, ctx.task.instruction)
            scripted = await publish_scripted(
                handle, ctx.task.buzz.scripted_messages, task_event_id, user=user,
                open_as=lambda secret, tag: client_as(ctx.relay, secret, tag),
                actors=actor_secrets(ctx.relay.owner_secret_hex, handle.scripted_actors),
            )
            scripted_ids = frozenset(e.event_id for e in scripted)
            turns = TurnLog()
            completion, timed_out = await _await_completion(ctx, pod, user, handle, since, _remaining_s(ctx, status),
                                                            turns, scripted_ids)
            if completion is None and not timed_out and (outage := await _relay_trouble(ctx, user)):
                # A team that stops without DONE while the relay is away most likely lost a
                # publish to the outage: the platform's failure, retried — never scored 0.
                raise StepFailure("RelayUnavailable", f"the team stopped without DONE while {outage}"[:300])
            pending = _unacknowledged(scripted, turns) if timed_out and len(ctx.seats) == 1 else []
            if pending and (outage := await _relay_trouble(ctx, user)):
                # An acknowledgement that never came is the agent's outcome on a healthy relay,
                # the platform's when the relay was away (the events may never have reached it).
                raise StepFailure("RelayUnavailable", f"scripted events {pending} were never delivered while "
                                                      f"{outage}"[:300])
    except (OSError, RelayError) as exc:
        raise StepFailure("RelayUnavailable", str(exc)[:300]) from exc
    finished = {"active_finished": time.time(), "stopped_without_done": completion is None and not timed_out,
                "completion_message": (completion or {}).get("content", ""),
                "scripted_events": [e.to_dict() for e in scripted], "scripted_unacknowledged": pending}
    # one exec records the run's end and its settle: a restart before it runs the step again,
    # and the step finds the task posted and DONE already there (docs/corridor.md#restarts)
    await settle_and_stop(ctx, pod, finished)
    note = f"scripted events never acknowledged by the agent: {pending}" if pending else None
    return Ran(task_event_id=task_event_id, completion_message_id=(completion or {}).get("id"), timed_out=timed_out,
               note=note)


def _unacknowledged(scripted: list[ScriptedEvent], turns: TurnLog) -> list[str]:
    """The labels of the scripted events the solo seat's log never acknowledged."""
    return [e.label for e in scripted if e.event_id not in turns.delivered]
