"""Status models: what the operator writes, and what it can read back."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

from buzz_operator.api.common import Condition, ConditionStatus
from buzz_operator.api.conditions import find_condition, is_true, set_condition
from buzz_operator.api.trial import BuzzTrialStatus

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def test_empty_strings_and_unset_fields_are_not_written() -> None:
    status = BuzzTrialStatus(
        reason="Done",
        message="",
        conditions=[
            Condition(
                type="Bundled", status=ConditionStatus.TRUE, reason="BundleWritten", last_transition_time=T0
            )
        ],
    )
    api = status.to_api()
    assert "message" not in api and "pod" not in api
    assert api["conditions"] == [
        {
            "type": "Bundled",
            "status": "True",
            "reason": "BundleWritten",
            "lastTransitionTime": "2026-01-01T00:00:00Z",
        }
    ]
    again = BuzzTrialStatus.model_validate(api)
    assert again.conditions == status.conditions  # Condition.message reads back as ""
    assert again.message is None  # an optional string reads back as unset


def test_timestamps_are_rfc3339_utc_seconds() -> None:
    moment = datetime(2026, 1, 1, 13, 0, 0, 999, tzinfo=timezone(timedelta(hours=1)))
    condition = Condition(type="A", status=ConditionStatus.TRUE, reason="R", last_transition_time=moment)
    assert condition.to_api()["lastTransitionTime"] == "2026-01-01T12:00:00Z"


def test_unknown_status_fields_are_ignored_on_read() -> None:
    status = BuzzTrialStatus.model_validate({"phase": "Running", "fromANewerOperator": 1})
    assert status.phase.value == "Running"


def test_set_condition_keeps_the_transition_time_while_status_holds() -> None:
    first = set_condition([], "Running", True, "TrialsActive", "1 running", now=T0, generation=1)
    later = set_condition(first, "Running", True, "TrialsActive", "2 running", now=T0 + timedelta(hours=1))
    (condition,) = later
    assert (condition.message, condition.last_transition_time) == ("2 running", T0)
    flipped = set_condition(later, "Running", False, "AllTrialsFinished", "", now=T0 + timedelta(hours=2))
    assert flipped[0].last_transition_time == T0 + timedelta(hours=2)
    assert not is_true(flipped, "Running")


def test_set_condition_keeps_other_conditions_in_order() -> None:
    conditions = set_condition([], "A", True, "R", "", now=T0)
    conditions = set_condition(conditions, "B", False, "R", "", now=T0)
    conditions = set_condition(conditions, "A", False, "R2", "", now=T0)
    assert [(c.type, c.status.value) for c in conditions] == [("A", "False"), ("B", "False")]
    assert find_condition(conditions, "C") is None
