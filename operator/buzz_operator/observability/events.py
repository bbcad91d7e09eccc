"""Kubernetes Events that tell a sweep's and a trial's story.

Builders are pure: they compare the status before and after a write and return the events
to post. Messages use only what the status already shows (phases, reasons, names, the bundle
URL), never Secret data, so an Event says no more than `kubectl get -o yaml` would.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from buzz_operator.api.common import ConditionStatus
from buzz_operator.api.conditions import find_condition
from buzz_operator.api.escapes import Escape
from buzz_operator.api.secret_text import scrub
from buzz_operator.api.trial import BuzzTrialStatus, Phase, RegradeResult
from buzz_operator.observability.metrics import failures
from buzz_operator.trial.pressure import RESOURCE_PRESSURE
from buzz_operator.trial.secret_findings import SECRETS_FOUND

NORMAL, WARNING = "Normal", "Warning"
MESSAGE_LIMIT = 1000  # the Event API caps message size; long verifier output is cut


@dataclass(frozen=True)
class Event:
    type: str
    reason: str
    message: str

    def __post_init__(self) -> None:
        # an Event is read by anyone who may list the object: scrubbed however it was built
        object.__setattr__(self, "message", scrub(self.message))


def _clip(text: str) -> str:
    return text if len(text) <= MESSAGE_LIMIT else text[: MESSAGE_LIMIT - 1] + "…"


def admitted(spec: Mapping[str, Any]) -> Event:
    return Event(
        NORMAL,
        "Admitted",
        _clip(
            f"sweep {spec.get('sweepName', '?')} admitted task {spec.get('task', '?')} attempt {spec.get('attempt', '?')}"
        ),
    )


def announcement(body: Mapping[str, Any], event: Event, *, now: datetime, component: str,
                 instance: str) -> dict[str, Any]:
    """The Event object a trial's start is posted as, by the operator itself and awaited, not
    through kopf's queue: kopf drops what is still queued when it stops, so a trial whose first
    write was made as the operator stopped lost its story's start, and the next operator, seeing
    it no longer fresh, does not announce it. The name is the trial's and its uid's, so posting
    it again (a restart before the first write) meets 409, not a second Event. The fields are
    those kopf's own Events carry, so `kubectl describe` shows them alike."""
    meta = body["metadata"]
    stamp = now.isoformat()
    return {
        "apiVersion": "v1", "kind": "Event",
        "metadata": {"namespace": meta["namespace"],
                     "name": f"{meta['name']}.{event.reason.lower()}.{meta.get('uid') or 'nouid'}"},
        "type": event.type, "reason": event.reason, "message": event.message, "action": "Action?",
        "reportingComponent": component, "reportingInstance": instance, "source": {"component": component},
        "involvedObject": {"apiVersion": body.get("apiVersion"), "kind": body.get("kind"),
                           "namespace": meta["namespace"], "name": meta["name"], "uid": meta.get("uid")},
        "firstTimestamp": stamp, "lastTimestamp": stamp, "eventTime": stamp,
    }


def escaped(escape: Escape) -> Event:
    """The Warning for an error that escaped a handler; its message is the condition's (scrubbed)."""
    retry = "retrying with backoff" if escape.retryable else f"fix {escape.field}; retrying with backoff"
    return Event(WARNING, escape.reason, _clip(f"{escape.message} ({retry})"))


def regraded(old: BuzzTrialStatus, new: BuzzTrialStatus) -> list[Event]:
    """One event when a regrade's record is new: Normal when it regraded, Warning otherwise."""
    record = new.regrade
    if record is None or record == old.regrade:
        return []
    if record.result is RegradeResult.REGRADED:
        return [Event(NORMAL, "Regraded", _clip(
            f"generation {record.generation}: reward {_reward(record.previous_reward)} -> {_reward(new.reward)}"))]
    reason = record.reason or ("NotRegradable" if record.result is RegradeResult.NOT_REGRADABLE else "RegradeFailed")
    detail = f": {record.message}" if record.message else ""
    return [Event(WARNING, reason, _clip(f"regrade for generation {record.generation} {record.result.value}{detail}"))]


def _reward(value: float | None) -> str:
    return "none" if value is None else f"{value:g}"


# A trial's story in Events is its start (`admitted`, posted before its first write), every failure, and
# its finish; the phases between are in its status (phaseTimes, conditions) and in the
# buzz_trial_phase_duration_seconds metric. An Event is an API write: one per phase was 6 of a
# trial's 32 writes (bench/trial.py).
FINISHES = frozenset({Phase.SUCCEEDED, Phase.FAILED})
# Conditions whose turning true (or unknown) is a Warning of its own
WARNING_CONDITIONS = (SECRETS_FOUND, RESOURCE_PRESSURE)


def trial_events(old: BuzzTrialStatus, new: BuzzTrialStatus) -> list[Event]:
    """One Warning per failure the write records, one when the bundle's secret scan found
    something (SecretsInBundle) or could not look, one when the task container was under
    resource pressure (ProcessesOOMKilled), and one when the trial finishes."""
    out: list[Event] = []
    for phase, reason, failure_class in failures(old, new):
        detail = new.message if new.reason == reason and new.message else ""
        out.append(
            Event(
                WARNING,
                reason,
                _clip(
                    f"{failure_class} failure in {phase}"
                    + (f": {detail}" if detail else "")
                    + (f" (retry {new.retries})" if new.phase is Phase.PENDING and new.retries else "")
                ),
            )
        )
    for warned in WARNING_CONDITIONS:
        found = find_condition(new.conditions, warned)
        before = find_condition(old.conditions, warned)
        if found is not None and found.status is not ConditionStatus.FALSE and (
            before is None or (before.status, before.reason) != (found.status, found.reason)
        ):
            # SecretsFound's message names kinds, files and lines: never the matched text
            out.append(Event(WARNING, found.reason, _clip(found.message)))
    if new.phase != old.phase and new.phase in FINISHES:
        out.append(
            Event(
                NORMAL if new.phase is not Phase.FAILED else WARNING,
                new.phase.value,
                _clip(_phase_message(old, new)),
            )
        )
    return out


def _phase_message(old: BuzzTrialStatus, new: BuzzTrialStatus) -> str:
    text = f"{old.phase.value} -> {new.phase.value}"
    if new.outcome:
        text += f"; outcome {new.outcome.value}"
    if new.reward is not None:
        text += f", reward {new.reward:g}"
    if new.bundle_url:
        text += f"; bundle {new.bundle_url}"
    if new.reason and new.phase is not Phase.SUCCEEDED:
        text += f"; {new.reason}"
    return text


def sweep_events(old: Mapping[str, Any], patch: Mapping[str, Any]) -> list[Event]:
    """Condition transitions and changes of why admission waits, from a status patch."""
    out: list[Event] = []
    before = {c.get("type"): c for c in old.get("conditions") or []}
    for condition in patch.get("conditions") or []:
        kind, status = condition.get("type"), condition.get("status")
        prior = before.get(kind) or {}
        if status == prior.get("status") and condition.get("reason") == prior.get("reason"):
            continue
        if not prior and status != "True":
            continue  # a condition first written False (NotSuspended, WithinBudget, ...) is no news
        failed = (kind in ("Failed", "BudgetExhausted") and status == "True") or (
            kind == "Accepted" and status == "False"
        )
        reason = str(condition.get("reason") or kind)
        message = f"{kind}={status}" + (f": {condition['message']}" if condition.get("message") else "")
        out.append(Event(WARNING if failed else NORMAL, reason, _clip(message)))
    if "waiting" in patch:
        was, now = (old.get("waiting") or {}), (patch.get("waiting") or {})
        if now.get("reason") and now.get("reason") != was.get("reason"):
            out.append(
                Event(NORMAL, "Waiting", _clip(f"{now['reason']}: {now.get('message', '')}".rstrip(": ")))
            )
    out += _power_events(old, patch)
    if patch.get("total") is not None or any(
        k in patch for k in ("running", "succeeded", "failed", "broken")
    ):
        merged = {**old, **patch}
        counts = {k: merged.get(k, 0) or 0 for k in ("pending", "running", "succeeded", "failed", "broken")}
        if counts != {k: old.get(k, 0) or 0 for k in counts} and _finished_more(old, merged):
            out.append(
                Event(
                    NORMAL,
                    "TrialsFinished",
                    _clip(
                        f"{counts['succeeded'] + counts['failed'] + counts['broken']}/{merged.get('total', '?')} done: "
                        + ", ".join(f"{k} {v}" for k, v in counts.items())
                    ),
                )
            )
    return out


def _power_events(old: Mapping[str, Any], patch: Mapping[str, Any]) -> list[Event]:
    """The verdict on the sweep's size against spec.comparison (sweep/power_check.py), when it is
    first given or changes: Warning Underpowered, Normal PowerEnough, Normal PowerUnknown."""
    now = patch.get("power")
    if not isinstance(now, Mapping):
        return []
    was = old.get("power") or {}
    merged = {**was, **now}
    if was and merged.get("enough") == was.get("enough") and (
            merged.get("enough") is not None or merged.get("message") == was.get("message")):
        return []
    enough = merged.get("enough")
    reason, kind = ("Underpowered", WARNING) if enough is False else (
        ("PowerEnough", NORMAL) if enough else ("PowerUnknown", NORMAL))
    return [Event(kind, reason, _clip(str(merged.get("message") or "")))]


PROGRESS_STEPS = 10


def _finished_more(old: Mapping[str, Any], merged: Mapping[str, Any]) -> bool:
    """A tenth more of the trials finished (every finish, for ten trials or fewer), or the last:
    an Event per finished trial would be a sweep's one write per trial."""
    done = lambda s: sum(int(s.get(k) or 0) for k in ("succeeded", "failed", "broken"))  # noqa: E731
    before, after = done(old), done(merged)
    total = int(merged.get("total") or 0)
    if after <= before:
        return False
    if total <= 0 or after >= total:
        return True
    return after * PROGRESS_STEPS // total > before * PROGRESS_STEPS // total


def post(body: Mapping[str, Any], events: list[Event]) -> None:
    """Hand the events to kopf's poster (it batches, retries and names the object)."""
    import kopf  # the edge: builders above stay importable without an operator context

    for event in events:
        kopf.event(dict(body), type=event.type, reason=event.reason, message=event.message)
