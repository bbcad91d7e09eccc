"""The five Buzz-native tasks of block/buzz #6448, recognised from their instruction text alone
(never the task's name), with what each answer needs. The texts are Block's instruction.md
verbatim; where the project's own copy under tasks/ exists it must be recognised the same way."""

from __future__ import annotations

from pathlib import Path

import pytest
from buzz_operator.dev.agent.tasks import (
    AmbiguousMention,
    InterleavedReports,
    LabelledCalculation,
    Message,
    MultilineMessage,
    NarrativeStatus,
    Projection,
    evaluate,
    recognise,
    requests_of,
    strip_mention,
)

from tests.unit.agent.suite_trial import (
    AMBIGUOUS,
    BETA,
    BLOCK_TEXTS,
    CROSS_THREAD,
    INTERLEAVED,
    MULTILINE,
    NARRATIVE,
    RELEASE,
    REPORTS,
)

TASKS = Path(__file__).resolve().parents[3] / "tasks"

def test_multiline_message_keeps_the_body_exactly() -> None:
    task = recognise(MULTILINE)
    assert task == MultilineMessage(RELEASE)
    assert task.answer() == RELEASE and task.answer().count("\n") == 6
    assert task.escaped() == RELEASE.replace("\n", "\\n") and "\n" not in task.escaped()


def test_narrative_status_names_both_bots_in_plain_text() -> None:
    task = recognise(NARRATIVE)
    assert task == NarrativeStatus(("Aurora Audit Bot completed the audit.", "Beacon Deploy Bot remains idle."),
                                   ("Aurora Audit Bot", "Beacon Deploy Bot"))
    assert "@" not in task.answer() and task.answer().count("\n") == 1
    assert task.at_named() == "@Aurora Audit Bot completed the audit.\n@Beacon Deploy Bot remains idle."


def test_interleaved_reports_waits_for_every_input_then_computes() -> None:
    task = recognise(INTERLEAVED)
    assert task == InterleavedReports("(North + South - reserve) * multiplier",
                                      ("North", "South", "reserve", "multiplier"), 3)
    assert task.values([INTERLEAVED]) == {}  # the formula itself states no value
    partial = task.values(list(REPORTS[:2]))
    assert partial == {"North": 17, "South": 23, "reserve": 11} and not task.complete(partial)
    values = task.values(list(REPORTS))
    assert task.complete(values) and task.result(values) == 87
    assert task.answer(values).splitlines() == ["North: 17", "South: 23", "Reserve: 11", "Multiplier: 3",
                                                "Final value: (17 + 23 - 11) * 3 = 87"]
    assert not any(ch.isdigit() for ch in task.partial({}))  # naive's answer carries no value at all


def test_labelled_calculations_alpha_and_beta() -> None:
    alpha, beta = recognise(CROSS_THREAD), recognise(BETA)
    assert alpha == LabelledCalculation("ALPHA", "(17 * 19) + 23") and alpha.answer() == "ALPHA result: 346"
    assert beta == LabelledCalculation("BETA", "(84 / 7) + 29") and beta.answer() == "BETA result: 41"
    assert "BETA" not in alpha.answer() and "ALPHA" not in beta.answer()


def test_ambiguous_mention_picks_by_profile_about() -> None:
    task = recognise(AMBIGUOUS)
    assert task == AmbiguousMention("Taylor Morgan Lee", "Routing code ORCHID-72", "ORCHID-72 approved")
    profiles = [("a" * 64, "Taylor Morgan Lee", "Release captain. Routing code ORCHID-72."),
                ("b" * 64, "Taylor Morgan Lee", "Compliance observer. Routing code COBALT-19."),
                ("c" * 64, "Olivia Grace Park", "Routing code ORCHID-72")]
    assert task.picks(profiles) == ["a" * 64]
    assert task.namesakes(profiles) == ["a" * 64, "b" * 64]
    assert "sent" in task.answer().casefold() and "@" not in task.answer()


@pytest.mark.parametrize("text", BLOCK_TEXTS.values(), ids=BLOCK_TEXTS.keys())
def test_the_old_recognisers_do_not_claim_the_new_tasks(text: str) -> None:
    assert type(recognise(text)).__name__ in {"MultilineMessage", "NarrativeStatus", "InterleavedReports",
                                               "LabelledCalculation", "AmbiguousMention"}


@pytest.mark.parametrize("name", BLOCK_TEXTS)
def test_the_projects_task_copies_are_recognised_alike(name: str) -> None:
    path = TASKS / name / "instruction.md"
    assert recognise(path.read_text(encoding="utf-8")) == recognise(BLOCK_TEXTS[name])


def test_reports_are_inputs_to_the_request_whose_thread_they_reply_into() -> None:
    task = Message("t" * 64, "u" * 64, f"@solo-1 {INTERLEAVED}")
    reports = [Message(str(i) * 64, "r" * 64, text, root_id="t" * 64) for i, text in enumerate(REPORTS)]
    stray = Message("s" * 64, "r" * 64, "@solo-1 thanks!", root_id="x" * 64)  # a thread never seen
    beta = Message("b" * 64, "u" * 64, f"@solo-1 {BETA}")
    messages = [task, *reports, task, stray, beta]  # the task delivered twice (re-rendered)
    requests = requests_of(messages, lambda text: strip_mention(text, "solo-1"))
    assert [r.message.event_id for r in requests] == ["t" * 64, "b" * 64]
    assert requests[0].inputs == reports and isinstance(requests[0].task, InterleavedReports)
    assert isinstance(requests[1].task, LabelledCalculation)


@pytest.mark.parametrize(("expression", "value"), [
    ("(17 * 19) + 23", 346), ("(84 / 7) + 29", 41), ("2 - -3", 5), ("1.5 * 2", 3.0), ("10 - 2 - 3", 5),
])
def test_evaluate_is_plain_arithmetic(expression: str, value: float) -> None:
    assert evaluate(expression) == value


@pytest.mark.parametrize("expression", ["__import__('os')", "2 ** 3", "(1 + 2", "1 +"])
def test_evaluate_refuses_anything_else(expression: str) -> None:
    with pytest.raises(ValueError):
        evaluate(expression)


def test_a_projection_is_not_taken_for_a_new_task() -> None:
    text = (TASKS / "reply-to-thread" / "instruction.md").read_text(encoding="utf-8")
    assert isinstance(recognise(text), Projection)
