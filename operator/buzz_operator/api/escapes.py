"""What escaped a handler, as the object's status can say it: one classification for every
sweep and trial handler (reconcile, trial daemon, janitor, preflight), so no error is left to
the operator's log alone.

An error that names a spec field (`.field`, as InputError and the key parsers' errors do) will
not go away by retrying: it is an invalid spec. Everything else is the platform or a bug: it is
retried with a backoff that grows with how long the object has been failing, so no counter has
to be kept anywhere. Messages are scrubbed of anything shaped like a secret (api/secret_text.py),
because a condition and an Event are readable by anyone who may list the object.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from pydantic import ValidationError

from buzz_operator.api.common import Condition, ConditionStatus
from buzz_operator.api.conditions import find_condition, set_condition
from buzz_operator.api.secret_text import scrub

READY = "Ready"  # the reconcile timer's and the trial daemon's verdict
JANITOR_READY = "JanitorReady"  # the janitor's own, so one handler's success never hides the other's failure
INVALID_SPEC = "InvalidSpec"
MESSAGE_MAX = 300
BACKOFF_BASE_S, BACKOFF_CAP_S = 5.0, 300.0
_CAMEL = re.compile(r"[A-Z][a-z]+(?:[A-Z][a-z0-9]*)*")

@dataclass(frozen=True)
class Escape:
    reason: str  # CamelCase: InvalidSpec, or Infra<what> / InternalError for retryable ones
    message: str  # "<where>: <ExceptionType>: <text>", scrubbed and clipped
    field: str | None = None  # the spec field to fix, when retrying cannot help

    @property
    def retryable(self) -> bool:
        return self.field is None


def classify(error: BaseException, where: str, secrets: Iterable[str] = ()) -> Escape:
    """The escape for `error`, raised by the handler step named `where`."""
    text = scrub(f"{where}: {type(error).__name__}: {error}", secrets)
    text = " ".join(text.split())[:MESSAGE_MAX]
    field = getattr(error, "field", None)
    if isinstance(field, str) and field.startswith("spec"):
        return Escape(INVALID_SPEC, text, field)
    if isinstance(error, TimeoutError):
        return Escape("InfraTimeout", text)
    if isinstance(error, OSError):  # sockets, DNS, refused connections: a service is down
        return Escape("InfraUnavailable", text)
    status = getattr(error, "status", None)
    if isinstance(status, int) and not isinstance(status, bool):  # the API server's answer (ApiException)
        return Escape("InfraApiUnavailable" if status in (409, 429) or status >= 500 else "InfraApiRefused", text)
    reason = getattr(error, "reason", None)
    if isinstance(reason, str) and _CAMEL.fullmatch(reason):  # a StepFailure already says why
        return Escape(reason, text)
    # not understood: most likely a bug; retried, and the message says what it was
    return Escape("InternalError", text)


def retry_delay_s(conditions: Iterable[Condition], now: datetime) -> float:
    """Seconds until the next try: as long as Ready has been False, between BASE and CAP — so
    the delays roughly double while the failure lasts, and the first retry comes soon."""
    ready = find_condition(conditions, READY)
    if ready is None or ready.status is not ConditionStatus.FALSE or ready.last_transition_time is None:
        return BACKOFF_BASE_S
    failing = (now - ready.last_transition_time).total_seconds()
    return min(max(failing, BACKOFF_BASE_S), BACKOFF_CAP_S)


def conditions_of(status: Mapping[str, Any] | None) -> list[Condition]:
    """The conditions of a raw status, skipping entries that do not parse: the escape path
    must work on exactly the objects whose status broke the handler."""
    found = []
    for raw in (status or {}).get("conditions") or []:
        try:
            found.append(Condition.model_validate(raw))
        except ValidationError:
            continue
    return found


def escape_patch(
    status: Mapping[str, Any] | None, escape: Escape, now: datetime, *, generation: int | None = None,
    type_: str = READY, also: Iterable[str] = (),
) -> dict[str, Any]:
    """The status merge patch recording `escape`: `type_`=False with its reason and message, and
    each condition type in `also` (e.g. Accepted for an invalid spec) False with the same."""
    conditions = conditions_of(status)
    for kind in (type_, *also):
        conditions = set_condition(conditions, kind, False, escape.reason, escape.message, now=now,
                                   generation=generation)
    return {"conditions": [c.to_api() for c in conditions]}


def recovered_patch(
    status: Mapping[str, Any] | None, now: datetime, *, generation: int | None = None, type_: str = READY,
    reason: str = "Reconciled",
) -> dict[str, Any]:
    """`type_`=True again after an escape; {} when it is not False (nothing ever escaped, or
    already recovered), so a healthy object never carries the condition at all."""
    conditions = conditions_of(status)
    found = find_condition(conditions, type_)
    if found is None or found.status is not ConditionStatus.FALSE:
        return {}
    conditions = set_condition(conditions, type_, True, reason, "", now=now, generation=generation)
    return {"conditions": [c.to_api() for c in conditions]}


def with_recovery(
    status: Mapping[str, Any] | None, patch: Mapping[str, Any], now: datetime, *, generation: int | None = None,
    type_: str = READY,
) -> dict[str, Any]:
    """A handler's successful `patch`, plus `type_`=True when an earlier escape left it False."""
    merged = {**(status or {}), **patch}
    recovered = recovered_patch(merged, now, generation=generation, type_=type_)
    return {**patch, **recovered}
