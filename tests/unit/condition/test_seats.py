"""Seat planning (docs/condition.md#seats): `<class_id>-<n>`, orchestrator classes first, roster order kept."""

from __future__ import annotations

import pytest
from buzz_operator.condition import ExperimentManifest, Seat, orchestrator_seat, plan_seats


def test_solo_has_one_seat(solo: dict) -> None:
    assert plan_seats(ExperimentManifest.load(solo)) == [
        Seat(
            seat_id="solo-1",
            class_id="solo",
            kind="orchestrator",
            role="solo",
            endpoint="openai/luna",
            model_revision="luna-1",
            harness="buzz-agent",
            include_platform_prompt=True,
            index=1,
        )
    ]


def test_orchestrator_first_even_when_listed_last(team: dict) -> None:
    team["roster"] = [team["roster"][1], team["roster"][2], team["roster"][0]]
    seats = plan_seats(ExperimentManifest.load(team))
    assert [seat.seat_id for seat in seats] == ["lead-1", "worker-1", "worker-2", "critic-1"]
    assert [seat.role for seat in seats] == ["lead", "implementer", "implementer", "critic"]
    assert [seat.index for seat in seats] == [1, 1, 2, 1]
    assert orchestrator_seat(seats).seat_id == "lead-1"


def test_seat_carries_class_settings(team: dict) -> None:
    team["roster"][1]["harness"] = "goose"
    team["roster"][1]["include_platform_prompt"] = False
    worker = plan_seats(ExperimentManifest.load(team))[2]
    assert (worker.seat_id, worker.harness, worker.include_platform_prompt, worker.endpoint) == (
        "worker-2",
        "goose",
        False,
        "openai/luna",
    )


def test_seats_are_frozen(solo: dict) -> None:
    seat = plan_seats(ExperimentManifest.load(solo))[0]
    with pytest.raises(AttributeError):
        seat.seat_id = "x"  # type: ignore[misc]
