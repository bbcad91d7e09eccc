"""The committed fixture files under tasks/<task>/tests/fixtures/, generated from the case modules.

Regenerate after changing a case: `.venv/bin/python -m tests.unit.tasks.fixture_files` from the
repository root. test_fixture_files.py fails when the committed files drift from the cases.
"""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

from tests.unit.tasks import (
    cases_ambiguous_user_mention,
    cases_create_channel_invite_users,
    cases_cross_thread_requests,
    cases_interleaved_agent_reports,
    cases_multiline_message,
    cases_narrative_agent_names,
    cases_read_named_path,
    cases_reply_to_thread,
    cases_user_mention,
)
from tests.unit.tasks.evidence_builder import dump
from tests.unit.tasks.runner import TASKS_ROOT

CASE_MODULES: tuple[ModuleType, ...] = (
    cases_reply_to_thread,
    cases_user_mention,
    cases_create_channel_invite_users,
    cases_read_named_path,
    cases_multiline_message,
    cases_narrative_agent_names,
    cases_interleaved_agent_reports,
    cases_cross_thread_requests,
    cases_ambiguous_user_mention,
)


def fixtures_dir(task: str) -> Path:
    return TASKS_ROOT / task / "tests" / "fixtures"


def expected_files() -> dict[Path, str]:
    files: dict[Path, str] = {}
    for module in CASE_MODULES:
        for case in module.CASES:
            files[fixtures_dir(module.TASK) / f"{case.name}.json"] = dump(case.evidence)
        files.update(getattr(module, "EXTRA_FILES", {}))
    return files


def main() -> None:
    for path, text in expected_files().items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        print(path)


if __name__ == "__main__":
    main()
