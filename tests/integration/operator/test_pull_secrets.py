"""spec.imagePullSecrets against the real apiserver and kubelet: the images check names a pull
Secret that is missing or of the wrong type before any canary starts (the kubelet itself would
pull anonymously and say nothing), and a canary that lists a real registry Secret starts.

The local stack has no registry, so no pull actually authenticates here (every image is
imported into the node and the sweeps pull with `Never`); that the trial, regrade and canary pods
carry the Secrets is in tests/unit/pod/test_trial_pod.py."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

from buzz_operator.api.sweep import BuzzSweepSpec
from buzz_operator.condition import ExperimentManifest
from buzz_operator.inputs.fetch.datasets import load_tasks
from buzz_operator.kube import objects, resources
from buzz_operator.kube.client import Kube
from buzz_operator.preflight import checks
from buzz_operator.preflight.drive import runner
from buzz_operator.storage.url import open_store
from buzz_operator.sweep.settings import DEFAULT_STACK


async def _checks(kube: Kube, namespace: str, body: dict[str, Any], store_url: str) -> dict[str, checks.CheckResult]:
    await resources.create(kube, resources.SWEEPS, namespace, body)
    created = await resources.get(kube, resources.SWEEPS, namespace, body["metadata"]["name"])
    assert created is not None
    spec = BuzzSweepSpec.model_validate(body["spec"])
    dataset, tasks = await load_tasks(kube, namespace, spec, None)  # type: ignore[arg-type]  # builtin: no store
    manifest = ExperimentManifest.load(spec.condition.inline or {})
    results = await runner.run_checks(kube, created, spec, manifest, tasks, store=open_store(store_url),
                                      dataset=dataset, stack=DEFAULT_STACK,
                                      operator_image="docker.io/buzz/operator:dev")
    assert [r.name for r in results] == list(checks.ORDER)
    return {r.name: r for r in results}


def _registry_secret(name: str) -> dict[str, Any]:
    auth = base64.b64encode(b"bench:not-a-real-password").decode()
    config = json.dumps({"auths": {"registry.example": {"auth": auth}}})
    return {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": name},
            "type": "kubernetes.io/dockerconfigjson",
            "data": {".dockerconfigjson": base64.b64encode(config.encode()).decode()}}


async def test_a_wrong_pull_secret_is_named_before_any_canary(  # type: ignore[no-untyped-def]
    kube: Kube, namespace, crds, sweep_secrets, make_sweep, tmp_path: Path
) -> None:
    url = f"file://{tmp_path}"
    missing = make_sweep("pull-missing", store_url=url, tasks=["hello-file"], suspend=True,
                         imagePullSecrets=[{"name": "regcred"}, {"name": "absent"}])
    await kube.core.create_namespaced_secret(namespace, _registry_secret("regcred"))
    found = await _checks(kube, namespace, missing, url)
    assert found[checks.IMAGES].verdict is checks.Verdict.FAILED
    assert found[checks.IMAGES].detail == "spec.imagePullSecrets[1].name: Secret absent not found in the sweep's namespace"
    assert all(found[name].detail.startswith("cannot see:") for name in checks.ORDER[checks.ORDER.index(checks.STACK):])
    assert await objects.read_pod(kube, namespace, "pull-missing-preflight") is None, "no canary was started"

    opaque = make_sweep("pull-opaque", store_url=url, tasks=["hello-file"], suspend=True,
                        imagePullSecrets=[{"name": "api-keys"}])  # the stand-in's key Secret: Opaque
    found = await _checks(kube, namespace, opaque, url)
    assert found[checks.IMAGES].detail == (
        "spec.imagePullSecrets[0].name: Secret api-keys is of type Opaque, not kubernetes.io/dockerconfigjson")


async def test_a_canary_with_a_registry_secret_starts(  # type: ignore[no-untyped-def]
    kube: Kube, namespace, crds, sweep_secrets, make_sweep, tmp_path: Path
) -> None:
    url = f"file://{tmp_path}"
    await kube.core.create_namespaced_secret(namespace, _registry_secret("regcred"))
    body = make_sweep("pull-ok", store_url=url, tasks=["hello-file"], suspend=True,
                      imagePullSecrets=[{"name": "regcred"}])
    found = await _checks(kube, namespace, body, url)
    assert found[checks.IMAGES].verdict is checks.Verdict.PASSED, found[checks.IMAGES]
    assert found[checks.STACK].verdict is checks.Verdict.PASSED, found[checks.STACK]
