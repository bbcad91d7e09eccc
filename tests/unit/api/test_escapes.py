"""What escapes a handler becomes a condition: invalid spec when the error names a field, else a
retryable infra or internal failure; messages keep the exception's type and text but no secret;
the backoff grows with how long the object has been failing; a later success sets Ready=True."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from buzz_operator.api import escapes
from buzz_operator.inputs.errors import InputError
from buzz_operator.scoring.failures import StepFailure
from kubernetes_asyncio.client.exceptions import ApiException

NOW = datetime(2026, 12, 1, 10, 0, tzinfo=UTC)


def test_an_error_naming_a_field_is_an_invalid_spec() -> None:
    escape = escapes.classify(InputError("spec.relay.url", "bound to another host"), "reconcile")
    assert (escape.reason, escape.field, escape.retryable) == ("InvalidSpec", "spec.relay.url", False)
    assert escape.message == "reconcile: InputError: spec.relay.url: bound to another host"


def test_other_errors_are_retryable_and_say_their_type() -> None:
    cases = {
        TimeoutError("slow"): "InfraTimeout",
        ConnectionRefusedError(111, "refused"): "InfraUnavailable",
        ApiException(status=503, reason="Service Unavailable"): "InfraApiUnavailable",
        ApiException(status=409, reason="Conflict"): "InfraApiUnavailable",
        ApiException(status=403, reason="Forbidden"): "InfraApiRefused",
        StepFailure("RelayUnavailable", "down"): "RelayUnavailable",
        ValueError("non-hexadecimal number found in fromhex() arg at position 0"): "InternalError",
        KeyError("x"): "InternalError",
    }
    for error, reason in cases.items():
        escape = escapes.classify(error, "trial")
        assert escape.reason == reason and escape.retryable, (error, escape)
        assert escape.message.startswith(f"trial: {type(error).__name__}: "), escape.message


def test_messages_are_scrubbed_of_secrets() -> None:
    key = "ab" * 32
    text = (f"dsn postgresql://relay:hunter2@10.0.0.5:5432/relay failed; key {key}; nsec1qqqqqqqqqqqq; "
            "Authorization: Bearer eyJhbGciOi.x; api_key=sk-abcdefghijkl; password: pw123 literal-s3cret")
    message = escapes.classify(RuntimeError(text), "janitor", secrets=["literal-s3cret"]).message
    for secret in ("hunter2", key, "nsec1qqqqqqqqqqqq", "eyJhbGciOi", "sk-abcdefghijkl", "pw123", "literal-s3cret"):
        assert secret not in message, (secret, message)
    assert "postgresql://relay:***@10.0.0.5:5432/relay" in message
    assert len(escapes.classify(RuntimeError("x" * 5000), "w").message) <= escapes.MESSAGE_MAX


def test_backoff_grows_with_the_failure_and_is_capped() -> None:
    assert escapes.retry_delay_s([], NOW) == escapes.BACKOFF_BASE_S
    for failing_s, delay in ((0, 5.0), (3, 5.0), (40, 40.0), (4000, 300.0)):
        status = escapes.escape_patch({}, escapes.classify(TimeoutError(), "w"), NOW - timedelta(seconds=failing_s))
        assert escapes.retry_delay_s(escapes.conditions_of(status), NOW) == delay


def test_escape_patch_keeps_other_conditions_and_recovery_clears_it() -> None:
    accepted = {"type": "Accepted", "status": "True", "reason": "SpecValid", "lastTransitionTime": "2026-01-01T00:00:00Z"}
    status = {"conditions": [accepted, {"type": "garbage"}]}
    escape = escapes.classify(InputError("spec.relay.ownerKeySecretRef", "not a key"), "reconcile")
    patch = escapes.escape_patch(status, escape, NOW, generation=3, also=("Accepted",))
    kinds = {c["type"]: c for c in patch["conditions"]}
    assert set(kinds) == {"Accepted", "Ready"}, "an unparsable entry is dropped, not fatal"
    assert kinds["Ready"]["status"] == kinds["Accepted"]["status"] == "False"
    assert kinds["Ready"]["reason"] == "InvalidSpec" and kinds["Ready"]["observedGeneration"] == 3
    assert escapes.recovered_patch(status, NOW) == {}, "nothing escaped: no Ready condition at all"
    later = NOW + timedelta(seconds=30)
    recovered = escapes.with_recovery(patch, {"total": 1}, later)
    assert recovered["total"] == 1
    ready = next(c for c in recovered["conditions"] if c["type"] == "Ready")
    assert ready["status"] == "True" and ready["reason"] == "Reconciled"
    assert escapes.with_recovery({"conditions": recovered["conditions"]}, {}, later) == {}
