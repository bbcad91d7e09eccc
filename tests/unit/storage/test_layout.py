"""The Harbor-compatible layout of docs/bundle.md#layout as keys."""

from __future__ import annotations

import pytest
from buzz_operator.storage import layout
from buzz_operator.storage.errors import InvalidKey


def test_sweep_keys() -> None:
    assert layout.sweep_prefix("sw1") == "sw1"
    assert layout.sweep_config_key("sw1") == "sw1/config.json"
    assert layout.sweep_lock_key("sw1") == "sw1/lock.json"
    assert layout.sweep_summary_key("sw1") == "sw1/summary.json"


def test_trial_keys() -> None:
    assert layout.trial_prefix("sw1", "t-0") == "sw1/t-0"
    assert layout.trial_config_key("sw1", "t-0") == "sw1/t-0/config.json"
    assert layout.trial_result_key("sw1", "t-0") == "sw1/t-0/result.json"
    assert layout.agent_key("sw1", "t-0", "lead.stdout.log") == "sw1/t-0/agent/buzz/lead.stdout.log"
    assert layout.agent_key("sw1", "t-0", "receipts.jsonl") == "sw1/t-0/agent/buzz/receipts.jsonl"
    assert layout.verifier_key("sw1", "t-0", "reward.json") == "sw1/t-0/verifier/reward.json"


def test_retry_keys_are_numbered_per_attempt() -> None:
    assert layout.retry_prefix("sw1", "t-0", 1) == "sw1/t-0/retries/1"
    assert (
        layout.retry_key("sw1", "t-0", 2, "agent/buzz/lead.stderr.log")
        == "sw1/t-0/retries/2/agent/buzz/lead.stderr.log"
    )


@pytest.mark.parametrize("attempt", [0, -1, True, "1", 1.0])
def test_retry_attempt_must_be_a_positive_integer(attempt: object) -> None:
    with pytest.raises(InvalidKey, match="failed try must be an integer >= 1"):
        layout.retry_prefix("sw1", "t-0", attempt)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("call", "field"),
    [
        (lambda: layout.sweep_prefix("a/b"), "sweep"),
        (lambda: layout.sweep_config_key(".."), "sweep"),
        (lambda: layout.trial_prefix("sw", "../other"), "trial"),
        (lambda: layout.trial_result_key("sw", ""), "trial"),
        (lambda: layout.agent_key("sw", "t", "../../x"), "agent file"),
        (lambda: layout.verifier_key("sw", "t", "/abs"), "verifier file"),
    ],
)
def test_bad_names_are_refused_naming_the_field(call, field: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(InvalidKey, match=f"^{field} "):
        call()
