"""Fixture evidence for tasks/narrative-agent-names and the dimensions each must fail."""

from __future__ import annotations

from tests.unit.tasks.evidence_builder import ORCHESTRATOR, Case, Identity, Snapshot
from tests.unit.tasks.runner import TASKS_ROOT

TASK = "narrative-agent-names"
REWARD_DIMENSIONS = (
    "evidence_complete",
    "status_correct",
    "bots_not_mentioned",
    "user_mentioned",
    "reply_to_thread",
)
DIAGNOSTIC_DIMENSIONS: tuple[str, ...] = ()

MAYA = Identity("Maya Elise Chen", "user")
AURORA = Identity("Aurora Audit Bot", "bot")
BEACON = Identity("Beacon Deploy Bot", "bot")
DIRECTORY = [AURORA, BEACON]
PROMPT = (TASKS_ROOT / TASK / "instruction.md").read_text(encoding="utf-8")
STATUS = "Aurora Audit Bot completed the audit.\nBeacon Deploy Bot remains idle."


def _snapshot(
    final: str | None,
    *,
    mentions: tuple[str, ...] = (MAYA.pubkey,),
    before: tuple[tuple[str, tuple[str, ...]], ...] = (),
    top_level: bool = False,
    directory: list[Identity] = DIRECTORY,
) -> Snapshot:
    snap = Snapshot(TASK, identities=[MAYA, ORCHESTRATOR], directory=list(directory))
    root = snap.post("task", MAYA, PROMPT)
    for index, (content, tagged) in enumerate(before):
        snap.post(f"before-{index}", ORCHESTRATOR, content, reply_to=root, mentions=tagged)
    if final is not None:
        snap.post("final", ORCHESTRATOR, final, reply_to=None if top_level else root, mentions=mentions)
    return snap


def _cases() -> list[Case]:
    truncated = _snapshot(STATUS)
    truncated.truncated = True
    return [
        Case("positive-two-lines", _snapshot(f"@Maya Elise Chen here is the status:\n{STATUS}").to_json()),
        Case(
            "positive-bullets",
            _snapshot("- Aurora Audit Bot completed the audit.\n- Beacon Deploy Bot remains idle.").to_json(),
        ),
        # The trap (block/buzz#5176): naming a bot with a `p` tag wakes it, though it has no work.
        Case(
            "bot-p-tagged",
            _snapshot(STATUS, mentions=(MAYA.pubkey, AURORA.pubkey)).to_json(),
            frozenset({"bots_not_mentioned"}),
        ),
        # `@Name` in the text counts as a wake-up even without a tag.
        Case(
            "at-bot-names-in-text",
            _snapshot("@Aurora Audit Bot completed the audit.\n@Beacon Deploy Bot remains idle.").to_json(),
            frozenset({"bots_not_mentioned"}),
        ),
        # An earlier message woke a bot; the final status is clean. Every orchestrator message
        # is checked, and a second one also fails Block's one-message rule.
        Case(
            "earlier-message-woke-a-bot",
            _snapshot(STATUS, before=(("@Aurora Audit Bot please check", (AURORA.pubkey,)),)).to_json(),
            frozenset({"bots_not_mentioned", "evidence_complete"}),
        ),
        Case(
            "swapped-status",
            _snapshot("Aurora Audit Bot remains idle.\nBeacon Deploy Bot completed the audit.").to_json(),
            frozenset({"status_correct"}),
        ),
        Case(
            "one-bot-left-out",
            _snapshot("Aurora Audit Bot completed the audit.").to_json(),
            frozenset({"status_correct"}),
        ),
        Case("no-user-mention", _snapshot(STATUS, mentions=()).to_json(), frozenset({"user_mentioned"})),
        Case("top-level-status", _snapshot(STATUS, top_level=True).to_json(), frozenset({"reply_to_thread"})),
        # An extra post: Block's rule is exactly one orchestrator message.
        Case(
            "ack-then-status",
            _snapshot(STATUS, before=(("On it.", (MAYA.pubkey,)),)).to_json(),
            frozenset({"evidence_complete"}),
        ),
        Case("truncated-transcript", truncated.to_json(), frozenset({"evidence_complete"})),
        # The harness seeded one bot, not two: a health failure, and no bot pubkeys to check.
        Case(
            "one-bot-not-seeded",
            _snapshot(STATUS, directory=[AURORA]).to_json(),
            frozenset({"evidence_complete", "bots_not_mentioned"}),
        ),
        # Silence wakes nobody, so bots_not_mentioned alone holds.
        Case(
            "no-orchestrator-reply",
            _snapshot(None).to_json(),
            frozenset(REWARD_DIMENSIONS) - {"bots_not_mentioned"},
        ),
    ]


CASES = _cases()
