"""Fixture evidence for tasks/user-mention and the dimensions each must fail."""

from __future__ import annotations

from tests.unit.tasks.evidence_builder import ORCHESTRATOR, Case, Identity, Snapshot
from tests.unit.tasks.runner import TASKS_ROOT

TASK = "user-mention"
REWARD_DIMENSIONS = (
    "evidence_complete",
    "three_word_user",
    "expected_author",
    "same_channel",
    "user_p_tagged",
    "answer_correct",
)
DIAGNOSTIC_DIMENSIONS: tuple[str, ...] = ()
# The scored message is chosen by the orchestrator's pubkey, so its author can only be wrong
# when there is no scored message at all (the fixture self-check still holds then).
FAILS_ONLY_WITH = {"expected_author": frozenset(REWARD_DIMENSIONS) - {"expected_author", "three_word_user"}}

JOHN = Identity("John Vincent Doe", "user")
PROMPT = (TASKS_ROOT / TASK / "instruction.md").read_text(encoding="utf-8")
ANSWER = "DONE: @John Vincent Doe the annual total is $5,328 (12 licenses × $37 × 12 months)."


def _snapshot(
    final: str,
    *,
    user: Identity = JOHN,
    mentions: tuple[str, ...] | None = None,
    channel_id: str | None = "default",
) -> Snapshot:
    snap = Snapshot(TASK, identities=[user, ORCHESTRATOR])
    root = snap.post("task", user, PROMPT)
    kwargs: dict[str, object] = {
        "reply_to": root,
        "mentions": (user.pubkey,) if mentions is None else mentions,
    }
    if channel_id != "default":
        kwargs["channel_id"] = channel_id
    snap.post("final", ORCHESTRATOR, final, **kwargs)
    return snap


def _cases() -> list[Case]:
    truncated = _snapshot(ANSWER)
    truncated.truncated = True
    silent = Snapshot(TASK, identities=[JOHN, ORCHESTRATOR])
    silent.post("task", JOHN, PROMPT)
    return [
        Case("positive-p-tagged", _snapshot(ANSWER).to_json()),
        Case(
            "positive-mention-without-at-text",
            _snapshot("DONE: John, the annual total is 5328 dollars.").to_json(),
        ),
        # The trap: the name is typed as text, but no `p` tag is on the event, so nobody is notified.
        Case("at-text-without-p-tag", _snapshot(ANSWER, mentions=()).to_json(), frozenset({"user_p_tagged"})),
        Case(
            "p-tags-the-orchestrator",
            _snapshot(ANSWER, mentions=(ORCHESTRATOR.pubkey,)).to_json(),
            frozenset({"user_p_tagged"}),
        ),
        Case(
            "wrong-total",
            _snapshot("DONE: @John Vincent Doe the annual total is $5,238.").to_json(),
            frozenset({"answer_correct"}),
        ),
        Case(
            "two-word-user",
            _snapshot(ANSWER, user=Identity("John Doe", "user")).to_json(),
            frozenset({"three_word_user"}),
        ),
        Case(
            "missing-channel-tag", _snapshot(ANSWER, channel_id=None).to_json(), frozenset({"same_channel"})
        ),
        Case("truncated-transcript", truncated.to_json(), frozenset({"evidence_complete"})),
        Case(
            "no-orchestrator-reply",
            silent.to_json(),
            frozenset(REWARD_DIMENSIONS) - {"three_word_user"},
        ),
    ]


CASES = _cases()
