"""Grading (docs/corridor.md#collect): the task's verifier run in the trial pod, where the agents
worked, after collecting stopped them and installed the verifier's dependencies."""

from __future__ import annotations

from buzz_operator.api.trial import BuzzTrialStatus
from buzz_operator.trial.drive.context import TrialContext
from buzz_operator.trial.state import Graded
from buzz_operator.trial.steps.verifier import run_tests


async def grade(ctx: TrialContext, status: BuzzTrialStatus) -> Graded:
    return await run_tests(ctx, status.pod or ctx.pod(status.retries))
