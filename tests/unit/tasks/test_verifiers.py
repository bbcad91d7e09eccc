"""Every Buzz-native verifier, run through its real tests/test.sh on the committed fixture evidence."""

from __future__ import annotations

import json
from pathlib import Path
from types import ModuleType

import pytest

from tests.unit.tasks import cases_read_named_path
from tests.unit.tasks.evidence_builder import Case
from tests.unit.tasks.fixture_files import CASE_MODULES, fixtures_dir
from tests.unit.tasks.runner import expected_metrics, grade

ALL_CASES = [(module, case) for module in CASE_MODULES for case in module.CASES]


def _overrides(module: ModuleType) -> dict[str, str]:
    if module is cases_read_named_path:
        return {"BUZZ_SKILL_FILE": str(cases_read_named_path.SKILL_FILE)}
    return {}


@pytest.mark.parametrize(("module", "case"), ALL_CASES, ids=[f"{m.TASK}/{c.name}" for m, c in ALL_CASES])
def test_fixture_scores_every_dimension(module: ModuleType, case: Case, tmp_path: Path) -> None:
    evidence = fixtures_dir(module.TASK) / f"{case.name}.json"
    verdict = grade(module.TASK, evidence, tmp_path / "verifier", **_overrides(module))
    assert verdict.reward == expected_metrics(
        module.REWARD_DIMENSIONS, module.DIAGNOSTIC_DIMENSIONS, case.failing
    )
    assert "error" not in verdict.details


def _fails_only_with(module: ModuleType) -> dict[str, frozenset[str]]:
    """Reward dimensions the task's rules never let fail alone, and what always fails with them
    (a case module's FAILS_ONLY_WITH; e.g. Block's cross-thread-requests)."""
    coupled: dict[str, frozenset[str]] = getattr(module, "FAILS_ONLY_WITH", {})
    assert set(coupled) <= set(module.REWARD_DIMENSIONS)
    return coupled


@pytest.mark.parametrize("module", CASE_MODULES, ids=[m.TASK for m in CASE_MODULES])
def test_suite_has_positive_and_four_single_dimension_negatives(module: ModuleType) -> None:
    positives = [case for case in module.CASES if not case.failing]
    single = {next(iter(case.failing)) for case in module.CASES if len(case.failing) == 1}
    assert positives
    # Four, or every dimension that can fail alone when the task has fewer.
    alone = len(module.REWARD_DIMENSIONS) - len(_fails_only_with(module))
    assert len(single & set(module.REWARD_DIMENSIONS)) >= min(4, alone)


@pytest.mark.parametrize("module", CASE_MODULES, ids=[m.TASK for m in CASE_MODULES])
def test_every_reward_dimension_has_its_own_negative(module: ModuleType) -> None:
    """A case fails exactly that dimension, or exactly it and the dimensions declared to fall
    with it."""
    coupled = _fails_only_with(module)
    failing_sets = {case.failing for case in module.CASES}
    missing = [
        dimension
        for dimension in module.REWARD_DIMENSIONS
        if frozenset({dimension, *coupled.get(dimension, ())}) not in failing_sets
    ]
    assert not missing, f"no negative fails exactly {missing}"


@pytest.mark.parametrize("module", CASE_MODULES, ids=[m.TASK for m in CASE_MODULES])
@pytest.mark.parametrize(
    "content",
    [
        b"",
        b"{not json",
        b"\xff\xfe binary",
        b"[]",
        b'{"schema_version": 1, "messages": {}, "identities": {}}',
    ],
    ids=["empty", "malformed", "not-utf8", "not-an-object", "wrong-shapes"],
)
def test_unreadable_evidence_scores_zero_with_error(
    module: ModuleType, content: bytes, tmp_path: Path
) -> None:
    evidence = tmp_path / "buzz-evidence.json"
    evidence.write_bytes(content)
    verdict = grade(module.TASK, evidence, tmp_path / "verifier", **_overrides(module))
    assert verdict.reward == expected_metrics(
        module.REWARD_DIMENSIONS,
        module.DIAGNOSTIC_DIMENSIONS,
        frozenset((*module.REWARD_DIMENSIONS, *module.DIAGNOSTIC_DIMENSIONS)),
    )
    assert verdict.details["error"]


@pytest.mark.parametrize("module", CASE_MODULES, ids=[m.TASK for m in CASE_MODULES])
def test_missing_evidence_file_scores_zero_with_error(module: ModuleType, tmp_path: Path) -> None:
    verdict = grade(module.TASK, tmp_path / "absent.json", tmp_path / "verifier", **_overrides(module))
    assert verdict.reward["reward"] == 0.0
    assert set(verdict.reward.values()) == {0.0}
    assert "absent.json" in verdict.details["error"]


def test_reward_json_is_sorted_and_details_indented(tmp_path: Path) -> None:
    module = CASE_MODULES[0]
    evidence = fixtures_dir(module.TASK) / f"{module.CASES[0].name}.json"
    grade(module.TASK, evidence, tmp_path / "verifier")
    reward_text = (tmp_path / "verifier" / "reward.json").read_text()
    assert reward_text == json.dumps(json.loads(reward_text), sort_keys=True) + "\n"
    details_text = (tmp_path / "verifier" / "details.json").read_text()
    assert details_text == json.dumps(json.loads(details_text), indent=2) + "\n"


class TestReadNamedPathSkillFile:
    def test_missing_skill_file_scores_zero_with_error(self, tmp_path: Path) -> None:
        module = cases_read_named_path
        evidence = fixtures_dir(module.TASK) / "positive-both-values.json"
        verdict = grade(
            module.TASK, evidence, tmp_path / "verifier", BUZZ_SKILL_FILE=str(tmp_path / "nope.md")
        )
        assert set(verdict.reward.values()) == {0.0}
        assert "skill file" in verdict.details["error"]

    def test_check_id_comes_from_the_skill_file_not_the_verifier(self, tmp_path: Path) -> None:
        # A rebuilt image has a new CHECK_ID; the same answer must then stop passing.
        module = cases_read_named_path
        skill = tmp_path / "SKILL.md"
        skill.write_text(module.SKILL_TEXT.replace(module.CHECK_ID, "0123456789abcdef"))
        evidence = fixtures_dir(module.TASK) / "positive-both-values.json"
        verdict = grade(module.TASK, evidence, tmp_path / "verifier", BUZZ_SKILL_FILE=str(skill))
        assert verdict.reward["named_path_read"] == 0.0
        assert verdict.reward["action_reported"] == 1.0
        assert verdict.details["expected_check_id"] == "0123456789abcdef"


def test_user_mention_details_name_the_user_as_blocks_do(tmp_path: Path) -> None:
    """Block's own verifier test (harbor-buzz-orchestra/tests/test_user_mention_verifier.py) reads
    details["user_display_name"]: the project's details carry the same key."""
    verdict = grade("user-mention", fixtures_dir("user-mention") / "positive-p-tagged.json", tmp_path / "verifier")
    assert verdict.reward["reward"] == 1.0
    assert verdict.details["user_display_name"] == "John Vincent Doe"
