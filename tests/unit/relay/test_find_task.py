"""A restarted run finds the task message it posted before the restart (relay/messages.find_task,
docs/corridor.md#restarts), not a scripted message of the same user that mentions the
orchestrator too.

Found by `make soak` (docs/performance.md#soak): after a kill, cross-thread-requests' run step
ran again, took the BETA request for the task (the relay returned the two same-second messages by
id, BETA's first, and both start with "@solo-1 "), and recorded BETA's id as task_event_id; the
verifier then found no reply to the ALPHA thread and scored a correct team 0."""

from __future__ import annotations

from buzz_operator.relay.messages import find_task, task_content

ALPHA = "ALPHA request: calculate `(17 * 19) + 23`.\n\nReply with the ALPHA result, labelled ALPHA."
# the soak's evidence, as the relay returned it: same second, ordered by id
EVENTS = [
    {"id": "5b1350d3" + "0" * 56, "created_at": 1796543122,
     "content": "@solo-1 BETA request: calculate (84 / 7) + 29. Reply with the BETA result, labelled BETA."},
    {"id": "ae60038b" + "0" * 56, "created_at": 1796543122, "content": task_content("solo-1", ALPHA)},
]


def test_the_task_is_the_message_with_its_whole_text() -> None:
    assert find_task(EVENTS, "solo-1", ALPHA) == "ae60038b" + "0" * 56
    assert find_task(EVENTS[:1], "solo-1", ALPHA) is None and find_task([], "solo-1", ALPHA) is None


def test_a_task_posted_twice_is_the_first() -> None:
    # a second post cannot happen (the step looks before it posts); were it to, the earlier stands
    later = {"id": "00" * 32, "created_at": 1796543130, "content": task_content("solo-1", ALPHA)}
    assert find_task([later, *EVENTS], "solo-1", ALPHA) == EVENTS[1]["id"]


def test_the_text_is_what_post_task_sends() -> None:
    assert task_content("lead-1", "Do it.") == "@lead-1 Do it."
