"""The composed system prompt each seat runs with (docs/corridor.md#system-prompt).

Pinned persona bytes plus a "## Your team" block: who the seat is, where the team talks,
who the user is and who its teammates are. The block's bytes are part of what a
condition measures, so they are reproduced exactly, including the solo sentence.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from buzz_operator.condition.errors import ConditionError
from buzz_operator.condition.seats import Seat

SOLO_SENTENCE = (
    "You have no teammates on this trial — you are working alone. "
    "Do the work yourself; there is nobody to delegate to."
)


@dataclass(frozen=True, slots=True)
class TeamMember:
    """A row of the team table: seat id, manifest role, x-only pubkey hex."""

    name: str
    role: str
    pubkey: str


def teammates_of(seat_id: str, seats: Sequence[Seat], pubkeys: Mapping[str, str]) -> list[TeamMember]:
    """Every other seat, in seat order (orchestrator first), as the table lists them."""
    return [
        TeamMember(name=seat.seat_id, role=seat.role, pubkey=pubkeys[seat.seat_id])
        for seat in seats
        if seat.seat_id != seat_id
    ]


def _persona_text(persona: bytes) -> str:
    # The seed reads the persona with Path.read_text: strict UTF-8 and universal newlines
    # (CRLF and CR become LF). Doing the same keeps composed bytes identical.
    try:
        text = persona.decode("utf-8")
    except UnicodeDecodeError as error:
        raise ConditionError(f"persona is not UTF-8 ({error.reason} at byte {error.start})") from error
    return text.replace("\r\n", "\n").replace("\r", "\n")


def compose_system_prompt(
    persona: bytes,
    *,
    seat_id: str,
    seat_pubkey: str,
    channel_id: str,
    user_name: str,
    user_pubkey: str,
    teammates: Sequence[TeamMember],
) -> bytes:
    lines = [
        "",
        "## Your team",
        "",
        f"You are `{seat_id}` (pubkey `{seat_pubkey}`).",
        f"The team coordinates in Buzz channel `{channel_id}`.",
        f"Tasks come from the user `{user_name}` (pubkey `{user_pubkey}`); address your final report to them.",
        "",
    ]
    if teammates:
        lines += ["| Name | Role | Pubkey |", "|------|------|--------|"]
        lines += [f"| {member.name} | {member.role} | `{member.pubkey}` |" for member in teammates]
    else:
        lines.append(SOLO_SENTENCE)
    return (_persona_text(persona) + "\n".join(lines) + "\n").encode("utf-8")
