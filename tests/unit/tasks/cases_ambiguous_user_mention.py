"""Fixture evidence for tasks/ambiguous-user-mention and the dimensions each must fail."""

from __future__ import annotations

import tomllib

from tests.unit.tasks.evidence_builder import ORCHESTRATOR, Case, Identity, Snapshot
from tests.unit.tasks.runner import TASKS_ROOT

TASK = "ambiguous-user-mention"
REWARD_DIMENSIONS = (
    "evidence_complete",
    "target_notified_once",
    "other_not_notified",
    "message_correct",
    "user_callback",
    "reply_to_thread",
)
DIAGNOSTIC_DIMENSIONS: tuple[str, ...] = ()
# Block's delivery is the one message that notifies the target; without exactly one there is no
# delivery to check the text or the thread of.
FAILS_ONLY_WITH = {"target_notified_once": frozenset({"message_correct", "reply_to_thread"})}

OLIVIA = Identity("Olivia Grace Park", "user")
BUZZ = tomllib.loads((TASKS_ROOT / TASK / "task.toml").read_text(encoding="utf-8"))["buzz"]
# The twins exactly as task.toml declares them: one display name, two identity_ids and profiles.
DIRECTORY = [
    Identity(entry["name"], entry["role"], identity_id=entry["identity_id"], about=entry["about"])
    for entry in BUZZ["directory"]
]
CAPTAIN, OBSERVER = DIRECTORY
PROMPT = (TASKS_ROOT / TASK / "instruction.md").read_text(encoding="utf-8")
DELIVERY = "@Taylor Morgan Lee ORCHID-72 approved"
CALLBACK = "@Olivia Grace Park Sent to the matching Taylor Morgan Lee."
THREAD, TOP_LEVEL = "thread", "top-level"


def _snapshot(
    *posts: tuple[str, tuple[Identity, ...]] | tuple[str, tuple[Identity, ...], str],
    directory: list[Identity] = DIRECTORY,
) -> Snapshot:
    """The task, then the orchestrator's posts in order, each (content, notified[, thread])."""
    snap = Snapshot(TASK, identities=[OLIVIA, ORCHESTRATOR], directory=list(directory))
    root = snap.post("task", OLIVIA, PROMPT)
    for index, (content, notified, *rest) in enumerate(posts):
        reply_to = None if rest and rest[0] == TOP_LEVEL else root
        mentions = tuple(identity.pubkey for identity in notified)
        snap.post(f"post-{index}", ORCHESTRATOR, content, reply_to=reply_to, mentions=mentions)
    return snap


def _cases() -> list[Case]:
    delivery = (DELIVERY, (CAPTAIN,))
    callback = (CALLBACK, (OLIVIA,))
    truncated = _snapshot(delivery, callback)
    truncated.truncated = True
    target_coupled = frozenset({"target_notified_once", *FAILS_ONLY_WITH["target_notified_once"]})
    return [
        Case("positive-delivery-then-callback", _snapshot(delivery, callback).to_json()),
        Case(
            "positive-notified-wording",
            _snapshot(
                ("ORCHID-72 approved", (CAPTAIN,)),
                ("Done: the release captain Taylor Morgan Lee has been notified.", (OLIVIA,)),
            ).to_json(),
        ),
        # The trap (block/buzz#4303, #6257): both Taylors notified (Block's case).
        Case(
            "both-taylors-notified",
            _snapshot((DELIVERY, (CAPTAIN, OBSERVER)), callback).to_json(),
            frozenset({"other_not_notified"}),
        ),
        Case(
            "observer-notified-separately",
            _snapshot(delivery, ("@Taylor Morgan Lee FYI", (OBSERVER,)), callback).to_json(),
            frozenset({"other_not_notified"}),
        ),
        # The wrong Taylor: the name resolved to the observer's pubkey.
        Case(
            "wrong-taylor-notified",
            _snapshot((DELIVERY, (OBSERVER,)), callback).to_json(),
            target_coupled | {"other_not_notified"},
        ),
        # The name typed as text notifies nobody.
        Case("name-typed-without-p-tag", _snapshot((DELIVERY, ()), callback).to_json(), target_coupled),
        Case("target-notified-twice", _snapshot(delivery, delivery, callback).to_json(), target_coupled),
        Case(
            "wrong-delivery-text",
            _snapshot(("@Taylor Morgan Lee ORCHID-72 is approved", (CAPTAIN,)), callback).to_json(),
            frozenset({"message_correct"}),
        ),
        Case(
            "callback-not-saying-sent",
            _snapshot(delivery, ("@Olivia Grace Park Done, Taylor has it.", (OLIVIA,))).to_json(),
            frozenset({"user_callback"}),
        ),
        Case("no-callback", _snapshot(delivery).to_json(), frozenset({"user_callback", "reply_to_thread"})),
        # One message notifying both the target and the requester is not a separate callback.
        Case(
            "callback-inside-delivery",
            _snapshot((f"{DELIVERY} (sent, @Olivia Grace Park)", (CAPTAIN, OLIVIA))).to_json(),
            frozenset({"user_callback", "reply_to_thread"}),
        ),
        Case(
            "delivery-top-level",
            _snapshot((DELIVERY, (CAPTAIN,), TOP_LEVEL), callback).to_json(),
            frozenset({"reply_to_thread"}),
        ),
        Case(
            "callback-top-level",
            _snapshot(delivery, (CALLBACK, (OLIVIA,), TOP_LEVEL)).to_json(),
            frozenset({"reply_to_thread"}),
        ),
        Case("truncated-transcript", truncated.to_json(), frozenset({"evidence_complete"})),
        # The harness seeded only one Taylor: the task no longer tests an ambiguity.
        Case(
            "twin-not-seeded",
            _snapshot(delivery, callback, directory=[CAPTAIN]).to_json(),
            frozenset({"evidence_complete"}),
        ),
        Case(
            "no-orchestrator-reply",
            _snapshot().to_json(),
            target_coupled | {"user_callback"},
        ),
    ]


CASES = _cases()
