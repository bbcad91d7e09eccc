"""spec.imagePullSecrets against the real apiserver, kubelet and a real registry (the CNCF
distribution registry hack/registry.sh runs with TLS and an htpasswd login): the images check
names a pull Secret that is missing or of the wrong type before any canary starts (the kubelet
itself would pull anonymously and say nothing); a canary pulls through the login; and each way a
real pull fails — a wrong password, a missing tag, an unreachable registry — is named with the
field to fix and the cause (docs/registry.md#failed-pulls).

The sweeps that prove a login is checked pull with imagePullPolicy Always: the local node's kubelet
does not re-check the login of a pod whose image is already there (hack/cluster-up.sh says why).
Every other sweep of these tiers pulls through the same login (tests/support/cluster.py), once per
image and node; the pods carrying the Secrets is in tests/unit/pod/test_trial_pod.py."""

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

from tests.support.cluster import dockerconfig_secret, in_registry, registry_address
from tests.support.ports import free_port


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


def _foreign_secret(name: str) -> dict[str, Any]:
    auth = base64.b64encode(b"bench:not-a-real-password").decode()
    return dockerconfig_secret(name, json.dumps({"auths": {"registry.example": {"auth": auth}}}))


def _wrong_password(dockerconfig: str) -> str:
    """The local registry's login with another password."""
    config = json.loads(dockerconfig)
    for entry in config["auths"].values():
        user = base64.b64decode(entry["auth"]).decode().split(":", 1)[0]
        entry["auth"] = base64.b64encode(f"{user}:not-the-password".encode()).decode()
    return json.dumps(config)


async def test_a_wrong_pull_secret_is_named_before_any_canary(  # type: ignore[no-untyped-def]
    kube: Kube, namespace, crds, sweep_secrets, make_sweep, tmp_path: Path
) -> None:
    url = f"file://{tmp_path}"
    missing = make_sweep("pull-missing", store_url=url, tasks=["hello-file"], suspend=True,
                         imagePullSecrets=[{"name": "regcred"}, {"name": "absent"}])
    await kube.core.create_namespaced_secret(namespace, _foreign_secret("regcred"))
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


async def test_a_canary_pulls_through_the_registry_login(  # type: ignore[no-untyped-def]
    kube: Kube, namespace, crds, sweep_secrets, make_sweep, tmp_path: Path
) -> None:
    url = f"file://{tmp_path}"
    # the login among others: the kubelet tries each Secret that names the registry
    await kube.core.create_namespaced_secret(namespace, _foreign_secret("regcred"))
    # Always: the kubelet asks the registry even for an image on the node, so the login is checked
    body = make_sweep("pull-ok", store_url=url, tasks=["hello-file"], suspend=True, imagePullPolicy="Always",
                      imagePullSecrets=[{"name": "regcred"}, {"name": "registry-login"}])
    found = await _checks(kube, namespace, body, url)
    assert found[checks.IMAGES].verdict is checks.Verdict.PASSED, found[checks.IMAGES]
    assert found[checks.STACK].verdict is checks.Verdict.PASSED, found[checks.STACK]
    assert all(image.startswith(registry_address() + "/") for image in (
        body["spec"]["stack"]["image"], body["spec"]["operatorImage"], body["spec"]["taskImageRegistry"]))


async def test_a_wrong_password_is_named_as_the_login(  # type: ignore[no-untyped-def]
    kube: Kube, namespace, crds, sweep_secrets, make_sweep, local_registry: str, tmp_path: Path
) -> None:
    url = f"file://{tmp_path}"
    await kube.core.create_namespaced_secret(namespace, dockerconfig_secret("stale-login", _wrong_password(local_registry)))
    body = make_sweep("pull-denied", store_url=url, tasks=["hello-file"], suspend=True, imagePullPolicy="Always",
                      imagePullSecrets=[{"name": "stale-login"}])
    found = await _checks(kube, namespace, body, url)
    detail = found[checks.IMAGES].detail
    assert found[checks.IMAGES].verdict is checks.Verdict.FAILED, detail
    assert checks.PULL_DENIED in detail and "spec.imagePullSecrets" in detail, detail


async def test_a_missing_tag_is_named_with_its_task(  # type: ignore[no-untyped-def]
    kube: Kube, namespace, crds, sweep_secrets, make_sweep, tmp_path: Path
) -> None:
    url = f"file://{tmp_path}"
    # a repository the registry does not hold: hello-file's tag under another prefix
    body = make_sweep("pull-absent", store_url=url, tasks=["hello-file"], suspend=True,
                      taskImageRegistry=in_registry("docker.io/no-such-tasks"))
    found = await _checks(kube, namespace, body, url)
    detail = found[checks.IMAGES].detail
    assert found[checks.IMAGES].verdict is checks.Verdict.FAILED, detail
    assert detail.startswith("spec.taskImageRegistry: task hello-file: "), detail
    assert checks.PULL_NOT_FOUND in detail, detail


async def test_an_unreachable_registry_is_named(  # type: ignore[no-untyped-def]
    kube: Kube, namespace, crds, sweep_secrets, make_sweep, tmp_path: Path
) -> None:
    url = f"file://{tmp_path}"
    host = registry_address().rsplit(":", 1)[0]
    # nothing listens there: the node's dial is refused
    body = make_sweep("pull-unreachable", store_url=url, tasks=["hello-file"], suspend=True,
                      stack={"image": f"{host}:{free_port(host)}/buzz/stack:dev", "layout": "folder"})
    found = await _checks(kube, namespace, body, url)
    detail = found[checks.IMAGES].detail
    assert found[checks.IMAGES].verdict is checks.Verdict.FAILED, detail
    assert detail.startswith(f"spec.stack: {checks.PULL_UNREACHABLE}"), detail
