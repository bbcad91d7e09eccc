"""The handlers' one escape path, without a cluster: an error escaping the sweep reconcile, the
janitor or the trial daemon is written to status first (Ready / JanitorReady False; Accepted
False too when it names a spec field), then posted as a Warning Event, then handed to kopf as
a TemporaryError with the backoff; the error's secrets stay out of both."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import kopf
import pytest
from buzz_operator import handlers
from buzz_operator.inputs.errors import InputError
from buzz_operator.kube.inflight import InFlight
from buzz_operator.sweep.drive.settled import SettledTrials

KEY = "ef" * 32


class FakeCustom:
    def __init__(self, calls: list[tuple[str, Any]]) -> None:
        self.calls = calls

    async def patch_namespaced_custom_object_status(self, group: str, version: str, namespace: str, plural: str,
                                                    name: str, body: dict[str, Any], **_: Any) -> None:
        self.calls.append(("status", (plural, name, body["status"])))

    async def get_namespaced_custom_object(self, group: str, version: str, namespace: str, plural: str,
                                           name: str, **_: Any) -> dict[str, Any]:
        return {"metadata": {"name": name, "resourceVersion": "7",
                             "finalizers": [handlers.FINALIZER, "someone.else/keep"]}}

    async def patch_namespaced_custom_object(self, group: str, version: str, namespace: str, plural: str,
                                             name: str, body: dict[str, Any], **_: Any) -> dict[str, Any]:
        self.calls.append(("metadata", (plural, name, body["metadata"])))
        return body


def body(kind: str, status: dict[str, Any] | None = None) -> kopf.Body:
    return kopf.Body({"apiVersion": "bench.buzz.dev/v1alpha1", "kind": kind,
                      "metadata": {"name": "s", "namespace": "ns", "uid": "u", "generation": 2},
                      "spec": {"sweepName": "s"}, "status": status or {}})


@pytest.fixture
def calls(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, Any]]:
    recorded: list[tuple[str, Any]] = []
    monkeypatch.setattr(handlers.events, "post", lambda obj, evs: recorded.extend(("event", e) for e in evs))
    return recorded


class NoSettledTrials(SettledTrials):
    """No settled trials, and their namespace listed at once (the listing needs an apiserver)."""

    async def ready(self, kube: Any, namespace: str, *, within_s: float = 0.0) -> None:
        return None


def memo(calls: list[tuple[str, Any]]) -> Any:
    return SimpleNamespace(kube=SimpleNamespace(custom=FakeCustom(calls)), inflight=InFlight(), settings=None, workdir=None,
                           settled=NoSettledTrials())


def conditions(status: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {c["type"]: c for c in status["conditions"]}


async def test_reconcile_escape_is_status_then_event_then_backoff(calls, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    async def broken(*_: Any) -> dict[str, Any]:
        raise ValueError(f"non-hexadecimal number found in fromhex() arg at position 0 ({KEY})")

    monkeypatch.setattr(handlers.sweep_reconcile, "reconcile", broken)
    with pytest.raises(kopf.TemporaryError) as raised:
        await handlers.reconcile_sweep(body=body("BuzzSweep"), memo=memo(calls), trial_views={})
    assert [kind for kind, _ in calls] == ["status", "event"], "status first, then the Event"
    plural, _, status = calls[0][1]
    ready = conditions(status)["Ready"]
    assert plural == "buzzsweeps" and ready["status"] == "False" and ready["reason"] == "InternalError"
    assert ready["message"].startswith("reconcile: ValueError: non-hexadecimal") and ready["observedGeneration"] == 2
    assert "Accepted" not in conditions(status), "a bug is not the user's mistake"
    event = calls[1][1]
    assert event.type == "Warning" and event.reason == "InternalError"
    assert KEY not in ready["message"] and KEY not in event.message
    assert raised.value.delay == 5.0


async def test_an_error_naming_a_field_also_refuses_the_spec(calls, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    async def invalid(*_: Any) -> dict[str, Any]:
        raise InputError("spec.relay.url", "bound to another host")

    monkeypatch.setattr(handlers.sweep_reconcile, "reconcile", invalid)
    with pytest.raises(kopf.TemporaryError):
        await handlers.reconcile_sweep(body=body("BuzzSweep"), memo=memo(calls), trial_views={})
    found = conditions(calls[0][1][2])
    assert found["Accepted"]["status"] == found["Ready"]["status"] == "False"
    assert found["Accepted"]["reason"] == "InvalidSpec" and "spec.relay.url" in found["Accepted"]["message"]
    assert "fix spec.relay.url" in calls[1][1].message


async def test_janitor_escape_has_its_own_condition(calls, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    async def down(*_: Any) -> None:
        raise ConnectionRefusedError(111, "Connection refused")

    monkeypatch.setattr(handlers.reaper, "tick", down)
    with pytest.raises(kopf.TemporaryError):
        await handlers.janitor(body=body("BuzzSweep"), memo=memo(calls))
    found = conditions(calls[0][1][2])
    assert set(found) == {"JanitorReady"} and found["JanitorReady"]["reason"] == "InfraUnavailable"


async def test_trial_daemon_escape_is_recorded_on_the_trial(calls, monkeypatch, tmp_path) -> None:  # type: ignore[no-untyped-def]
    async def no_inputs(*_: Any, **__: Any) -> Any:
        raise InputError("spec.relay.ownerKeySecretRef", "Secret relay-owner key owner-key is not a secret key")

    monkeypatch.setattr(handlers, "load_context", no_inputs)
    state = memo(calls)
    state.workdir = tmp_path
    with pytest.raises(kopf.TemporaryError):
        await handlers.drive_trial(body=body("BuzzTrial", {"phase": "Pending"}), memo=state)
    statuses = [value for kind, value in calls if kind == "status"]
    plural, _, status = statuses[0]
    ready = conditions(status)["Ready"]
    assert plural == "buzztrials" and ready["reason"] == "InvalidSpec"
    assert "spec.relay.ownerKeySecretRef" in ready["message"]
    events = [value for kind, value in calls if kind == "event"]
    assert events[-1].type == "Warning" and events[-1].reason == "InvalidSpec"


async def test_a_settled_trial_recovers_ready_then_leaves_the_watch(calls) -> None:  # type: ignore[no-untyped-def]
    """A trial whose settling failed once (Ready=False) and is settled by its next daemon: Ready
    is set True before the label, since after it no handler of this operator sees the trial."""
    failed = {"type": "Ready", "status": "False", "reason": "ApiServerUnavailable", "message": "x",
              "lastTransitionTime": "2026-12-02T00:00:00Z"}
    released = {"type": "Released", "status": "True", "reason": "Released", "message": "",
                "lastTransitionTime": "2026-12-02T00:00:00Z"}
    state = memo(calls)
    await handlers.drive_trial(body=body("BuzzTrial", {"phase": "Succeeded", "outcome": "ok", "reward": 1.0,
                                                       "conditions": [released, failed]}), memo=state)
    assert [kind for kind, _ in calls] == ["status", "metadata"]
    assert conditions(calls[0][1][2])["Ready"]["status"] == "True"
    _, name, metadata = calls[1][1]
    assert name == "s" and metadata["labels"] == {"bench.buzz.dev/settled": "true"}
    # only kopf's finalizer goes, and only on the version it was read at
    assert metadata["finalizers"] == ["someone.else/keep"] and metadata["resourceVersion"] == "7"
    assert [t.name for t in state.settled.summaries()] == ["s"]


async def test_a_trial_whose_label_is_refused_stays_kopfs(calls, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The summary kept ahead of the label is dropped again when the patch fails (a 500 a real
    apiserver will not produce on demand, hence the fake): kopf still watches the trial, and a
    settled set that kept it would hide a later deletion of it from the planner."""
    from kubernetes_asyncio.client.exceptions import ApiException

    async def refused(*_: Any, **__: Any) -> None:
        raise ApiException(status=500, reason="etcd unavailable")

    state = memo(calls)
    monkeypatch.setattr(state.kube.custom, "patch_namespaced_custom_object", refused)
    released = {"type": "Released", "status": "True", "reason": "Released", "message": "",
                "lastTransitionTime": "2026-12-02T00:00:00Z"}
    with pytest.raises(kopf.TemporaryError):
        await handlers.drive_trial(body=body("BuzzTrial", {"phase": "Succeeded", "outcome": "ok", "reward": 1.0,
                                                           "conditions": [released]}), memo=state)
    assert list(state.settled.summaries()) == []
    assert conditions(calls[0][1][2])["Ready"]["status"] == "False"
