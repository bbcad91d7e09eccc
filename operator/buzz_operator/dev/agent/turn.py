"""One turn of a seat: the mention that woke it and the session it is billed to."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from .nostr import Event
from .usage import Session

KIND_PROFILE = 0
KIND_MESSAGE = 9
KIND_ADD_MEMBER = 9000
KIND_CREATE_CHANNEL = 9007


def created_at(event: Event) -> int:
    value = event.get("created_at")
    return value if isinstance(value, int) else 0


@dataclass
class Turn:
    event: Event
    channel: str
    text: str
    session: Session
    # created_at of the newest event this turn has read or written (see Tools.post)
    floor: int = 0

    @property
    def author(self) -> str:
        return str(self.event.get("pubkey", ""))


OnTurn = Callable[[Turn], Awaitable[None]]
