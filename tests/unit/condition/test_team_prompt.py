"""Composed system prompt (docs/corridor.md#system-prompt): persona bytes plus the exact "## Your team" block."""

from __future__ import annotations

import pytest
from buzz_operator.condition import (
    ConditionError,
    ExperimentManifest,
    TeamMember,
    compose_system_prompt,
    plan_seats,
    teammates_of,
)

PK_LEAD = "1" * 64
PK_W1 = "2" * 64
PK_W2 = "3" * 64
PK_USER = "f" * 64
CHANNEL = "6f1c2a7e-0000-4000-8000-000000000001"


def test_solo_golden() -> None:
    composed = compose_system_prompt(
        b"# Solo\n\nFinish with DONE:.\n",
        seat_id="solo-1",
        seat_pubkey=PK_LEAD,
        channel_id=CHANNEL,
        user_name="user",
        user_pubkey=PK_USER,
        teammates=[],
    )
    assert composed == (
        b"# Solo\n\nFinish with DONE:.\n"
        b"\n"
        b"## Your team\n"
        b"\n"
        b"You are `solo-1` (pubkey `1111111111111111111111111111111111111111111111111111111111111111`).\n"
        b"The team coordinates in Buzz channel `6f1c2a7e-0000-4000-8000-000000000001`.\n"
        b"Tasks come from the user `user` (pubkey `ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff`);"
        b" address your final report to them.\n"
        b"\n"
        b"You have no teammates on this trial \xe2\x80\x94 you are working alone."
        b" Do the work yourself; there is nobody to delegate to.\n"
    )


def test_team_golden() -> None:
    composed = compose_system_prompt(
        b"Lead persona",
        seat_id="lead-1",
        seat_pubkey=PK_LEAD,
        channel_id=CHANNEL,
        user_name="John Vincent Doe",
        user_pubkey=PK_USER,
        teammates=[TeamMember("worker-1", "implementer", PK_W1), TeamMember("critic-1", "critic", PK_W2)],
    )
    assert composed == (
        b"Lead persona\n"
        b"## Your team\n"
        b"\n"
        b"You are `lead-1` (pubkey `1111111111111111111111111111111111111111111111111111111111111111`).\n"
        b"The team coordinates in Buzz channel `6f1c2a7e-0000-4000-8000-000000000001`.\n"
        b"Tasks come from the user `John Vincent Doe` (pubkey "
        b"`ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff`); address your final report to them.\n"
        b"\n"
        b"| Name | Role | Pubkey |\n"
        b"|------|------|--------|\n"
        b"| worker-1 | implementer | `2222222222222222222222222222222222222222222222222222222222222222` |\n"
        b"| critic-1 | critic | `3333333333333333333333333333333333333333333333333333333333333333` |\n"
    )


def test_persona_newlines_normalised_like_read_text() -> None:
    composed = compose_system_prompt(
        "Ünïcode\r\nline two\rline three\n".encode(),
        seat_id="solo-1",
        seat_pubkey=PK_LEAD,
        channel_id=CHANNEL,
        user_name="user",
        user_pubkey=PK_USER,
        teammates=[],
    )
    assert composed.startswith("Ünïcode\nline two\nline three\n\n## Your team\n".encode())
    assert b"\r" not in composed


def test_persona_must_be_utf8() -> None:
    with pytest.raises(ConditionError, match="not UTF-8"):
        compose_system_prompt(
            b"\xff\xfe",
            seat_id="solo-1",
            seat_pubkey=PK_LEAD,
            channel_id=CHANNEL,
            user_name="user",
            user_pubkey=PK_USER,
            teammates=[],
        )


def test_teammates_of_uses_seat_order_and_manifest_roles(team: dict) -> None:
    seats = plan_seats(ExperimentManifest.load(team))
    pubkeys = {seat.seat_id: f"{n:064x}" for n, seat in enumerate(seats)}
    assert teammates_of("worker-1", seats, pubkeys) == [
        TeamMember("lead-1", "lead", pubkeys["lead-1"]),
        TeamMember("worker-2", "implementer", pubkeys["worker-2"]),
        TeamMember("critic-1", "critic", pubkeys["critic-1"]),
    ]
    assert teammates_of("solo-1", seats[:1], pubkeys) == [TeamMember("lead-1", "lead", pubkeys["lead-1"])]
