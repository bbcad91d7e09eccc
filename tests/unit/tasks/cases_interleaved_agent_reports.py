"""Fixture evidence for tasks/interleaved-agent-reports and the dimensions each must fail."""

from __future__ import annotations

import tomllib
from typing import Any

from tests.unit.tasks.evidence_builder import ORCHESTRATOR, Case, Identity, Snapshot
from tests.unit.tasks.runner import TASKS_ROOT

TASK = "interleaved-agent-reports"
REWARD_DIMENSIONS = (
    "evidence_complete",
    "reports_delivered",
    "inputs_complete",
    "answer_correct",
    "single_human_callback",
    "reporters_not_rementioned",
    "reply_to_thread",
)
DIAGNOSTIC_DIMENSIONS: tuple[str, ...] = ()

NORA = Identity("Nora Isabel Grant", "user")
BUZZ = tomllib.loads((TASKS_ROOT / TASK / "task.toml").read_text(encoding="utf-8"))["buzz"]
# The reporters and their reports exactly as task.toml declares them for the harness.
DIRECTORY = [Identity(entry["name"], entry["role"]) for entry in BUZZ["directory"]]
LEDGER, RISK, OPS = DIRECTORY
SCRIPTED: list[dict[str, Any]] = BUZZ["scripted_messages"]
PROMPT = (TASKS_ROOT / TASK / "instruction.md").read_text(encoding="utf-8")
SYNTHESIS = (
    "@Nora Isabel Grant Forecast synthesis:\n"
    "- North: 17\n- South: 23\n- Reserve: 11\n- Multiplier: 3\n\n"
    "Final value: (17 + 23 - 11) * 3 = 87"
)
# Block's positive answer: markdown bold around the labels and the result.
BOLD_SYNTHESIS = (
    "- **North:** 17\n- **South:** 23\n- **reserve:** 11\n- **multiplier:** 3\n\n(17 + 23 − 11) × 3 = **87**"
)


def _snapshot(
    final: str | None,
    *,
    mentions: tuple[str, ...] = (NORA.pubkey,),
    before: tuple[tuple[str, tuple[str, ...]], ...] = (),
    top_level: bool = False,
    directory: list[Identity] = DIRECTORY,
    scripted: list[dict[str, Any]] = SCRIPTED,
    undelivered: frozenset[str] = frozenset(),
) -> Snapshot:
    snap = Snapshot(TASK, identities=[NORA, ORCHESTRATOR], directory=list(directory))
    root = snap.post("task", NORA, PROMPT)
    for message in scripted:
        snap.script(message, delivered=message["label"] not in undelivered)
    for index, (content, tagged) in enumerate(before):
        snap.post(f"before-{index}", ORCHESTRATOR, content, reply_to=root, mentions=tagged)
    if final is not None:
        snap.post("final", ORCHESTRATOR, final, reply_to=None if top_level else root, mentions=mentions)
    return snap


def _cases() -> list[Case]:
    truncated = _snapshot(SYNTHESIS)
    truncated.truncated = True
    return [
        Case("positive-labelled-synthesis", _snapshot(SYNTHESIS).to_json()),
        Case("positive-bold-markdown", _snapshot(BOLD_SYNTHESIS).to_json()),
        Case(
            "positive-one-line",
            _snapshot("North 17; South 23; reserve 11; multiplier 3; final forecast 87.").to_json(),
        ),
        # The trap (block/buzz#5839, #4942): answered from the first report of the batch. The
        # final value happens to be labelled, so only the inputs fail.
        Case(
            "inputs-dropped",
            _snapshot("North 17; final forecast 87.").to_json(),
            frozenset({"inputs_complete"}),
        ),
        # The risk report was lost: no reserve, and (17 + 23) * 3 = 120.
        Case(
            "reserve-report-lost",
            _snapshot("North 17, South 23, multiplier 3. Final value: 120").to_json(),
            frozenset({"inputs_complete", "answer_correct"}),
        ),
        Case(
            "wrong-final-value",
            _snapshot("North 17, South 23, reserve 11, multiplier 3. Final value: 81").to_json(),
            frozenset({"answer_correct"}),
        ),
        # 87 with no label before it is not read as the final value.
        Case(
            "unlabelled-final-value",
            _snapshot("North 17, South 23, reserve 11, multiplier 3 -> 87").to_json(),
            frozenset({"answer_correct"}),
        ),
        Case(
            "no-user-mention",
            _snapshot(SYNTHESIS, mentions=()).to_json(),
            frozenset({"single_human_callback"}),
        ),
        # Two callbacks: an acknowledgement that notified the user, then the synthesis; the
        # second post also fails Block's one-message rule.
        Case(
            "user-notified-twice",
            _snapshot(
                SYNTHESIS, before=(("@Nora Isabel Grant waiting for the reports.", (NORA.pubkey,)),)
            ).to_json(),
            frozenset({"single_human_callback", "evidence_complete"}),
        ),
        Case(
            "reporter-p-tagged",
            _snapshot(SYNTHESIS, mentions=(NORA.pubkey, LEDGER.pubkey)).to_json(),
            frozenset({"reporters_not_rementioned"}),
        ),
        Case(
            "reporter-at-named",
            _snapshot(SYNTHESIS + "\nThanks @Risk Sentinel.").to_json(),
            frozenset({"reporters_not_rementioned"}),
        ),
        # Block's bad wake: a thank-you to a reporter before the synthesis.
        Case(
            "reporter-woken-before-synthesis",
            _snapshot(SYNTHESIS, before=(("@Ledger Scout thanks", (LEDGER.pubkey,)),)).to_json(),
            frozenset({"reporters_not_rementioned", "evidence_complete"}),
        ),
        Case(
            "top-level-synthesis",
            _snapshot(SYNTHESIS, top_level=True).to_json(),
            frozenset({"reply_to_thread"}),
        ),
        # An extra post: Block's rule is exactly one orchestrator message.
        Case(
            "ack-then-synthesis",
            _snapshot(SYNTHESIS, before=(("Waiting for all three reports.", ()),)).to_json(),
            frozenset({"evidence_complete"}),
        ),
        Case("truncated-transcript", truncated.to_json(), frozenset({"evidence_complete"})),
        # Harness health: a report was published but is not in the transcript, or never sent.
        Case(
            "report-missing-from-transcript",
            _snapshot(SYNTHESIS, undelivered=frozenset({"risk-report"})).to_json(),
            frozenset({"reports_delivered"}),
        ),
        Case(
            "report-not-scripted",
            _snapshot(SYNTHESIS, scripted=SCRIPTED[:2]).to_json(),
            frozenset({"reports_delivered"}),
        ),
        # A reporter was not seeded: no pubkeys for Block's three-reporter check either.
        Case(
            "reporter-not-seeded",
            _snapshot(SYNTHESIS, directory=[LEDGER, RISK], scripted=SCRIPTED[:2]).to_json(),
            frozenset({"evidence_complete", "reports_delivered", "reporters_not_rementioned"}),
        ),
        Case(
            "no-orchestrator-reply",
            _snapshot(None).to_json(),
            frozenset(REWARD_DIMENSIONS) - {"reports_delivered", "reporters_not_rementioned"},
        ),
    ]


CASES = _cases()
