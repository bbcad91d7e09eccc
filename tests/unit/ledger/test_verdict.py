"""Verifier health (docs/failures.md#verifier-health), outcome classes (docs/failures.md#outcome-words), resume (docs/failures.md#resume), rewards (docs/harbor.md)."""

from __future__ import annotations

from pathlib import Path

import pytest
from buzz_operator.ledger import (
    RewardFileEmptyError,
    RewardFileNotFoundError,
    VerifierOutputParseError,
    classify_outcome,
    read_rewards,
    reward_value,
    round_capped,
    trial_scored,
    verifier_broken,
)


def verifier_stdout(trial: Path, text: str) -> None:
    (trial / "verifier").mkdir(parents=True, exist_ok=True)
    (trial / "verifier" / "test-stdout.txt").write_text(text, encoding="utf-8")


@pytest.mark.parametrize(
    "marker",
    [
        "error: invalid peer certificate: UnknownIssuer",
        "SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed",
        "bash: pytest: command not found",
        "ModuleNotFoundError: No module named pytest",
        "E: Unable to locate package curl",
    ],
)
def test_verifier_broken_markers(tmp_path: Path, marker: str) -> None:
    verifier_stdout(tmp_path, f"collecting...\n{marker}\n")
    assert verifier_broken(tmp_path)


def test_verifier_not_broken(tmp_path: Path) -> None:
    assert not verifier_broken(tmp_path)  # no output is not evidence
    verifier_stdout(tmp_path, "1 failed, 3 passed\n")
    assert not verifier_broken(tmp_path)


def test_classify_outcome() -> None:
    assert classify_outcome(None) == "ok"
    assert classify_outcome({}) == "ok"
    assert classify_outcome({"exception_type": "AgentTimeoutError", "exception_message": ""}) == "timeout"
    assert classify_outcome({"exception_type": "RuntimeLaunchError", "exception_message": "x"}) == "launch"
    assert classify_outcome({"exception_type": "RuntimeError", "exception_message": "stack failed to start"}) == "launch"
    assert classify_outcome({"exception_type": "ValueError", "exception_message": "bad"}) == "error"


def test_trial_scored_for_resume(tmp_path: Path) -> None:
    ok = {"exception_info": None, "verifier_result": {"rewards": {"reward": 0}}}
    assert trial_scored(ok, tmp_path)
    timed_out = {"exception_info": {"exception_type": "AgentTimeoutError"}, "verifier_result": {"rewards": {"reward": 0.0}}}
    assert trial_scored(timed_out)  # the zero stands: re-running failures would inflate the score
    crashed = {"exception_info": {"exception_type": "RuntimeLaunchError"}, "verifier_result": {"rewards": {"reward": 1}}}
    assert not trial_scored(crashed)
    assert not trial_scored({"verifier_result": {"rewards": {"reward": "1"}}})
    assert not trial_scored({"verifier_result": None})
    verifier_stdout(tmp_path, "E: Unable to locate package curl\n")
    assert not trial_scored(ok, tmp_path)


def test_reward_value_counts_failures_as_zero() -> None:
    assert reward_value({"verifier_result": {"rewards": {"reward": 1}}}) == 1.0
    assert reward_value({"verifier_result": None}) == 0.0
    assert reward_value({}) == 0.0


def test_read_rewards(tmp_path: Path) -> None:
    with pytest.raises(RewardFileNotFoundError, match=r"reward\.txt"):
        read_rewards(tmp_path)
    (tmp_path / "reward.json").write_text('{"reward": 1, "answer_correct": 0.5}', encoding="utf-8")
    assert read_rewards(tmp_path) == {"reward": 1, "answer_correct": 0.5}
    (tmp_path / "reward.txt").write_text(" 0.25\n", encoding="utf-8")
    assert read_rewards(tmp_path) == {"reward": 0.25}  # reward.txt is read first
    (tmp_path / "reward.txt").write_text("", encoding="utf-8")
    with pytest.raises(RewardFileEmptyError, match=r"reward\.txt"):
        read_rewards(tmp_path)
    (tmp_path / "reward.txt").write_text("  ", encoding="utf-8")
    with pytest.raises(VerifierOutputParseError, match="not a number"):
        read_rewards(tmp_path)
    (tmp_path / "reward.txt").unlink()
    (tmp_path / "reward.json").write_text("[1]", encoding="utf-8")
    with pytest.raises(VerifierOutputParseError, match="expected a JSON object"):
        read_rewards(tmp_path)


def test_round_capped(tmp_path: Path) -> None:
    assert not round_capped(tmp_path / "missing")
    (tmp_path / "lead-1.stdout.log").write_text("turn complete for x\n", encoding="utf-8")
    (tmp_path / "notes.txt").write_text("max_turn_requests\n", encoding="utf-8")  # not an agent log
    assert not round_capped(tmp_path)
    (tmp_path / "worker-1.stderr.log").write_text("WARN turn hit max_turn_requests for chan\n", encoding="utf-8")
    assert round_capped(tmp_path)
