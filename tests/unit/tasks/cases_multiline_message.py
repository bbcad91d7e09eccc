"""Fixture evidence for tasks/multiline-message and the dimensions each must fail."""

from __future__ import annotations

from tests.unit.tasks.evidence_builder import ORCHESTRATOR, Case, Identity, Snapshot
from tests.unit.tasks.runner import TASKS_ROOT

TASK = "multiline-message"
REWARD_DIMENSIONS = (
    "evidence_complete",
    "layout_preserved",
    "real_newlines",
    "reply_to_thread",
    "user_mentioned",
)
DIAGNOSTIC_DIMENSIONS: tuple[str, ...] = ()

ELEANOR = Identity("Eleanor June Brooks", "user")
PROMPT = (TASKS_ROOT / TASK / "instruction.md").read_text(encoding="utf-8")
UPDATE = (
    "Release readiness\n\n- API: ready\n- Database: ready\n- Rollback: tested\n\nOwner: Platform Operations"
)


def _snapshot(
    final: str | None,
    *,
    ack: bool = False,
    user: Identity = ELEANOR,
    mentions: tuple[str, ...] | None = None,
    top_level: bool = False,
) -> Snapshot:
    snap = Snapshot(TASK, identities=[user, ORCHESTRATOR])
    root = snap.post("task", user, PROMPT)
    if ack:
        snap.post("ack", ORCHESTRATOR, "On it.", reply_to=root, mentions=(user.pubkey,))
    if final is not None:
        snap.post(
            "final",
            ORCHESTRATOR,
            final,
            reply_to=None if top_level else root,
            mentions=(user.pubkey,) if mentions is None else mentions,
        )
    return snap


def _cases() -> list[Case]:
    truncated = _snapshot(UPDATE)
    truncated.truncated = True
    return [
        Case("positive-exact-update", _snapshot(UPDATE).to_json()),
        Case(
            "positive-with-greeting",
            _snapshot(f"@Eleanor June Brooks here is the update:\n\n{UPDATE}").to_json(),
        ),
        # The trap (block/buzz#5787): the shell call passed `\n` through as two characters, so the
        # message is one line with literal escapes; the block is not there either.
        Case(
            "escaped-newlines",
            _snapshot(UPDATE.replace("\n", "\\n")).to_json(),
            frozenset({"layout_preserved", "real_newlines"}),
        ),
        # Truncated at the first newline: only the heading arrived.
        Case(
            "first-line-only",
            _snapshot("Release readiness").to_json(),
            frozenset({"layout_preserved", "real_newlines"}),
        ),
        # The block is intact, but a literal `\n` rode along after it.
        Case(
            "trailing-escaped-newline",
            _snapshot(f"{UPDATE}\\n").to_json(),
            frozenset({"real_newlines"}),
        ),
        # Real newlines throughout, but the blank line under the heading was lost.
        Case(
            "blank-line-dropped",
            _snapshot(
                "@Eleanor June Brooks here is the update:\n\n"
                + UPDATE.replace("readiness\n\n", "readiness\n")
            ).to_json(),
            frozenset({"layout_preserved"}),
        ),
        Case(
            "bullets-as-table",
            _snapshot(
                "Release readiness\n\n| Area | Status |\n|---|---|\n| API | ready |\n"
                "| Database | ready |\n| Rollback | tested |\n\nOwner: Platform Operations"
            ).to_json(),
            frozenset({"layout_preserved"}),
        ),
        Case("top-level-update", _snapshot(UPDATE, top_level=True).to_json(), frozenset({"reply_to_thread"})),
        # "@Eleanor June Brooks" typed as text with no `p` tag notifies nobody.
        Case(
            "at-text-without-p-tag",
            _snapshot(f"@Eleanor June Brooks\n{UPDATE}", mentions=()).to_json(),
            frozenset({"user_mentioned"}),
        ),
        Case(
            "p-tags-the-orchestrator",
            _snapshot(UPDATE, mentions=(ORCHESTRATOR.pubkey,)).to_json(),
            frozenset({"user_mentioned"}),
        ),
        # An extra post: Block's rule is exactly one orchestrator message.
        Case("ack-then-update", _snapshot(UPDATE, ack=True).to_json(), frozenset({"evidence_complete"})),
        Case("truncated-transcript", truncated.to_json(), frozenset({"evidence_complete"})),
        # The user is looked up by the display name the task declares.
        Case(
            "user-display-name-not-seeded",
            _snapshot(UPDATE, user=Identity("user", "user")).to_json(),
            frozenset({"evidence_complete", "user_mentioned"}),
        ),
        Case("no-orchestrator-reply", _snapshot(None).to_json(), frozenset(REWARD_DIMENSIONS)),
    ]


CASES = _cases()
