"""A trial whose bundle is already committed in storage (its sweep resumed into storage it had
written before, with an unchanged lock.json) is adopted from that bundle instead of run again:
Harbor's `jobs resume` keeps finished trials, and running one twice would leave the status
saying one result while the committed bundle — never rewritten — says another. Pure."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from pydantic import ValidationError

from buzz_operator.api.conditions import set_condition
from buzz_operator.api.stack import StackDigests
from buzz_operator.api.trial import (
    BuzzTrialStatus,
    CostRange,
    FailureClass,
    Outcome,
    Phase,
    PhaseTimes,
    Tokens,
)
from buzz_operator.ledger.harbor_errors import recorded_reason
from buzz_operator.scoring.failures import classify_reason, failure_outcome
from buzz_operator.trial.state import FAILED, RELEASED

TIMEOUT_EXCEPTION = "AgentTimeoutError"
ADOPTED = "Adopted"


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _failure(exception: Mapping[str, Any] | None) -> tuple[Outcome, FailureClass | None, str | None, str | None]:
    if not exception:
        return Outcome.OK, None, None, None
    reason = recorded_reason(exception) or ""  # buzz_reason beside Harbor's name, when written
    message = str(exception.get("exception_message") or reason)[:300]
    if reason == TIMEOUT_EXCEPTION:
        return Outcome.TIMEOUT, None, None, None
    try:
        failure_class = classify_reason(reason)
    except ValueError:  # written by another build with reasons this one does not know
        return Outcome.BROKEN, FailureClass.BROKEN, "UnknownRecordedFailure", f"{reason}: {message}"[:300]
    return failure_outcome(reason, timed_out=False), failure_class, reason, message


def _stack(metadata: Mapping[str, Any]) -> StackDigests | None:
    """The digests the committed trial ran with; None when its build did not record them."""
    stack = metadata.get("stack")
    if not isinstance(stack, Mapping) or not stack.get("digest"):
        return None
    try:
        return StackDigests(digest=stack["digest"], binaries=stack.get("binaries") or {})
    except ValidationError:
        return None


def adopted_status(
    status: BuzzTrialStatus, result: Mapping[str, Any], bundle_url: str, now: datetime
) -> BuzzTrialStatus:
    """The terminal, released status the committed `result.json` records."""
    rewards_doc = (result.get("verifier_result") or {}).get("rewards") or {}
    rewards = {k: v for k, v in ((k, _number(v)) for k, v in rewards_doc.items()) if v is not None}
    agent = result.get("agent_result") or {}
    cost = _number(agent.get("cost_usd")) or 0.0
    metadata = agent.get("metadata") or {}
    ceiling = _number(metadata.get("cost_usd_including_handoff_bound")) or cost
    outcome, failure_class, reason, message = _failure(result.get("exception_info"))
    phase = Phase.FAILED if failure_class is not None else Phase.SUCCEEDED
    conditions = set_condition(status.conditions, RELEASED, True, ADOPTED,
                               f"bundle already committed at {bundle_url}", now=now)
    if phase is Phase.FAILED:
        conditions = set_condition(conditions, FAILED, True, reason or "Failed", message or "", now=now)
    return status.model_copy(update={
        "phase": phase,
        "outcome": outcome,
        "failure_class": failure_class,
        "reason": reason,
        "message": message,
        "reward": rewards.get("reward"),
        "rewards": rewards,
        "cost_usd": CostRange(floor=cost, ceiling=max(cost, ceiling)),
        "tokens": Tokens(input=int(_number(agent.get("n_input_tokens")) or 0),
                         output=int(_number(agent.get("n_output_tokens")) or 0)),
        "bundle_url": bundle_url,
        "stack": _stack(metadata),
        "conditions": conditions,
        "phase_times": PhaseTimes(pending=status.phase_times.pending, finished=now),
    })
