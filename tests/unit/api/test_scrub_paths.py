"""Each secret kind through each path that writes a failure message (docs/failures.md#scrubbing):
a condition, a waiting entry, a trial's failure message and its try records, the Events built
from them, a handler's escape, and a trial step's failure with the keys its drive read."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime
from types import SimpleNamespace

import pytest
from buzz_operator.api.common import Waiting
from buzz_operator.api.conditions import set_condition
from buzz_operator.api.escapes import classify
from buzz_operator.api.secret_text import SECRET_KINDS, scrub
from buzz_operator.api.sweep import RetryPolicy
from buzz_operator.api.trial import BuzzTrialStatus, Phase
from buzz_operator.kube.secret_reads import SecretReads
from buzz_operator.observability.events import Event, escaped, trial_events
from buzz_operator.scoring.failures import StepFailure
from buzz_operator.trial.drive import driver
from buzz_operator.trial.state import begin, fail

NOW = datetime(2026, 12, 5, 12, 0, tzinfo=UTC)
# one sample of each kind, as it would sit in an error's text
SAMPLES = {
    "nostr-private-key": "nsec1" + "q" * 58,
    "anthropic-key": "sk-ant-api03-" + "A1b2" * 10,
    "openai-key": "sk-" + "Zz9" * 12,
    "databricks-token": "dapi" + "0a1b" * 8,
    "bearer-header": "Authorization: Bearer abcdefghijklmnop0123",
    "hex-64": "5f" * 32,
    "url-password": "postgres://buzz:hunter2-pass@db:5432/relay",
    "schnorr-signature": "ab" * 64,
    "token-value": "token=glpat-9f8e7d6c5b4a",
}
# the trial's own keys: no shape betrays them, only what the drive read
LITERALS = {"model-api-key": "acme-live-7Qx2Lr9Vb4Np", "auth-tag": "auth-tag-for-seat-1-Lk3Jh8"}
NEEDLES = {**SAMPLES, **LITERALS}
# what must not survive of each: the whole secret, or its secret part
SECRET_PART = {**NEEDLES, "bearer-header": "abcdefghijklmnop0123", "url-password": "hunter2-pass",
               "token-value": "glpat-9f8e7d6c5b4a"}


def shown(text: str, kind: str) -> bool:
    return SECRET_PART[kind] in text


def test_the_scan_and_the_scrub_know_the_same_kinds() -> None:
    from buzz_operator.ledger.secret_scan import SECRET_PATTERNS
    assert SECRET_PATTERNS is SECRET_KINDS
    assert {kind for kind, _ in SECRET_KINDS} <= set(SAMPLES)
    for kind, pattern in SECRET_KINDS:  # each sample is what the scan itself would flag
        assert pattern.search(SAMPLES[kind]), kind


@pytest.mark.parametrize("kind", list(SAMPLES))
def test_scrub_takes_out_each_shape(kind: str) -> None:
    text = f"relay said: CLOSED error: {SAMPLES[kind]} (while posting)"
    assert not shown(scrub(text), kind) and scrub(text).startswith("relay said: CLOSED error: ")
    assert scrub(scrub(text)) == scrub(text)


@pytest.mark.parametrize("kind", list(SAMPLES))
def test_conditions_and_waiting_entries(kind: str) -> None:
    text = f"preflight: stack: {SAMPLES[kind]}"
    (condition,) = set_condition([], "Ready", False, "InternalError", text, now=NOW)
    assert not shown(condition.message, kind) and not shown(json.dumps(condition.to_api()), kind)
    assert not shown(Waiting(reason="ParallelismLimit", message=text).message, kind)


@pytest.mark.parametrize("kind", list(SAMPLES))
def test_a_trials_failure_its_tries_and_its_events(kind: str) -> None:
    status = begin(BuzzTrialStatus(), NOW)
    old = status.model_copy()
    for reason in ("RelayUnavailable", "VerifierFailed", "EvidenceExportFailed"):  # infra, outcome, broken
        status = fail(status, StepFailure(reason, f"{reason}: {SAMPLES[kind]}"), NOW,
                      retry=RetryPolicy(max_retries=1))
        written = json.dumps(status.to_api() if hasattr(status, "to_api") else status.model_dump(mode="json"))
        assert not shown(written, kind), (reason, written)
        for event in trial_events(old, status):
            assert not shown(event.message, kind), (reason, event)
        old = status


@pytest.mark.parametrize("kind", list(SAMPLES))
def test_events_and_escapes(kind: str) -> None:
    assert not shown(Event("Warning", "Failed", f"bundle: {SAMPLES[kind]}").message, kind)
    escape = classify(RuntimeError(f"upload failed: {SAMPLES[kind]}"), "reconcile")
    assert not shown(escape.message, kind) and not shown(escaped(escape).message, kind)


class _Kept(SecretReads):
    """A drive's reads, as kube/secret_reads.py keeps them after the launch read them."""

    def __init__(self, data: dict[str, str]) -> None:
        super().__init__()
        self._kept[("ns", "t-0001-tenant")] = data


@pytest.mark.parametrize("kind", list(NEEDLES))
def test_a_trial_steps_failure_loses_what_its_drive_read(kind: str) -> None:
    """The step's failure goes through trial/drive/driver.py `_failed`, which knows the keys the drive
    read, then into the status (its shapes scrubbed again there) and the Events built from it."""
    ctx = SimpleNamespace(name="t-0001", secret_reads=_Kept({"api-key": LITERALS["model-api-key"],
                                                             "auth-tag": LITERALS["auth-tag"]}),
                          spec=SimpleNamespace(retry=RetryPolicy(max_retries=0)))
    status = begin(BuzzTrialStatus(), NOW).model_copy(update={"phase": Phase.COLLECTING})
    failure = StepFailure("VerifierFailed", f"exec stderr: curl -H 'x-key: {NEEDLES[kind]}' failed")
    new = asyncio.run(driver._failed(ctx, status, failure))  # type: ignore[arg-type]
    assert not shown(json.dumps(new.model_dump(mode="json")), kind)
    assert all(not shown(event.message, kind) for event in trial_events(status, new))
