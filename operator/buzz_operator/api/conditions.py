"""Setting metav1.Condition entries the way Kubernetes controllers do.

lastTransitionTime moves only when status flips; a new reason or message under the same
status keeps the old time, so "for how long has this been true" stays answerable.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from buzz_operator.api.common import Condition, ConditionStatus


def set_condition(
    conditions: Iterable[Condition],
    type_: str,
    status: ConditionStatus | bool,
    reason: str,
    message: str,
    *,
    now: datetime,
    generation: int | None = None,
) -> list[Condition]:
    """A new list with ``type_`` set; other conditions keep their order and values."""
    if isinstance(status, bool):
        status = ConditionStatus.TRUE if status else ConditionStatus.FALSE
    def entry(since: datetime) -> Condition:
        return Condition(type=type_, status=status, reason=reason, message=message,
                         last_transition_time=since, observed_generation=generation)

    result: list[Condition] = []
    replaced = False
    for condition in conditions:
        if condition.type != type_:
            result.append(condition)
            continue
        result.append(entry(now if condition.status != status else condition.last_transition_time))
        replaced = True
    if not replaced:
        result.append(entry(now))
    return result


def find_condition(conditions: Iterable[Condition], type_: str) -> Condition | None:
    return next((condition for condition in conditions if condition.type == type_), None)


def is_true(conditions: Iterable[Condition], type_: str) -> bool:
    found = find_condition(conditions, type_)
    return found is not None and found.status is ConditionStatus.TRUE
