"""Reading a finished trial the way the seed's resume and summary do (docs/failures.md, docs/harbor.md).

Four questions: did the verifier itself break (its reward of 0 is then not a measurement), what
reward did it give, which outcome class does the trial fall in, and does it count as done when a
sweep resumes. One definition each, shared by the sweep's resume and its rollup, because a marker
list that drifted between them would flag a trial the resume had already skipped.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from buzz_operator.ledger.agent_log import ROUND_CAP_MARKER, iter_bundle_logs
from buzz_operator.ledger.harbor_errors import as_recorded, recorded_reason
from buzz_operator.ledger.lines import iter_line_chunks

# docs/failures.md#verifier-health, verbatim: TLS rejections (uv and pip word them differently), a missing pytest, and apt's
# empty index. Each makes the verifier score 0 for a reason that is not the agent's.
VERIFIER_BROKEN_MARKERS = (
    "invalid peer certificate",
    "certificate verify failed",
    "pytest: command not found",
    "no module named pytest",
    "unable to locate package",
)
VERIFIER_STDOUT = Path("verifier") / "test-stdout.txt"
# docs/failures.md#resume: exception types that are the agent's own outcome; their zero stands and is not re-run.
AGENT_FAULT_EXCEPTIONS = frozenset({"AgentTimeoutError"})
REWARD_TEXT = "reward.txt"
REWARD_JSON = "reward.json"


def verifier_output_broken(text: str) -> bool:
    """True if verifier output carries a health marker (case-insensitive; docs/failures.md#verifier-health)."""
    lowered = text.lower()
    return any(marker in lowered for marker in VERIFIER_BROKEN_MARKERS)


def verifier_broken(trial_dir: Path) -> bool:
    """docs/failures.md#verifier-health ``verifier_broken``: a missing ``verifier/test-stdout.txt`` is not evidence (False)."""
    path = trial_dir / VERIFIER_STDOUT
    try:
        # Markers hold no line break, so testing chunk by chunk equals testing the whole text.
        return any(verifier_output_broken(chunk) for chunk in iter_line_chunks(path))
    except OSError:
        return False


def classify_outcome(exception_info: object) -> str:
    """docs/failures.md#outcome-words ``_classify``: ``ok`` | ``timeout`` | ``launch`` | ``error`` from ``exception_info``.

    A launch failure gets its own class because no model was ever asked to do the task.
    """
    if not exception_info:
        return "ok"
    # the project's reason, not Harbor's name for it, so an outcome word never moves with the
    # mapping (AgentsNotReady is Harbor's AgentSetupTimeoutError, yet the team never started)
    if isinstance(exception_info, Mapping):
        exception_info = as_recorded(exception_info)
    text = json.dumps(exception_info).lower()
    if "timeout" in text:
        return "timeout"
    if "runtimelauncherror" in text or "failed to start" in text:
        return "launch"
    return "error"


def is_numeric_reward(value: object) -> bool:
    """The seed's test, ``isinstance(value, (int, float))`` — which admits a bool, as it does."""
    return isinstance(value, int | float)


def trial_scored(result: Mapping[str, Any], trial_dir: Path | None = None) -> bool:
    """docs/failures.md#resume ``scored_tasks``: does this trial's score stand, so a resumed sweep skips it?

    Done means no exception (or only an agent-fault one such as a timeout — re-running failures
    and keeping the better result would inflate the score), a numeric ``reward``, and a verifier
    that did not break. ``trial_dir`` None skips the verifier check (no local copy to read).
    """
    exception = result.get("exception_info") or {}
    if exception and recorded_reason(exception) not in AGENT_FAULT_EXCEPTIONS:
        return False
    rewards = (result.get("verifier_result") or {}).get("rewards") or {}
    if not is_numeric_reward(rewards.get("reward")):
        return False
    return not (trial_dir is not None and verifier_broken(trial_dir))


def reward_value(result: Mapping[str, Any]) -> float:
    """docs/failures.md#summaries: ``verifier_result.rewards.reward`` if numeric, else 0.0 (failures count as zero)."""
    reward = ((result.get("verifier_result") or {}).get("rewards") or {}).get("reward")
    return float(reward) if is_numeric_reward(reward) else 0.0


class RewardFileNotFoundError(Exception):
    """Neither reward file exists (named as Harbor names it, for ``exception_type``)."""


class RewardFileEmptyError(Exception):
    """The reward file has zero bytes."""


class VerifierOutputParseError(Exception):
    """The reward file is not a number (reward.txt) or a JSON object (reward.json)."""


def read_rewards(verifier_dir: Path) -> dict[str, float | int]:
    """The verifier's rewards: ``reward.txt`` first, then ``reward.json`` (docs/corridor.md#grade).

    ``reward.txt`` → ``{"reward": float(text)}``; ``reward.json`` → the object verbatim. Harbor's
    emptiness test is a zero byte size, so whitespace-only text is a parse error, not empty.
    Raises the Harbor-named errors above, each naming the file.
    """
    text_path = verifier_dir / REWARD_TEXT
    json_path = verifier_dir / REWARD_JSON
    if text_path.is_file():
        raw = _read_nonempty(text_path)
        try:
            return {"reward": float(raw)}
        except ValueError:
            raise VerifierOutputParseError(f"{text_path}: not a number: {raw[:80]!r}") from None
    if json_path.is_file():
        raw = _read_nonempty(json_path)
        try:
            data = json.loads(raw)
        except json.JSONDecodeError as error:
            raise VerifierOutputParseError(f"{json_path}: invalid JSON: {error}") from None
        if not isinstance(data, dict):
            raise VerifierOutputParseError(f"{json_path}: expected a JSON object, got {type(data).__name__}")
        return data
    raise RewardFileNotFoundError(f"no reward file found at {text_path} or {json_path}")


def _read_nonempty(path: Path) -> str:
    if path.stat().st_size == 0:
        raise RewardFileEmptyError(f"{path}: reward file is empty")
    return path.read_text(encoding="utf-8", errors="replace")


def round_capped(bundle_dir: Path) -> bool:
    """docs/failures.md#summaries ROUND-CAPPED: any agent log directly in the bundle mentions ``max_turn_requests``."""
    for path in iter_bundle_logs(bundle_dir):
        try:
            if any(ROUND_CAP_MARKER in chunk for chunk in iter_line_chunks(path)):
                return True
        except OSError:
            continue
    return False

