"""task.toml's `[environment.healthcheck]`, awaited as Harbor awaits it (docs/task-toml.md#healthcheck).

Harbor runs the command after the environment starts and before the agent is set up, with Docker
HEALTHCHECK's rules (``BaseEnvironment.run_healthcheck``): the first pass ends the wait; during
the start period a failure only waits ``start_interval_sec``; after it, ``retries`` consecutive
failures fail the trial, ``interval_sec`` apart. A run that outlives ``timeout_sec`` is a failure.
Harbor's error is ``HealthcheckError`` (sandbox failed: retried, not graded); the operator's reason
is ``HealthcheckFailed``, infra. Pure: the command's runner, the clock and the sleep are given.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from buzz_operator.dataset.config import HealthcheckSection
from buzz_operator.scoring.failures import StepFailure

# one command run: its exit status, or None when it outlived timeout_sec
Run = Callable[[str, float], Awaitable[int | None]]


async def await_healthy(check: HealthcheckSection, run: Run, now: Callable[[], float],
                        sleep: Callable[[float], Awaitable[None]]) -> int:
    """Return how many runs it took; raise StepFailure("HealthcheckFailed") as Harbor raises."""
    start_period_end = now() + check.start_period_sec
    failures = runs = 0
    last: int | None = None
    while True:
        in_start_period = now() < start_period_end
        last = await run(check.command, check.timeout_sec)
        runs += 1
        if last == 0:
            return runs
        if in_start_period:
            await sleep(check.start_interval_sec)
            continue
        failures += 1
        if failures >= check.retries:
            ended = "timed out" if last is None else f"exit {last}"
            raise StepFailure("HealthcheckFailed", f"[environment.healthcheck] failed {check.retries} consecutive "
                                                   f"times ({runs} runs, the last {ended}): {check.command}"[:300])
        await sleep(check.interval_sec)
