"""Per-step deadlines of a trial, from task.toml, the condition and the sweep's multiplier.

Which limit bounds the agents' run. Two limits exist and the seed harness enforced both:
Harbor wrapped the agent in the task's `[agent] timeout_sec` × multiplier, and the runtime
wrapped the DONE wait in the manifest's `trial_budget.timeout_seconds` (which it also hands
to buzz-acp as the turn cap). Whichever is shorter therefore fired first, so the agent
deadline here is the minimum of the two, and `agent_source` records which one it was —
a sweep whose manifest budget quietly undercuts the task's limit is visible in every trial
(the seed's preflight demanded budget ≥ task timeout × multiplier for exactly this reason).
The multiplier scales the task's own agent and verifier limits only. Not the manifest budget:
it is part of the condition and its hash, and scaling it would change the experiment rather
than the machine's speed. Not the pod's start (scheduling, image pulls, containers) nor the
setup (stack install, agents subscribed): they measure the cluster, not the task, and a sweep
with `timeoutMultiplier: 0.0001` must give agent timeouts, not a pod that could not start in
one second (docs/corridor.md#deadlines). Both have their own sweep settings.
"""

from __future__ import annotations

import math

from buzz_operator.api.trial import TrialDeadlines

# Agents must subscribe within 60 s each (docs/corridor.md#readiness) after the stack install and forwarder start
# (60 s bind deadline, docs/corridor.md#forwarder): two minutes covers both on an unloaded node.
SETUP_SECONDS = 120.0
# Usage settle (≤ 60 s, docs/corridor.md#usage-settle) + TERM/KILL + log download + evidence export, with headroom.
COLLECT_SECONDS = 300
# One bundle upload; independent of the task, so not scaled.
UPLOAD_SECONDS = 300

MANIFEST = "manifest"
TASK = "task"


def _seconds(value: float) -> int:
    return max(1, math.ceil(value))


def step_deadlines(
    *,
    agent_timeout_sec: float | None,
    verifier_timeout_sec: float,
    build_timeout_sec: float,
    manifest_timeout_seconds: int,
    multiplier: float,
    pod_start_seconds: int | None = None,
    setup_seconds: int | None = None,
) -> TrialDeadlines:
    """Deadlines for one trial; every input is validated here so a bad number names itself.

    ``agent_timeout_sec`` None is Harbor's unset `[agent] timeout_sec`: no task limit, so the
    manifest's budget is the agents' deadline (agent_source "manifest"). ``pod_start_seconds``
    and ``setup_seconds`` are the sweep's (spec.podStartSeconds, spec.setupSeconds); unset, the
    task's build timeout and SETUP_SECONDS."""
    inputs: list[tuple[str, float]] = [] if agent_timeout_sec is None else [("agent_timeout_sec", agent_timeout_sec)]
    inputs += [
        ("verifier_timeout_sec", verifier_timeout_sec),
        ("build_timeout_sec", build_timeout_sec),
        ("manifest_timeout_seconds", manifest_timeout_seconds),
        ("multiplier", multiplier),
        *((name, value) for name, value in (("pod_start_seconds", pod_start_seconds),
                                            ("setup_seconds", setup_seconds)) if value is not None),
    ]
    for name, value in inputs:
        if not (value > 0 and math.isfinite(value)):
            raise ValueError(f"{name} must be a positive number, not {value!r}")
    task_agent = None if agent_timeout_sec is None else _seconds(agent_timeout_sec * multiplier)
    if task_agent is None or manifest_timeout_seconds < task_agent:
        agent_seconds, source = manifest_timeout_seconds, MANIFEST
    else:
        agent_seconds, source = task_agent, TASK
    return TrialDeadlines(
        # Pulling a prebuilt image stands where Harbor built it, so the build timeout bounds it.
        schedule_seconds=pod_start_seconds or _seconds(build_timeout_sec),
        setup_seconds=setup_seconds or _seconds(SETUP_SECONDS),
        agent_seconds=agent_seconds,
        agent_source=source,
        collect_seconds=COLLECT_SECONDS,
        verifier_seconds=_seconds(verifier_timeout_sec * multiplier),
        upload_seconds=UPLOAD_SECONDS,
    )
