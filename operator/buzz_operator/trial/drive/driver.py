"""Driving one trial down its corridor: the step for the current phase runs, its fact (or its
failure) becomes the next status through the pure state machine, and that status is written
before the next step starts — so a restarted operator resumes at the first unrecorded step.

`drive` is what the BuzzTrial daemon calls; `step_once` is one transition, for tests and for
handlers that prefer a timer.
"""

from __future__ import annotations

import asyncio
import logging
import traceback
from collections.abc import Awaitable, Callable, Mapping
from datetime import UTC, datetime

from buzz_operator.api.labels import REGRADE
from buzz_operator.api.secret_text import scrub
from buzz_operator.api.trial import BuzzTrialStatus, FailureClass, Phase
from buzz_operator.scoring.failures import StepFailure, classify_reason, exception_reason
from buzz_operator.trial.adopt import adopted_status
from buzz_operator.trial.drive.context import TrialContext
from buzz_operator.trial.state import (
    BEFORE_RESULTS,
    RELEASED,
    Fact,
    advance,
    begin,
    fail,
    is_terminal,
    released,
    seconds_until_ready,
    write_can_wait,
)
from buzz_operator.trial.steps import bundle, collect, grade, launch, provision, run, teardown

log = logging.getLogger(__name__)

Step = Callable[[TrialContext, BuzzTrialStatus], Awaitable[Fact]]
STEPS: dict[Phase, Step] = {
    Phase.PROVISIONING: provision.provision,
    Phase.LAUNCHING: launch.launch,
    Phase.RUNNING: run.run,
    Phase.COLLECTING: collect.collect,
    Phase.GRADING: grade.grade,
    Phase.BUNDLING: bundle.bundle,
}
# Steps without a deadline of their own in the spec (provisioning talks to relay and Postgres).
PROVISION_S = 120.0
TEARDOWN_RETRY_S = 5.0

WriteStatus = Callable[[BuzzTrialStatus, BuzzTrialStatus], Awaitable[None]]


def _deadline_s(ctx: TrialContext, phase: Phase) -> float | None:
    d = ctx.spec.deadlines
    return {
        Phase.PROVISIONING: PROVISION_S,
        # a pod queued through Kueue may also wait for admission first (docs/queueing.md#waiting-bound)
        Phase.LAUNCHING: float(d.schedule_seconds + d.setup_seconds + d.queue_wait_s(ctx.spec.queue_name is not None)),
        # the run bounds its own DONE wait by agentSeconds; settle and stop follow it
        Phase.RUNNING: None,
        Phase.COLLECTING: float(d.collect_seconds) + collect.VERIFIER_DEPS_DEADLINE_S,
        Phase.GRADING: float(d.verifier_seconds + 60),
        Phase.BUNDLING: float(d.upload_seconds),
    }[phase]


def now() -> datetime:
    return datetime.now(UTC)


async def step_once(ctx: TrialContext, status: BuzzTrialStatus) -> BuzzTrialStatus:
    """One transition from `status` (unchanged while a backoff holds it)."""
    if status.phase is Phase.PENDING:
        if not status.failed_tries and status.trial_id is None and (found := await _committed(ctx)):
            log.info("trial %s: adopted from its committed bundle %s", ctx.name, found[0])
            return adopted_status(status, found[1], found[0], now())
        return begin(status, now())
    if is_terminal(status):
        if any(c.type == RELEASED for c in status.conditions):
            return status
        try:
            await teardown.teardown(ctx, status)
        except Exception as error:  # relay or API down: stay unreleased and try again, never crash the daemon
            log.warning("trial %s: teardown failed, retrying in %.0fs: %s", ctx.name, TEARDOWN_RETRY_S, error)
            await asyncio.sleep(TEARDOWN_RETRY_S)
            return status
        return released(status, now())
    if seconds_until_ready(status, now()) > 0:
        return status
    step = STEPS[status.phase]
    try:
        async with asyncio.timeout(_deadline_s(ctx, status.phase)):
            fact = await step(ctx, status)
    except StepFailure as failure:
        log.info("trial %s: %s failed: %s", ctx.name, status.phase, failure.reason)
        return await _failed(ctx, status, failure)
    except Exception as error:  # every other error is classified by type, never lost
        reason = exception_reason(error)
        message = scrub(f"{type(error).__name__}: {error}", ctx.secret_reads.literals())
        # the frames, not the exception's own text again: that is the scrubbed message's
        log.warning("trial %s: %s raised %s\n%s", ctx.name, status.phase, message,
                    "".join(traceback.format_tb(error.__traceback__)).rstrip())
        return await _failed(ctx, status, StepFailure(reason, message[:300]))
    return advance(status, fact, now())


async def _committed(ctx: TrialContext) -> tuple[str, dict] | None:
    # Unreadable storage here is not a reason to fail: the try runs, and bundling will tell.
    try:
        return await bundle.committed_result(ctx)
    except (StepFailure, ValueError) as error:
        log.warning("trial %s: cannot tell whether a bundle is committed: %s", ctx.name, error)
        return None


async def _failed(ctx: TrialContext, status: BuzzTrialStatus, failure: StepFailure) -> BuzzTrialStatus:
    # the relay's, the pod's and the store's words reach the status here: without the keys this
    # drive read (the shapes are scrubbed again as the status is built, api/secret_text.py)
    failure.message = scrub(failure.message, ctx.secret_reads.literals())
    if classify_reason(failure.reason) is FailureClass.INFRA and status.phase in BEFORE_RESULTS and status.trial_id:
        # This try is abandoned (a fresh one follows, or the trial ends): keep what it left first.
        try:
            async with asyncio.timeout(float(ctx.spec.deadlines.upload_seconds)):
                failure.bundle_url = await bundle.keep_try(ctx, status, failure)
        except Exception as error:  # the storage may be what failed; the record says so below
            log.warning("trial %s: keeping the evidence of try %d failed: %s", ctx.name, status.retries, error)
    new = fail(status, failure, now(), retry=ctx.spec.retry, spend=getattr(failure, "spend", None))
    if new.retries > status.retries and status.trial_id:
        # A fresh try forgets this try's tenant and pod (status is reset for the new one), so
        # release them now: archive the channel, free the node. Best effort — the new try
        # must not wait on a relay that may be the reason this one failed.
        try:
            await teardown.release_try(ctx, status)
        except Exception as error:  # any failure here is logged; the new try goes ahead
            log.warning("trial %s: releasing try %d failed: %s", ctx.name, status.retries, error)
    return new


async def release(ctx: TrialContext, status: BuzzTrialStatus) -> None:
    """Teardown outside the corridor (the trial is being deleted): archive, delete pods/Secrets."""
    await teardown.teardown(ctx, status)


def settled(status: BuzzTrialStatus) -> bool:
    """Terminal and torn down: nothing more to do for this trial."""
    return is_terminal(status) and any(c.type == RELEASED for c in status.conditions)


def regrade_wanted(status: BuzzTrialStatus, annotations: Mapping[str, str]) -> int | None:
    """The sweep generation whose regrade (the trial's REGRADE annotation) is still to run on
    this settled trial, or None: none asked, or the last one recorded is that generation's."""
    wanted = str(annotations.get(REGRADE, ""))
    if not wanted.isdigit() or not settled(status):
        return None
    if status.regrade is not None and status.regrade.generation >= int(wanted):
        return None
    return int(wanted)


async def drive(ctx: TrialContext, status: BuzzTrialStatus, write: WriteStatus) -> BuzzTrialStatus:
    """Walk until the trial is terminal and released, writing each transition before the next
    step — but for the ones state.write_can_wait lets the next write carry."""
    written = status
    while not settled(status):
        wait = seconds_until_ready(status, now())
        if wait > 0:
            await asyncio.sleep(wait)
        new = await step_once(ctx, status)
        # a step that moved nothing (a teardown that failed and waits to try again) writes what
        # it left unwritten: a finished trial is counted finished even while its relay is down
        if new != written and (new == status or not write_can_wait(written, new)):
            await write(written, new)
            written = new
        status = new
    return status
