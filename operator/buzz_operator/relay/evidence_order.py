"""The order of the evidence's messages (docs/evidence.md#order): by `created_at`, and within one
second an event never before an event it is known to follow.

Nostr timestamps are whole seconds and Block's relay returns same-second events by id, so an
answer published in the task's own second reads before the task about half the time, and the
verifiers, which score the messages *after* the task by position, find no answer. The seed sorts
by `created_at` alone; this is the one place the project departs from it.

Known to follow, within one second:
- an event that names another in an `e` tag (root, reply or mention) follows it;
- a seat's message and a scripted message follow the task: the seats act on the task, and the
  scripted messages are posted after it (relay/scripted.py);
- scripted messages follow each other in the order they were posted, each after the relay
  accepted the one before;
- the completion message (the `DONE:` the run ended on) follows every other seat message of its
  second: the run ends when the operator sees it, and the seats are stopped.
Ties the rules do not decide keep the relay's order.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from itertools import groupby
from typing import Any


def _predecessors(message: dict[str, Any]) -> set[str]:
    return {t[1] for t in message["tags"] if t[0] == "e" and len(t) >= 2}


def _causal(group: list[dict[str, Any]], task_event_id: str | None, answer_task: set[str],
            scripted_ids: Sequence[str], completion_id: str | None) -> list[dict[str, Any]]:
    """A stable topological order of one second's messages: each step takes the earliest (in the
    relay's order) message whose known predecessors in this second are all placed."""
    if len(group) < 2:
        return group
    ids = {m["id"] for m in group if m["id"]}
    after: list[set[str]] = []
    for message in group:
        needs = _predecessors(message)
        if task_event_id and message["id"] != task_event_id and (
                message["pubkey"] in answer_task or message["id"] in scripted_ids):
            needs.add(task_event_id)
        if message["id"] in scripted_ids:
            position = scripted_ids.index(message["id"])
            needs.update(scripted_ids[:position])
        if completion_id and message["id"] == completion_id:
            needs.update(m["id"] for m in group if m["pubkey"] in answer_task)
        needs.discard(message["id"])
        after.append(needs & ids)
    placed: set[str] = set()
    order: list[dict[str, Any]] = []
    pending = list(range(len(group)))
    while pending:
        # a cycle (only forged ids can make one) leaves nothing ready: the relay's order decides
        ready = next((i for i in pending if after[i] <= placed), pending[0])
        pending.remove(ready)
        order.append(group[ready])
        placed.add(group[ready]["id"])
    return order


def order_messages(messages: Iterable[dict[str, Any]], *, task_event_id: str | None,
                   seat_pubkeys: Iterable[str], scripted_ids: Sequence[str],
                   completion_id: str | None = None) -> list[dict[str, Any]]:
    """Pure: normalized messages sorted by `created_at` (those without one last), each second in
    causal order (module docstring); relay order for the rest."""
    by_second = sorted(messages, key=lambda m: (m["created_at"] is None, m["created_at"] or 0))
    answer_task = set(seat_pubkeys)
    scripted = [s for s in scripted_ids if s]
    ordered: list[dict[str, Any]] = []
    for created_at, group in groupby(by_second, key=lambda m: m["created_at"]):
        members = list(group)
        ordered.extend(members if created_at is None else
                       _causal(members, task_event_id, answer_task, scripted, completion_id))
    return ordered
