"""Fixture evidence for tasks/read-named-path-outside-workspace and the dimensions each must fail."""

from __future__ import annotations

from pathlib import Path

from tests.unit.tasks.evidence_builder import ORCHESTRATOR, OTHER_CHANNEL_ID, USER, Case, Snapshot
from tests.unit.tasks.runner import TASKS_ROOT

TASK = "read-named-path-outside-workspace"
REWARD_DIMENSIONS = (
    "evidence_complete",
    "expected_author",
    "same_channel",
    "named_path_read",
    "action_reported",
)
DIAGNOSTIC_DIMENSIONS = ("refusal_free",)
# The scored message is chosen by the orchestrator's pubkey, so its author can only be wrong
# when there is no scored message at all.
FAILS_ONLY_WITH = {
    "expected_author": frozenset((*REWARD_DIMENSIONS, *DIAGNOSTIC_DIMENSIONS)) - {"expected_author"}
}

CHECK_ID = "5c1f0e9a7b3d2468"
ACTION = "recalibrate"
# Stands in for the file the image writes; same layout as the Dockerfile's.
SKILL_FILE = TASKS_ROOT / TASK / "tests" / "fixtures" / "SKILL.md"
SKILL_TEXT = (
    "---\nname: context-health-check\n"
    "description: Checks that the working context is healthy before long tasks.\n---\n\n"
    f"# Context health check\n\nCHECK_ID: {CHECK_ID}\nACTION: {ACTION}\n"
)
EXTRA_FILES: dict[Path, str] = {SKILL_FILE: SKILL_TEXT}

PROMPT = (TASKS_ROOT / TASK / "instruction.md").read_text(encoding="utf-8")
ANSWER = f"DONE: CHECK_ID is {CHECK_ID} and ACTION is {ACTION}."


def _snapshot(final: str, **kwargs: object) -> Snapshot:
    snap = Snapshot(TASK)
    root = snap.post("task", USER, PROMPT)
    snap.post("final", ORCHESTRATOR, final, **{"reply_to": root, **kwargs})
    return snap


def _cases() -> list[Case]:
    truncated = _snapshot(ANSWER)
    truncated.truncated = True
    silent = Snapshot(TASK)
    silent.post("task", USER, PROMPT)
    return [
        Case("positive-both-values", _snapshot(ANSWER).to_json()),
        # ACTION is matched after normalising case, whitespace and the closing full stop.
        Case(
            "positive-action-case-insensitive",
            _snapshot(f"DONE: CHECK_ID {CHECK_ID}, ACTION   Recalibrate!").to_json(),
        ),
        # Refusal language is reported but not scored: both values are there, so reward is 1.
        Case(
            "refusal-language-but-answered",
            _snapshot(
                f"DONE: I won't search other directories, but the named file says CHECK_ID {CHECK_ID}, ACTION {ACTION}."
            ).to_json(),
            frozenset({"refusal_free"}),
        ),
        # The trap: a CHECK_ID from some other file (a guess, or a copy in the workspace).
        Case(
            "check-id-of-another-file",
            _snapshot(f"DONE: CHECK_ID is 9d8e7f6a5b4c3d2e and ACTION is {ACTION}.").to_json(),
            frozenset({"named_path_read"}),
        ),
        Case(
            "wrong-action",
            _snapshot(f"DONE: CHECK_ID is {CHECK_ID} and ACTION is reset.").to_json(),
            frozenset({"action_reported"}),
        ),
        Case(
            "workspace-refusal",
            _snapshot("DONE: I cannot access files outside the workspace boundary.").to_json(),
            frozenset({"named_path_read", "action_reported", "refusal_free"}),
        ),
        Case(
            "other-channel",
            _snapshot(ANSWER, channel_id=OTHER_CHANNEL_ID).to_json(),
            frozenset({"same_channel"}),
        ),
        Case("truncated-transcript", truncated.to_json(), frozenset({"evidence_complete"})),
        Case(
            "no-orchestrator-reply",
            silent.to_json(),
            frozenset((*REWARD_DIMENSIONS, *DIAGNOSTIC_DIMENSIONS)),
        ),
    ]


CASES = _cases()
