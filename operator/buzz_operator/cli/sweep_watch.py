"""``buzzctl sweep watch NAME``: a sweep's live progress from its BuzzSweep and BuzzTrials.

One screen, redrawn every few seconds: trials by state with a progress bar, cost so far
(floor–ceiling) against the budget, the running trials with their phase and age, and why
nothing more is starting — the sweep's status.waiting (parallelism, endpoint cap, budget),
a suspended spec, and each waiting trial's status.waiting: Kueue's admission state and place in
its LocalQueue, the scheduler's reason, the image being pulled, with the time waited.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from rich.console import Group, RenderableType
from rich.live import Live
from rich.progress_bar import ProgressBar
from rich.table import Table
from rich.text import Text

from buzz_operator.cli.cluster import get_sweep, list_trials, pod_waiting_reason, with_kube
from buzz_operator.cli.output import console
from buzz_operator.kube.client import Kube

ACTIVE_PHASES = ("Pending", "Provisioning", "Launching", "Running", "Collecting", "Grading", "Bundling")
FINISHED_CONDITIONS = ("Complete", "Failed")


@dataclass(frozen=True)
class TrialLine:
    name: str
    task: str
    attempt: int
    phase: str
    age_seconds: float | None
    why: str | None = None


@dataclass(frozen=True)
class WatchState:
    sweep: str
    condition: str
    counts: dict[str, int]
    total: int
    cost_floor: float
    cost_ceiling: float
    budget: float | None
    mean_reward: float | None
    active: list[TrialLine] = field(default_factory=list)
    waiting: list[str] = field(default_factory=list)
    finished: str | None = None

    @property
    def done(self) -> int:
        return self.counts["succeeded"] + self.counts["failed"] + self.counts["broken"]


def _parse(stamp: object) -> datetime | None:
    if not isinstance(stamp, str):
        return None
    try:
        return datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        return None


def _age(trial: Mapping[str, Any], now: datetime) -> float | None:
    status = trial.get("status") or {}
    times = status.get("phaseTimes") or {}
    phase = str(status.get("phase") or "Pending").lower()
    since = _parse(times.get(phase)) or _parse((trial.get("metadata") or {}).get("creationTimestamp"))
    return (now - since).total_seconds() if since else None


def waiting_text(waiting: Mapping[str, Any], now: datetime) -> str:
    """A trial's status.waiting in one line: who holds it, where, how long, in the holder's words."""
    where = ""
    if waiting.get("queue"):
        where = f"LocalQueue {waiting['queue']}"
        if waiting.get("clusterQueue"):
            where += f" → ClusterQueue {waiting['clusterQueue']}"
        if waiting.get("position"):
            where += f", #{waiting['position']}"
            if waiting.get("pending") is not None:
                where += f" of {waiting['pending']} pending"
        where = f" ({where})"
    since = _parse(waiting.get("since"))
    waited = _duration((now - since).total_seconds() if since else waiting.get("seconds"))
    message = str(waiting.get("message") or "")
    return (f"{waiting.get('source', '?')}: {waiting.get('reason', '?')}{where} for {waited}"
            + (f": {message}" if message else ""))


def _trial_why(
    name: str, trial_status: Mapping[str, Any], pod_reasons: Mapping[str, str], now: datetime
) -> str | None:
    """Why an active trial is not further along: its pod's own reason first, then the trial's
    status.waiting, then a retry it is sitting out."""
    why = pod_reasons.get(name)
    if why is None and trial_status.get("waiting"):
        why = waiting_text(trial_status["waiting"], now)
    if why is None and trial_status.get("retryAfter"):
        why = f"retrying after {trial_status['retryAfter']} ({trial_status.get('reason') or 'infra failure'})"
    return why


def _active_trials(
    trials: Sequence[Mapping[str, Any]], pod_reasons: Mapping[str, str], now: datetime
) -> list[TrialLine]:
    """The trials in an active phase, sorted by name, each with why it is not further along."""
    active: list[TrialLine] = []
    for trial in sorted(trials, key=lambda t: str((t.get("metadata") or {}).get("name"))):
        trial_status = trial.get("status") or {}
        phase = str(trial_status.get("phase") or "Pending")
        if phase not in ACTIVE_PHASES:
            continue
        name = str((trial.get("metadata") or {}).get("name"))
        why = _trial_why(name, trial_status, pod_reasons, now)
        trial_spec = trial.get("spec") or {}
        active.append(
            TrialLine(name, str(trial_spec.get("task", "?")), int(trial_spec.get("attempt") or 0), phase,
                      _age(trial, now), why)
        )  # fmt: skip
    return active


def _sweep_waiting(spec: Mapping[str, Any], status: Mapping[str, Any], active: Sequence[TrialLine]) -> list[str]:
    """Why nothing more is starting: a suspended spec, the sweep's status.waiting, and the
    trials the cluster holds."""
    waiting: list[str] = []
    if spec.get("suspend"):
        waiting.append("Suspended: spec.suspend is true, no new trials start")
    if status.get("waiting"):
        waiting.append(
            f"{status['waiting'].get('reason')}: {status['waiting'].get('message') or ''}".rstrip(": ")
        )
    # the trials held by the cluster (Kueue's quota, the scheduler), not by their own steps
    waiting += [f"{line.name}: {line.why}" for line in active if line.why and (
        "Unschedulable" in line.why or line.why.startswith(("kueue:", "scheduler:")))]
    return waiting


def _finished(status: Mapping[str, Any]) -> str | None:
    """The sweep's Complete or Failed condition, once one is true."""
    return next(
        (
            f"{c['type']}: {c.get('message') or c.get('reason')}"
            for c in status.get("conditions") or []
            if c.get("type") in FINISHED_CONDITIONS and c.get("status") == "True"
        ),
        None,
    )


def state_of(
    sweep: Mapping[str, Any],
    trials: Sequence[Mapping[str, Any]],
    pod_reasons: Mapping[str, str],
    now: datetime,
) -> WatchState:
    """Everything the screen shows, from the API objects (pure, so it can be tested alone)."""
    status = sweep.get("status") or {}
    spec = sweep.get("spec") or {}
    counts = {
        key: int(status.get(key) or 0) for key in ("pending", "running", "succeeded", "failed", "broken")
    }
    active = _active_trials(trials, pod_reasons, now)
    cost = status.get("costUSD") or {}
    return WatchState(
        sweep=str((sweep.get("metadata") or {}).get("name")),
        condition=str(status.get("conditionShort") or "?"),
        counts=counts,
        total=int(status.get("total") or 0),
        cost_floor=float(cost.get("floor") or 0.0),
        cost_ceiling=float(cost.get("ceiling") or 0.0),
        budget=(spec.get("budget") or {}).get("maxCostUSD"),
        mean_reward=status.get("meanReward"),
        active=active,
        waiting=_sweep_waiting(spec, status, active),
        finished=_finished(status),
    )


def _duration(seconds: float | None) -> str:
    if seconds is None:
        return "?"
    seconds = int(max(0, seconds))
    return f"{seconds // 60}m{seconds % 60:02d}s" if seconds >= 60 else f"{seconds}s"


def render(state: WatchState) -> RenderableType:
    bars = Table.grid(padding=(0, 2))
    bars.add_column(justify="right")
    bars.add_column(width=40)
    bars.add_column()
    bars.add_row(
        "trials",
        ProgressBar(total=max(state.total, 1), completed=state.done, width=40),
        f"{state.done}/{state.total} done — " + ", ".join(f"{k} {v}" for k, v in state.counts.items()),
    )
    cost = f"${state.cost_floor:.4f}–${state.cost_ceiling:.4f}"
    if state.budget:
        bars.add_row(
            "cost",
            ProgressBar(
                total=float(state.budget), completed=min(state.cost_ceiling, float(state.budget)), width=40
            ),
            f"{cost} of ${float(state.budget):.2f} budget",
        )
    else:
        bars.add_row("cost", Text("(no budget)"), cost)
    reward = "-" if state.mean_reward is None else f"{state.mean_reward:.3f}"
    header = Text(f"sweep {state.sweep}  condition {state.condition}  mean reward {reward}", style="bold")
    parts: list[RenderableType] = [header, bars]
    if state.active:
        table = Table(title="active trials", title_justify="left")
        for column in ("trial", "task", "attempt", "phase", "age", "why waiting"):
            table.add_column(column)
        for line in state.active:
            table.add_row(line.name, line.task, str(line.attempt), line.phase, _duration(line.age_seconds),
                          line.why or "")  # fmt: skip
        parts.append(table)
    for reason in state.waiting:
        parts.append(Text(f"waiting: {reason}", style="yellow"))
    if state.finished:
        parts.append(Text(state.finished, style="bold green"))
    return Group(*parts)


async def snapshot(kube: Kube, namespace: str, name: str) -> WatchState:
    sweep = await get_sweep(kube, namespace, name)
    trials = await list_trials(kube, namespace, name)
    reasons: dict[str, str] = {}
    for trial in trials:
        status = trial.get("status") or {}
        if status.get("pod") and status.get("phase") in ("Pending", "Provisioning", "Launching"):
            reason = await pod_waiting_reason(kube, namespace, str(status["pod"]))
            if reason:
                reasons[str(trial["metadata"]["name"])] = reason
    return state_of(sweep, trials, reasons, datetime.now(UTC))


async def watch(namespace: str, name: str, *, interval: float, once: bool) -> WatchState:
    async def run(kube: Kube) -> WatchState:
        state = await snapshot(kube, namespace, name)
        if once:
            console().print(render(state))
            return state
        with Live(render(state), console=console(), refresh_per_second=4, transient=False) as live:
            while not state.finished:
                await asyncio.sleep(interval)
                state = await snapshot(kube, namespace, name)
                live.update(render(state))
        return state

    return await with_kube(run)
