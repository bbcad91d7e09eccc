"""The sweeps that used to leave no status and no Event (issue 24), applied to a running
operator: a relay URL the relay is not bound to (ws://127.0.0.2:3600 reaches the relay through
the forwarder's Service, which answers the tenant handshake for that host with HTTP 404), the same
relay on another port (ws://localhost:3700 is the tenant `localhost:3700`, not `localhost:3600`),
and an owner-key Secret whose value is not a key. Each is refused within one reconcile with
Accepted=False naming its field, a Warning Event says the same, no trial is created and no
handler fails with an exception. (The explicit default port of the first version of this test,
ws://localhost:80, is now refused by the API server itself: the forwarder cannot bind it.)"""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

from buzz_operator.api.common import GROUP, VERSION
from buzz_operator.kube import objects
from buzz_operator.kube.client import Kube
from kopf.testing import KopfRunner

# One reconcile: the timer's first tick (BUZZ_SWEEP_INTERVAL_S, 5 s) plus a preflight that stops at
# its relay check (readiness, one handshake, Postgres and storage probes: seconds).
ONE_RECONCILE_S = 45.0
CASES = {  # sweep -> (spec.relay changes, the field the refusal names)
    "other-host": ({"url": "ws://127.0.0.2:3600"}, "spec.relay.url"),
    "other-port": ({"url": "ws://localhost:3700"}, "spec.relay.url"),
    "owner-not-hex": ({"ownerKeySecretRef": {"name": "bad-owner", "key": "owner-key"}}, "spec.relay.ownerKeySecretRef"),
}
NOT_A_KEY = "not-a-hex-key-0123456789-but-long-enough-to-be-mistaken-for-one!"


def accepted(body: dict[str, Any]) -> dict[str, Any] | None:
    return next((c for c in (body.get("status") or {}).get("conditions", []) if c["type"] == "Accepted"), None)


async def test_three_silent_sweeps_are_refused_naming_their_fields(  # type: ignore[no-untyped-def]
    kube: Kube, namespace, crds, sweep_secrets, make_sweep, tmp_path: Path
) -> None:
    await objects.create_secret(kube, namespace, objects.secret_body(
        "bad-owner", {"owner-key": NOT_A_KEY}, labels={}, owner=None))
    applied: dict[str, float] = {}
    refused: dict[str, tuple[float, dict[str, Any]]] = {}
    args = ["run", "--standalone", "-n", namespace, "-m", "buzz_operator.handlers"]
    with KopfRunner(args, timeout=60) as runner:
        for name, (relay, _) in CASES.items():
            body = make_sweep(name, store_url=f"file://{tmp_path}", tasks=["hello-file"])
            body["spec"]["relay"].update(relay)  # type: ignore[index]
            await kube.custom.create_namespaced_custom_object(GROUP, VERSION, namespace, "buzzsweeps", body)
            applied[name] = time.monotonic()
        deadline = time.monotonic() + ONE_RECONCILE_S + 15
        while len(refused) < len(CASES) and time.monotonic() < deadline:
            listed = await kube.custom.list_namespaced_custom_object(GROUP, VERSION, namespace, "buzzsweeps")
            for item in listed["items"]:
                name, condition = item["metadata"]["name"], accepted(item)
                if name not in refused and condition and condition["status"] == "False":
                    refused[name] = (time.monotonic() - applied[name], condition)
            await asyncio.sleep(1)
        events = kube.api.sanitize_for_serialization(await kube.core.list_namespaced_event(namespace))["items"]
        trials = (await kube.custom.list_namespaced_custom_object(GROUP, VERSION, namespace, "buzztrials"))["items"]
    print()
    for name, (seconds, condition) in refused.items():
        print(f"{name:14} refused after {seconds:4.1f}s: {condition['reason']}: {condition['message'][:160]}")
    assert set(refused) == set(CASES), f"not refused: {set(CASES) - set(refused)}"
    for name, (_, condition) in refused.items():
        field = CASES[name][1]
        assert field in condition["message"], (name, condition)
        warnings = [e for e in events if e["involvedObject"].get("name") == name and e["type"] == "Warning"]
        assert any(field in e["message"] for e in warnings), (name, [e["message"] for e in warnings])
    assert NOT_A_KEY not in json.dumps(events) and NOT_A_KEY not in runner.output
    assert "localhost:3700 with HTTP 404" in refused["other-port"][1]["message"]
    assert "127.0.0.2:3600 with HTTP 404" in refused["other-host"][1]["message"]
    assert trials == []
    assert runner.exception is None and "failed with an exception" not in runner.output, runner.output[-3000:]


def condition_of(body: dict[str, Any], type_: str) -> dict[str, Any] | None:
    return next((c for c in (body.get("status") or {}).get("conditions", []) if c["type"] == type_), None)


async def test_an_escaped_error_lands_in_status_and_events_then_clears(  # type: ignore[no-untyped-def]
    kube: Kube, namespace, crds, sweep_secrets, make_sweep, tmp_path: Path, monkeypatch
) -> None:
    """Whatever a reconcile raises that nobody classified (here: a planted bug whose text holds a
    DSN password and a hex key) is Ready=False with its type and scrubbed text, and a Warning
    Event; once the reconcile works again, Ready turns True."""
    from buzz_operator.sweep.drive import reconcile as sweep_reconcile

    real, broken = sweep_reconcile.reconcile, {"on": True}
    leaked = f"postgresql://relay:hunter2-{namespace}@10.0.0.1/relay key {'cd' * 32}"

    async def flaky(*args: Any, **kwargs: Any) -> dict[str, Any]:
        if broken["on"]:
            raise KeyError(leaked)
        return await real(*args, **kwargs)

    monkeypatch.setattr(sweep_reconcile, "reconcile", flaky)
    body = make_sweep("flaky", store_url=f"file://{tmp_path}", tasks=["hello-file"], suspend=True)
    args = ["run", "--standalone", "-n", namespace, "-m", "buzz_operator.handlers"]

    async def ready() -> dict[str, Any] | None:
        item = await kube.custom.get_namespaced_custom_object(GROUP, VERSION, namespace, "buzzsweeps", "flaky")
        return condition_of(item, "Ready")

    async def wait_ready(status: str) -> dict[str, Any]:
        deadline = time.monotonic() + ONE_RECONCILE_S
        while time.monotonic() < deadline:
            if (found := await ready()) and found["status"] == status:
                return found
            await asyncio.sleep(1)
        raise AssertionError(f"Ready never became {status}: {await ready()}")

    with KopfRunner(args, timeout=60) as runner:
        await kube.custom.create_namespaced_custom_object(GROUP, VERSION, namespace, "buzzsweeps", body)
        failing = await wait_ready("False")
        events = kube.api.sanitize_for_serialization(await kube.core.list_namespaced_event(namespace))["items"]
        broken["on"] = False
        recovered = await wait_ready("True")
    print(f"\nescaped: {failing['reason']}: {failing['message']}\nthen: {recovered['reason']}")
    assert failing["reason"] == "InternalError" and failing["message"].startswith("reconcile: KeyError: "), failing
    warnings = [e for e in events if e["involvedObject"].get("name") == "flaky" and e["type"] == "Warning"]
    assert any(e["reason"] == "InternalError" and "KeyError" in e["message"] for e in warnings), warnings
    for secret in (f"hunter2-{namespace}", "cd" * 32):
        assert secret not in json.dumps(failing) and secret not in json.dumps(events)
        assert secret not in runner.output, "nor in the operator's log"
    assert recovered["reason"] == "Reconciled"
    assert runner.exception is None and "failed with an exception" not in runner.output, runner.output[-3000:]
