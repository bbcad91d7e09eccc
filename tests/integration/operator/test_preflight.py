"""Preflight against the real cluster, dev relay, Postgres and a file store: a healthy sweep
passes every check it can see (TLS interception is skipped: this cluster reaches no outside),
and each planted breakage fails exactly the check that names it."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from buzz_operator.api.common import GROUP, VERSION
from buzz_operator.api.sweep import BuzzSweepSpec
from buzz_operator.condition import ExperimentManifest
from buzz_operator.kube import objects
from buzz_operator.kube.client import Kube
from buzz_operator.preflight import canary, checks, runner
from buzz_operator.relay.nostr import Keypair
from buzz_operator.storage.url import open_store
from buzz_operator.sweep.runtime import DEFAULT_STACK
from buzz_operator.sweep.runtime_dataset import load_tasks


async def _run(kube: Kube, namespace: str, body: dict[str, Any], store_url: str) -> dict[str, checks.CheckResult]:
    created = await kube.custom.create_namespaced_custom_object(GROUP, VERSION, namespace, "buzzsweeps", body)
    spec = BuzzSweepSpec.model_validate(body["spec"])
    dataset, tasks = await load_tasks(kube, namespace, spec, None)  # type: ignore[arg-type]  # builtin: no store
    manifest = ExperimentManifest.load(spec.condition.inline or {})
    results = await runner.run_checks(kube, created, spec, manifest, tasks, store=open_store(store_url),
                                      dataset=dataset, stack=DEFAULT_STACK,
                                      operator_image="docker.io/buzz/operator:dev")
    assert [r.name for r in results] == list(checks.ORDER)
    pod = await objects.read_pod(kube, namespace, canary.canary_name(body["metadata"]["name"]))  # type: ignore[index]
    assert pod is None or pod["metadata"].get("deletionTimestamp"), "the canary pod is deleted"
    return {r.name: r for r in results}


async def test_healthy_sweep_passes(kube: Kube, namespace, crds, sweep_secrets, make_sweep, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    url = f"file://{tmp_path}"
    body = make_sweep("ok", store_url=url, tasks=["hello-file", "user-mention"], suspend=True)
    found = await _run(kube, namespace, body, url)
    verdicts = {name: r.verdict.value for name, r in found.items()}
    print(f"\npreflight on a healthy sweep: {verdicts}")
    seen = {n: v for n, v in verdicts.items() if n != checks.TLS_INTERCEPTION}
    assert set(seen.values()) == {"passed"}, found
    assert found[checks.TLS_INTERCEPTION].verdict is checks.Verdict.SKIPPED, found
    # the canary read the digests of the stack it installed: what lock.json records
    stack = found[checks.STACK].stack
    assert stack is not None and {"buzz-acp", "buzz-agent", "buzz-dev-mcp", "buzz"} <= set(stack.binaries), found
    assert not list(await asyncio.to_thread(lambda: list(tmp_path.rglob("probe-*")))), "the probe is deleted"


async def test_each_breakage_fails_its_check(kube: Kube, namespace, crds, sweep_secrets, make_sweep, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    wrong_owner = Keypair.generate()
    await objects.create_secret(kube, namespace, objects.secret_body(
        "wrong-owner", {"owner-key": wrong_owner.secret_hex}, labels={}, owner=None))
    await objects.create_secret(kube, namespace, objects.secret_body(
        "no-api-key", {"OTHER": "x"}, labels={}, owner=None))
    (tmp_path / "blocker").write_text("a file where the store's directory should be\n")
    unwritable = f"file://{tmp_path}/blocker/store"
    body = make_sweep("broken", store_url=unwritable, tasks=["hello-file"], suspend=True)
    body["spec"]["relay"]["ownerKeySecretRef"] = {"name": "wrong-owner", "key": "owner-key"}  # type: ignore[index]
    body["spec"]["endpoints"]["secretRef"] = {"name": "no-api-key"}  # type: ignore[index]
    found = await _run(kube, namespace, body, unwritable)
    print(f"\npreflight on a broken sweep: { {n: r.verdict.value for n, r in found.items()} }")
    for name in (checks.RELAY_OWNER_KEY, checks.STORAGE, checks.ENDPOINT_SECRETS):
        assert found[name].verdict is checks.Verdict.FAILED, found[name]
    assert "spec.relay.ownerKeySecretRef" in found[checks.RELAY_OWNER_KEY].detail
    assert "STANDIN_API_KEY" in found[checks.ENDPOINT_SECRETS].detail
    assert "spec.storage.url" in found[checks.STORAGE].detail
    assert found[checks.IMAGES].verdict is checks.Verdict.SKIPPED, "no canary once the sweep is stopped anyway"
    assert found[checks.RELAY].verdict is checks.Verdict.PASSED
    assert found[checks.POSTGRES].verdict is checks.Verdict.PASSED


async def test_missing_image_fails_naming_its_field(kube: Kube, namespace, crds, sweep_secrets, make_sweep, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    url = f"file://{tmp_path}"
    body = make_sweep("noimage", store_url=url, tasks=["hello-file"], suspend=True,
                      stackImage="docker.io/buzz/no-such-stack:0")
    found = await _run(kube, namespace, body, url)
    assert found[checks.IMAGES].verdict is checks.Verdict.FAILED, found
    assert found[checks.IMAGES].detail.startswith("spec.stackImage: ImagePullFailed"), found[checks.IMAGES]
    assert found[checks.TRUST_STORE].verdict is checks.Verdict.SKIPPED
