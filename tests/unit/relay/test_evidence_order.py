"""The evidence's order rules one by one (docs/evidence.md#order)."""

from __future__ import annotations

from typing import Any

from buzz_operator.relay.evidence_order import order_messages

TASK, SEAT, WORKER, STRANGER = "t" * 64, "s" * 64, "w" * 64, "x" * 64


def message(id_: str, created_at: int | None, pubkey: str = STRANGER, refs: tuple[str, ...] = ()) -> dict[str, Any]:
    return {"id": id_, "created_at": created_at, "pubkey": pubkey,
            "tags": [["h", "chan"], *(["e", ref, "", "reply"] for ref in refs)]}


def ids(messages: list[dict[str, Any]], scripted: tuple[str, ...] = (), completion: str | None = None) -> list[str]:
    ordered = order_messages(messages, task_event_id="task", seat_pubkeys=[SEAT, WORKER], scripted_ids=scripted,
                             completion_id=completion)
    return [m["id"] for m in ordered]


def test_seconds_rule_and_undecided_ties_keep_the_relays_order() -> None:
    raw = [message("b", 11), message("late", None), message("z", 10), message("a", 10)]
    assert ids(raw) == ["z", "a", "b", "late"]


def test_an_event_follows_what_its_e_tags_name_in_the_same_second_only() -> None:
    raw = [message("reply2", 10, refs=("reply1",)), message("reply1", 10, refs=("root",)), message("root", 10)]
    assert ids(raw) == ["root", "reply1", "reply2"]
    # across seconds created_at rules: a reference to a later second moves nothing
    assert ids([message("early", 9, refs=("later",)), message("later", 10)]) == ["early", "later"]


def test_a_seats_message_follows_the_task_even_without_a_tag() -> None:
    raw = [message("top-level answer", 10, pubkey=SEAT), message("task", 10, pubkey=TASK), message("other", 10)]
    assert ids(raw) == ["task", "top-level answer", "other"]


def test_scripted_messages_follow_the_task_and_each_other_as_posted() -> None:
    raw = [message("s2", 10), message("s1", 10), message("task", 10, pubkey=TASK), message("noise", 10)]
    assert ids(raw, scripted=("s1", "s2")) == ["task", "s1", "s2", "noise"]


def test_a_cycle_of_forged_references_falls_back_to_the_relays_order() -> None:
    raw = [message("p", 10, refs=("q",)), message("q", 10, refs=("p",)), message("r", 10, refs=("p",))]
    assert ids(raw) == ["p", "q", "r"]


def test_nothing_is_dropped_or_duplicated_with_odd_ids() -> None:
    raw = [message("", 10), message("", 10, refs=("task",)), message("task", 10, pubkey=TASK)]
    ordered = ids(raw)
    assert sorted(ordered) == ["", "", "task"] and ordered[0] == "" and ordered[1] == "task"


def test_the_completion_message_follows_every_seat_message_of_its_second() -> None:
    """A lead that delegates, hears its worker and says DONE within one second: nothing in the
    tags orders DONE after the delegation and the answer, but the run ended on it."""
    raw = [message("done", 10, pubkey=SEAT, refs=("task",)), message("answer", 10, pubkey=WORKER, refs=("ask",)),
           message("ask", 10, pubkey=SEAT, refs=("task",)), message("task", 10, pubkey=TASK),
           message("stranger", 10)]
    assert ids(raw, completion="done") == ["task", "ask", "answer", "done", "stranger"]
    assert ids(raw) == ["task", "done", "ask", "answer", "stranger"]  # without it, the relay's order
