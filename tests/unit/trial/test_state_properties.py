"""Random walks through the corridor: whatever fails and when, the trial ends, and its
records stay within their bounds."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from buzz_operator.api.sweep import RetryPolicy
from buzz_operator.api.trial import BuzzTrialStatus, FailureClass, Phase
from buzz_operator.scoring.failures import BROKEN_REASONS, INFRA_REASONS, OUTCOME_REASONS, StepFailure
from buzz_operator.trial.state import (
    TERMINAL,
    Bundled,
    Collected,
    Graded,
    Launched,
    Provisioned,
    Ran,
    Spend,
    advance,
    begin,
    fail,
    seconds_until_ready,
)
from hypothesis import given, settings
from hypothesis import strategies as st

T0 = datetime(2026, 1, 1, tzinfo=UTC)
FACTS = {
    Phase.PROVISIONING: Provisioned(trial_id="t", tenant_secret="s", channel_id="c"),
    Phase.LAUNCHING: Launched(pod="p"),
    Phase.RUNNING: Ran(task_event_id="e", completion_message_id="d"),
    Phase.COLLECTING: Collected(Spend(1, 1, 0.01, 0.01)),
    Phase.GRADING: Graded(reward=1.0),
    Phase.BUNDLING: Bundled(bundle_url="file:///b"),
}
REASONS = sorted(INFRA_REASONS | OUTCOME_REASONS | BROKEN_REASONS)
steps = st.lists(st.one_of(st.none(), st.sampled_from(REASONS)), max_size=200)


@settings(max_examples=300)
@given(steps, st.integers(0, 4))
def test_any_walk_ends_within_bounds(events: list[str | None], max_retries: int) -> None:
    retry = RetryPolicy(max_retries=max_retries, backoff_seconds=1, max_backoff_seconds=4)
    status, now = BuzzTrialStatus(), T0
    events = [*events, *([None] * 20)]  # after the random part, let everything succeed
    for event in events:
        if status.phase in TERMINAL:
            break
        now += timedelta(seconds=seconds_until_ready(status, now) + 1)
        if status.phase is Phase.PENDING:
            status = begin(status, now)
        elif event is None:
            status = advance(status, FACTS[status.phase], now)  # type: ignore[arg-type]
        else:
            status = fail(status, StepFailure(event), now, retry=retry)
        assert status.retries <= max_retries
        assert status.step_retries <= max_retries
        assert len(status.failed_tries) <= max_retries + 1
    # Backoffs and step retries are finite: 20 clean steps always reach the end.
    assert status.phase in TERMINAL
    if status.phase is Phase.SUCCEEDED:
        assert status.failure_class is None and status.reward == 1.0
    else:
        assert status.failure_class is not None
    if status.failure_class is FailureClass.BROKEN:
        assert status.outcome is not None and status.outcome.value == "broken"
    assert [record.retry for record in status.failed_tries] == list(range(len(status.failed_tries)))
