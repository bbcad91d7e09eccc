"""The stand-in recognises tasks from instruction text alone and computes the verified answers."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from buzz_operator.dev.agent.policies import POLICIES
from buzz_operator.dev.agent.prompt import parse_team
from buzz_operator.dev.agent.tasks import (
    ChannelInvite,
    HelloFile,
    LicenseTotal,
    NamedPath,
    Projection,
    SavedOutput,
    recognise,
    strip_mention,
)

TASKS = Path(__file__).resolve().parents[3] / "tasks"
SEED_PROJECTION = """Prepare a six-month financial projection using these assumptions:

- Month 0 revenue is $120,000 and expenses are $75,000.
- Revenue grows by 5% each month.
- Expenses grow by 2% each month.
- Project months 1 through 6, compounding each month from the prior month.

Reply with the month 6 revenue, month 6 expenses, and cumulative operating
profit across months 1 through 6. Round each result to the nearest dollar.
"""
SEED_NAMED_PATH = ("Read the explicitly named file `~/.claude/skills/context-health-check/SKILL.md`. "
                   "Report its exact `CHECK_ID` and `ACTION` values in one concise sentence. "
                   "Do not search other directories.")


def _instruction(task: str) -> str:
    path = TASKS / task / "instruction.md"
    if not path.exists():
        pytest.fail(f"task fixture missing: {path}")
    return path.read_text(encoding="utf-8")


@pytest.mark.parametrize("text", [SEED_PROJECTION, "reply-to-thread"])
def test_projection(text: str) -> None:
    task = recognise(_instruction(text) if text == "reply-to-thread" else text)
    assert isinstance(task, Projection)
    assert task.results() == (160811, 84462, 374470)
    lines = task.answer().splitlines()
    assert len(lines) == 3 and "revenue" in lines[0] and "160,811" in lines[0]
    assert "expenses" in lines[1] and "84,462" in lines[1]
    assert re.search(r"cumulative operating profit.*374,470", lines[2], re.IGNORECASE)


def test_license_total_from_task_instruction() -> None:
    task = recognise(_instruction("user-mention"))
    assert isinstance(task, LicenseTotal)
    assert task.total() == 5328
    assert "5,328" in task.answer()


def test_channel_invite_from_task_instruction() -> None:
    task = recognise(_instruction("create-channel-invite-users"))
    assert isinstance(task, ChannelInvite)
    assert task.name == "fix-pr-1234"
    assert task.ttl_seconds == 3600
    assert task.members == [
        ("benchmark-user-07", "member"), ("benchmark-user-19", "member"), ("benchmark-user-42", "member"),
        ("benchmark-bot-03", "bot"), ("benchmark-bot-08", "bot"),
    ]


def test_named_path_and_its_fields() -> None:
    task = recognise(SEED_NAMED_PATH)
    assert task == NamedPath("~/.claude/skills/context-health-check/SKILL.md")
    skill = "# skill\nCHECK_ID: ab12cd\nACTION: Rotate the staging keys.\n"
    assert NamedPath.fields(skill) == ("ab12cd", "Rotate the staging keys.")
    answer = task.answer(skill)
    assert "ab12cd" in answer and "Rotate the staging keys." in answer


def test_hello_file() -> None:
    assert recognise(_instruction("hello-file")) == HelloFile("hello.txt", "Hello, world!")
    assert recognise("Create a file at `/app/hello.txt` whose content is exactly `Howdy`.") == HelloFile(
        "hello.txt", "Howdy")
    assert recognise('Write "hi there" to hello.txt') == HelloFile("hello.txt", "hi there")


def test_saved_output_names_its_command_and_file() -> None:
    text = "Run `python3 -c 'print(2 ** 10)'` in a shell and save what it prints to `/app/hello.txt`."
    assert recognise(text) == SavedOutput("python3 -c 'print(2 ** 10)'", "/app/hello.txt")
    assert SavedOutput("true", "/app/x").answer(0).startswith("Ran the command")
    assert "exit 137" in SavedOutput("true", "/app/x").answer(137)
    # a file named without a command to run is still hello-file's
    assert isinstance(recognise("Write what it prints to `/app/hello.txt`"), HelloFile)


def test_unrecognised_instruction() -> None:
    assert recognise("Please summarise the meeting notes.") is None


def test_strip_mention() -> None:
    assert strip_mention("@solo-1 Do the thing", "solo-1") == "Do the thing"
    assert strip_mention("Do the thing", "solo-1") == "Do the thing"


def test_team_block_parsing() -> None:
    prompt = (
        "persona\n## Your team\n\nYou are `lead-1` (pubkey `" + "a" * 64 + "`).\n"
        "The team coordinates in Buzz channel `c`.\n"
        "Tasks come from the user `user` (pubkey `" + "b" * 64 + "`); address your final report to them.\n"
        "| Name | Role | Pubkey |\n|------|------|--------|\n| worker-1 | implementer | `" + "c" * 64 + "` |\n"
    )
    team = parse_team(prompt)
    assert (team.name, team.pubkey, team.user_name, team.user_pubkey) == ("lead-1", "a" * 64, "user", "b" * 64)
    assert [(m.name, m.role, m.pubkey) for m in team.teammates] == [("worker-1", "implementer", "c" * 64)]
    assert parse_team("solo persona").teammates == []


def test_policy_registry() -> None:
    assert set(POLICIES) == {"oracle", "team", "toplevel", "naive", "silent", "crash", "hang", "leaky"}
    assert all(cls.name == name for name, cls in POLICIES.items())
    assert POLICIES["toplevel"].threaded is False and POLICIES["oracle"].threaded is True
    assert POLICIES["naive"].naive is True and POLICIES["naive"].threaded is True and POLICIES["oracle"].naive is False
