"""Preflight against the real cluster, dev relay, Postgres and a file store: a healthy sweep
passes every check it can see (TLS interception cannot see: this cluster reaches no outside, and
says so), and each planted breakage fails exactly the check that names it.

With the chart's trial NetworkPolicies in the namespace (kube-router enforces them), the canary —
labelled as a trial pod — is held to them: it reaches the relay and an endpoint the policy
admits, the relay closes once it is relabelled for grading, and an endpoint the policy does not
admit fails `agent-egress`, naming the endpoint and the chart value (docs/egress.md)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from buzz_operator.api.common import GROUP, VERSION
from buzz_operator.api.sweep import BuzzSweepSpec
from buzz_operator.condition import ExperimentManifest
from buzz_operator.dev import deploy_model, deploy_relay
from buzz_operator.inputs.fetch.datasets import load_tasks
from buzz_operator.kube import objects
from buzz_operator.kube.client import Kube
from buzz_operator.preflight import canary, checks
from buzz_operator.preflight.drive import runner
from buzz_operator.relay.nostr import Keypair
from buzz_operator.storage.url import open_store
from buzz_operator.sweep.settings import DEFAULT_STACK

from tests.support.cluster import in_registry, kubectl
from tests.unit.chart.chartlib import render


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


MOUNTS = pytest.mark.parametrize("mount", ["copy", "image"])


def _mountable(mount: str, request: pytest.FixtureRequest) -> dict[str, str]:
    """The stand-in stack as spec.stack with this mount; mount image skips, saying so, on a
    runtime without image volumes."""
    if mount == "image":
        request.getfixturevalue("image_volumes")
    return {"image": in_registry(DEFAULT_STACK.image), "layout": DEFAULT_STACK.layout.value, "mount": mount}


@MOUNTS
@pytest.mark.parametrize("runtime", [None, "gvisor"], ids=["runc", "gvisor"])
async def test_healthy_sweep_passes(kube: Kube, namespace, crds, sweep_secrets, make_sweep, tmp_path: Path, mount,  # type: ignore[no-untyped-def]
                                    runtime, request) -> None:
    """Under runc and under gVisor (docs/isolation.md#gvisor): the canary runs under the sweep's
    RuntimeClass, so the stack it installs — copied, or mounted as an image volume — is proven
    to work in the sandbox too."""
    url = f"file://{tmp_path}"
    body = make_sweep("ok", store_url=url, tasks=["hello-file", "user-mention"], suspend=True,
                      stack=_mountable(mount, request), **({"runtimeClassName": runtime} if runtime else {}))
    found = await _run(kube, namespace, body, url)
    verdicts = {name: r.verdict.value for name, r in found.items()}
    print(f"\npreflight on a healthy sweep: {verdicts}")
    seen = {n: v for n, v in verdicts.items() if n != checks.TLS_INTERCEPTION}
    assert set(seen.values()) == {"passed"}, found
    # seen by the operator's own probe, curl or not: the outside is not there, and it says so
    assert found[checks.TLS_INTERCEPTION].verdict is checks.Verdict.SKIPPED, found
    assert found[checks.TLS_INTERCEPTION].detail.startswith("cannot see: files.pythonhosted.org"), found
    # no NetworkPolicy here: the grading phase still reaches the relay, and the check says why
    assert "network=public" in found[checks.GRADING_PHASE].detail
    assert "no policy enforces" in found[checks.GRADING_PHASE].detail, found[checks.GRADING_PHASE]
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
                      stackImage=in_registry("docker.io/buzz/no-such-stack:0"))
    found = await _run(kube, namespace, body, url)
    assert found[checks.IMAGES].verdict is checks.Verdict.FAILED, found
    assert found[checks.IMAGES].detail.startswith(f"spec.stackImage: {checks.PULL_NOT_FOUND}: ImagePullFailed"), \
        found[checks.IMAGES]
    assert found[checks.TRUST_STORE].verdict is checks.Verdict.SKIPPED


async def test_a_missing_mounted_stack_image_names_spec_stack(  # type: ignore[no-untyped-def]
        kube: Kube, namespace, crds, sweep_secrets, make_sweep, tmp_path: Path, image_volumes) -> None:
    """With mount image the stack is a volume of the task container: the kubelet's complaint is
    the task container's, and the check still names the stack's field."""
    url = f"file://{tmp_path}"
    body = make_sweep("nomount", store_url=url, tasks=["hello-file"], suspend=True,
                      stack={"image": in_registry("docker.io/buzz/no-such-stack:0"), "layout": "folder", "mount": "image"})
    found = await _run(kube, namespace, body, url)
    assert found[checks.IMAGES].verdict is checks.Verdict.FAILED, found
    detail = found[checks.IMAGES].detail
    assert detail.startswith(f"spec.stack: {checks.PULL_NOT_FOUND}: ImagePullFailed"), detail
    assert in_registry("docker.io/buzz/no-such-stack:0") in detail, detail


def apply_trial_policies(namespace: str, trial_policy: dict[str, Any]) -> None:
    """The chart's trial NetworkPolicies for `trial_policy` (trialNetworkPolicy values), in `namespace`."""
    docs = [d for d in render(release="pf", namespace=namespace, values={"trialNetworkPolicy": trial_policy})
            if d["kind"] == "NetworkPolicy"]
    assert len(docs) >= 2
    kubectl("-n", namespace, "apply", "-f", "-",
            stdin=json.dumps({"apiVersion": "v1", "kind": "List", "items": docs}))


# runc, the cluster's default, and gVisor (hack/gvisor.sh): the canary runs under the sweep's
# RuntimeClass, so this proves kube-router's policies hold a sandboxed pod too — gVisor's own
# network stack sends through the pod's veth, where the host's rules apply (docs/isolation.md)
RUNTIMES = pytest.mark.parametrize("runtime", [None, "gvisor"], ids=["runc", "gvisor"])


async def test_a_missing_runtime_class_is_refused_naming_the_field(  # type: ignore[no-untyped-def]
        kube: Kube, namespace, crds, sweep_secrets, make_sweep, tmp_path: Path) -> None:
    url = f"file://{tmp_path}"
    body = make_sweep("noclass", store_url=url, tasks=["hello-file"], suspend=True, runtimeClassName="no-such-class")
    found = await _run(kube, namespace, body, url)
    assert found[checks.IMAGES].verdict is checks.Verdict.FAILED, found
    detail = found[checks.IMAGES].detail
    assert detail.startswith("spec.runtimeClassName: the cluster has no usable RuntimeClass 'no-such-class'"), detail


@RUNTIMES
async def test_the_canary_is_held_to_the_trial_policies(  # type: ignore[no-untyped-def]
    kube: Kube, namespace, crds, sweep_secrets, make_sweep, tmp_path: Path, runtime: str | None
) -> None:
    model = await deploy_model.deploy(kube, namespace)
    relay_pod = deploy_relay.relay_pod("relay", image="i", relay_url="ws://localhost:3600", owner_pubkey="0" * 64,
                                       secret="s")
    relay_policy = {"podSelector": relay_pod["metadata"]["labels"], "ports": [deploy_relay.RELAY_PORT]}
    url = f"file://{tmp_path}"

    def sweep(name: str) -> dict[str, Any]:
        body = make_sweep(name, store_url=url, tasks=["hello-file"], suspend=True,
                          **({"runtimeClassName": runtime} if runtime else {}))
        # the stand-in's endpoint with a base URL, as a scripted condition's: agents would dial it
        for entry in body["spec"]["endpoints"]["config"].values():
            entry["env"] = {"OPENAI_COMPAT_BASE_URL": model.base_url}
        return body  # type: ignore[no-any-return]

    # admitted: the relay by its pods' labels, the model Service's pods by theirs
    apply_trial_policies(namespace, {"relay": relay_policy, "endpoints": [
        {"podSelector": {"app.kubernetes.io/name": deploy_model.LABEL}, "ports": [deploy_model.MODEL_PORT]}]})
    found = await _run(kube, namespace, sweep("held"), url)
    print(f"\npreflight under the trial policies: { {n: (r.verdict.value, r.detail) for n, r in found.items()} }")
    assert found[checks.AGENT_EGRESS].verdict is checks.Verdict.PASSED, found[checks.AGENT_EGRESS]
    assert "1 endpoint URL" in found[checks.AGENT_EGRESS].detail
    grading = found[checks.GRADING_PHASE]
    assert grading.verdict is checks.Verdict.PASSED and "the relay is closed to it" in grading.detail, grading
    assert not checks.first_failure(list(found.values())), found

    # the model is not admitted (only an outside range on 443): every trial's agents would fail
    apply_trial_policies(namespace, {"relay": relay_policy, "endpoints": [{"cidr": "203.0.113.0/24", "ports": [443]}]})
    found = await _run(kube, namespace, sweep("held-out"), url)
    blocked = found[checks.AGENT_EGRESS]
    print(f"\npreflight with the endpoint not admitted: {blocked}")
    assert blocked.verdict is checks.Verdict.FAILED, blocked
    assert "endpoint standin/oracle (OPENAI_COMPAT_BASE_URL)" in blocked.detail, blocked
    assert "trialNetworkPolicy.endpoints" in blocked.detail and "trialNetworkPolicy.relay" not in blocked.detail
    assert model.cluster_ip not in blocked.detail  # names the endpoint, never its address
    first = checks.first_failure(list(found.values()))
    assert first is not None and checks.failure_reason(first) == "PreflightAgentEgressFailed"
    assert checks.failure_message(first).startswith("preflight check agent-egress failed: ")
