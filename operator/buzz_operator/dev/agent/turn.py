"""One turn of a seat: the batch of events it delivers and the session it is billed to.

As in buzz-acp (crates/buzz-acp/src/queue.rs), events that arrive while a channel's turn is
running wait, and the next turn delivers all of them at once (up to MAX_BATCH_EVENTS); the turn's
scope is its last event.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from .nostr import Event
from .usage import Session

KIND_PROFILE = 0
KIND_MESSAGE = 9
KIND_ADD_MEMBER = 9000
KIND_CREATE_CHANNEL = 9007
KIND_CHANNEL_MEMBERS = 39002
MAX_BATCH_EVENTS = 50  # queue.rs MAX_BATCH_EVENTS
MAX_PENDING_PER_CHANNEL = 500  # queue.rs MAX_PENDING_PER_CHANNEL: the oldest is dropped beyond it


def created_at(event: Event) -> int:
    value = event.get("created_at")
    return value if isinstance(value, int) else 0


def batch_text(events: list[Event]) -> str:
    """What the folded-in model reads of a batch: each event's content, in delivery order."""
    return "\n\n".join(str(event.get("content", "")) for event in events)


@dataclass
class Turn:
    events: list[Event]  # the batch, oldest first; never empty
    channel: str
    text: str
    session: Session

    @property
    def event(self) -> Event:
        """The batch's last event: buzz-acp derives a turn's scope from it."""
        return self.events[-1]

    @property
    def author(self) -> str:
        return str(self.event.get("pubkey", ""))

    @property
    def event_ids(self) -> list[str]:
        return [str(event.get("id", "")) for event in self.events]


OnTurn = Callable[[Turn], Awaitable[None]]
