"""Fixture evidence for tasks/cross-thread-requests and the dimensions each must fail."""

from __future__ import annotations

import tomllib

from tests.unit.tasks.evidence_builder import ORCHESTRATOR, Case, Identity, Snapshot
from tests.unit.tasks.runner import TASKS_ROOT

TASK = "cross-thread-requests"
REWARD_DIMENSIONS = (
    "evidence_complete",
    "alpha_correct",
    "beta_correct",
    "thread_isolation",
    "user_mentioned_twice",
)
DIAGNOSTIC_DIMENSIONS: tuple[str, ...] = ()
# Block's thread_isolation and user_mentioned_twice both require the ALPHA and the BETA reply,
# so a missing or wrong answer to either request always fails those two with it.
FAILS_ONLY_WITH = {
    "alpha_correct": frozenset({"thread_isolation", "user_mentioned_twice"}),
    "beta_correct": frozenset({"thread_isolation", "user_mentioned_twice"}),
}

PRIYA = Identity("Priya Simone Patel", "user")
BUZZ = tomllib.loads((TASKS_ROOT / TASK / "task.toml").read_text(encoding="utf-8"))["buzz"]
(BETA_REQUEST,) = BUZZ["scripted_messages"]
PROMPT = (TASKS_ROOT / TASK / "instruction.md").read_text(encoding="utf-8")
ALPHA = "@Priya Simone Patel ALPHA result: 346"
BETA = "@Priya Simone Patel BETA result: 41"
BOTH = "@Priya Simone Patel ALPHA: 346; BETA: 41"
ALPHA_THREAD, BETA_THREAD, TOP_LEVEL = "alpha", "beta", "top-level"
ALPHA_COUPLED = frozenset({"alpha_correct", *FAILS_ONLY_WITH["alpha_correct"]})
BETA_COUPLED = frozenset({"beta_correct", *FAILS_ONLY_WITH["beta_correct"]})


def _snapshot(
    *replies: tuple[str, str] | tuple[str, str, tuple[str, ...]], record_beta: bool = True
) -> Snapshot:
    """The ALPHA task, the harness's BETA request, then the orchestrator's replies in order, each
    (thread, content[, mentions]); mentions default to the user."""
    snap = Snapshot(TASK, identities=[PRIYA, ORCHESTRATOR])
    alpha_root = snap.post("task", PRIYA, PROMPT)
    if record_beta:
        beta_root = snap.script(BETA_REQUEST)
    else:
        # Published, but the harness did not record it in scripted_events.
        content = BETA_REQUEST["content"].replace("{orchestrator}", ORCHESTRATOR.name)
        beta_root = snap.post("scripted:beta-request", PRIYA, content, mentions=(ORCHESTRATOR.pubkey,))
    roots = {ALPHA_THREAD: alpha_root, BETA_THREAD: beta_root, TOP_LEVEL: None}
    for index, (thread, content, *rest) in enumerate(replies):
        mentions = rest[0] if rest else (PRIYA.pubkey,)
        snap.post(f"reply-{index}", ORCHESTRATOR, content, reply_to=roots[thread], mentions=mentions)
    return snap


def _cases() -> list[Case]:
    truncated = _snapshot((ALPHA_THREAD, ALPHA), (BETA_THREAD, BETA))
    truncated.truncated = True
    return [
        Case("positive-two-threads", _snapshot((ALPHA_THREAD, ALPHA), (BETA_THREAD, BETA)).to_json()),
        Case("positive-beta-first", _snapshot((BETA_THREAD, BETA), (ALPHA_THREAD, ALPHA)).to_json()),
        # The trap (block/buzz#5839): both answers in one message, in the BETA thread (Block's case).
        Case("combined-in-beta-thread", _snapshot((BETA_THREAD, BOTH)).to_json(), ALPHA_COUPLED),
        Case("combined-in-alpha-thread", _snapshot((ALPHA_THREAD, BOTH)).to_json(), BETA_COUPLED),
        # Each thread got a reply, but each reply carries both answers.
        Case(
            "both-answers-in-both-threads",
            _snapshot((ALPHA_THREAD, BOTH), (BETA_THREAD, BOTH)).to_json(),
            frozenset({"thread_isolation"}),
        ),
        # An extra post between the two answers (Block's case): exactly two are allowed.
        Case(
            "extra-summary-post",
            _snapshot(
                (ALPHA_THREAD, ALPHA), (ALPHA_THREAD, "Both requests handled"), (BETA_THREAD, BETA)
            ).to_json(),
            frozenset({"thread_isolation"}),
        ),
        # Wrong routing (block/buzz#4072): the BETA answer replies to the ALPHA thread, or to none.
        Case(
            "beta-answered-in-alpha-thread",
            _snapshot((ALPHA_THREAD, ALPHA), (ALPHA_THREAD, BETA)).to_json(),
            BETA_COUPLED,
        ),
        Case(
            "beta-answered-top-level",
            _snapshot((ALPHA_THREAD, ALPHA), (TOP_LEVEL, BETA)).to_json(),
            BETA_COUPLED,
        ),
        Case(
            "alpha-wrong-value",
            _snapshot((ALPHA_THREAD, "@Priya Simone Patel ALPHA result: 345"), (BETA_THREAD, BETA)).to_json(),
            ALPHA_COUPLED,
        ),
        Case(
            "beta-unlabelled",
            _snapshot((ALPHA_THREAD, ALPHA), (BETA_THREAD, "@Priya Simone Patel the result is 41")).to_json(),
            BETA_COUPLED,
        ),
        Case(
            "beta-without-user-mention",
            _snapshot((ALPHA_THREAD, ALPHA), (BETA_THREAD, "BETA result: 41", ())).to_json(),
            frozenset({"user_mentioned_twice"}),
        ),
        Case("truncated-transcript", truncated.to_json(), frozenset({"evidence_complete"})),
        # Harness health: with no recorded beta-request there is no BETA thread to grade against.
        Case(
            "beta-request-not-recorded",
            _snapshot((ALPHA_THREAD, ALPHA), (BETA_THREAD, BETA), record_beta=False).to_json(),
            frozenset({"evidence_complete"}) | BETA_COUPLED,
        ),
        # Block's evidence_complete does not need a reply; everything else does.
        Case("no-orchestrator-reply", _snapshot().to_json(), ALPHA_COUPLED | BETA_COUPLED),
    ]


CASES = _cases()
