"""Preflight verdicts: only a positive sign of breakage fails; what cannot be seen says so
(skipped, `cannot see: …`), never a pass."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from buzz_operator.api import labels as L
from buzz_operator.api.stack import StackLayout, StackMount, StackSource
from buzz_operator.pod.base import RESTRICTED_SECURITY_CONTEXT
from buzz_operator.pod.stack_install import render_manifest
from buzz_operator.pod.trial_pod import (
    LOGS_MOUNT,
    LOGS_VOLUME,
    pod_labels,
    stack_container,
    stack_mounts,
    stack_volumes,
)
from buzz_operator.preflight import canary, checks
from buzz_operator.preflight.checks import Verdict

NOW = datetime(2026, 1, 1, tzinfo=UTC)


@pytest.mark.parametrize(("line", "verdict"), [
    ("present", Verdict.PASSED), ("seeded", Verdict.PASSED), ("failed", Verdict.FAILED), ("", Verdict.SKIPPED),
])
def test_trust_store(line: str, verdict: Verdict) -> None:
    assert checks.trust_store_verdict(line).verdict is verdict


def test_verifier_deps_unavailable_fails_only_when_the_outside_is_reachable() -> None:
    assert checks.verifier_deps_verdict("present", outside_reachable=None).verdict is Verdict.PASSED
    assert checks.verifier_deps_verdict("installed", outside_reachable=True).verdict is Verdict.PASSED
    sealed = checks.verifier_deps_verdict("unavailable", outside_reachable=None, network="no-network")
    assert sealed.verdict is Verdict.SKIPPED and sealed.detail.startswith("cannot see: ")
    assert "no-network" in sealed.detail
    # the seed's main canary failure: the outside is there, yet curl cannot be installed
    broken = checks.verifier_deps_verdict("unavailable", outside_reachable=True)
    assert broken.verdict is Verdict.FAILED and "curl" in broken.detail
    assert checks.verifier_deps_verdict("", outside_reachable=True).detail.startswith("cannot see: ")


def test_tls_interception() -> None:
    no_egress = checks.tls_verdict({"error": "dns"}, network="public")
    assert no_egress.verdict is Verdict.SKIPPED and no_egress.detail.startswith("cannot see: ")
    assert "does not resolve" in no_egress.detail
    refused = checks.tls_verdict({"error": "TimeoutError: timed out"})
    assert refused.verdict is Verdict.SKIPPED and "TimeoutError" in refused.detail
    clean = checks.tls_verdict({"issuer": "C=US; O=Let's Encrypt; CN=R3"})
    assert clean.verdict is Verdict.PASSED
    result = checks.tls_verdict({"issuer": "C=US; O=Zscaler Inc.; CN=Zscaler Intermediate Root CA"})
    assert result.verdict is Verdict.FAILED and "Zscaler" in result.detail
    assert checks.outside_reachable(clean) is True and checks.outside_reachable(result) is True
    assert checks.outside_reachable(no_egress) is None
    unseen = checks.tls_verdict(None, why_not="the probe exited 127")
    assert unseen.verdict is Verdict.SKIPPED and unseen.detail == "cannot see: the probe exited 127"


def test_agent_egress_fails_naming_the_value_that_admits_each_target() -> None:
    ok = checks.agent_egress_verdict({"relay": "open", "endpoint scripted/oracle (OPENAI_COMPAT_BASE_URL)": "open"})
    assert ok.verdict is Verdict.PASSED and "1 endpoint" in ok.detail
    assert checks.agent_egress_verdict({"relay": "open"}).verdict is Verdict.PASSED  # the stand-in: no URL
    endpoint = checks.agent_egress_verdict({"relay": "open", "endpoint e (X_BASE_URL)": "timeout"})
    assert endpoint.verdict is Verdict.FAILED
    assert "endpoint e (X_BASE_URL): timeout" in endpoint.detail and "trialNetworkPolicy.endpoints" in endpoint.detail
    assert "trialNetworkPolicy.relay" not in endpoint.detail
    relay = checks.agent_egress_verdict({"relay": "refused"})
    assert relay.verdict is Verdict.FAILED and "trialNetworkPolicy.relay" in relay.detail
    assert "trialNetworkPolicy.endpoints" not in relay.detail
    dns = checks.agent_egress_verdict({"relay": "open", "endpoint e (X_BASE_URL)": "dns"})
    assert "dnsResolvers" in dns.detail
    blind = checks.agent_egress_verdict(None, why_not="the probe exited 127 (python3: not found)")
    assert blind.verdict is Verdict.SKIPPED and blind.detail.startswith("cannot see: the probe exited 127")
    assert checks.failure_reason(endpoint) == "PreflightAgentEgressFailed"


def test_grading_phase_fails_when_pods_cannot_be_relabelled() -> None:
    refused = checks.grading_phase_verdict(None, network="public", error="HTTP 403")
    assert refused.verdict is Verdict.FAILED and "patch on pods" in refused.detail and "HTTP 403" in refused.detail
    assert checks.failure_reason(refused) == "PreflightGradingPhaseFailed"
    closed = checks.grading_phase_verdict({"bench.buzz.dev/phase": "grading"}, network="public", relay_after="timeout")
    assert closed.verdict is Verdict.PASSED and "closed" in closed.detail and "network=public" in closed.detail
    unenforced = checks.grading_phase_verdict({}, network="no-network", relay_after="open")
    assert unenforced.verdict is Verdict.PASSED and "no policy enforces" in unenforced.detail


def test_reason_names_the_check() -> None:
    result = checks.failed(checks.RELAY_OWNER_KEY, "spec.relay.ownerKeySecretRef: not admitted")
    assert checks.failure_reason(result) == "PreflightRelayOwnerKeyFailed"
    assert checks.failure_message(result).startswith("preflight check relay-owner-key failed: spec.relay")


def test_unknown_check_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown preflight check"):
        checks.passed("coffee")


def test_missing_endpoint_keys() -> None:
    assert checks.missing_endpoint_keys({"A_KEY": "a", "B_KEY": "b"}, ["B_KEY", "C"]) == ["A_KEY"]


def test_status_round_trip_and_due() -> None:
    results = [checks.passed(checks.RELAY, "ready"), checks.skipped(checks.TLS_INTERCEPTION, "no egress"),
               checks.failed(checks.STORAGE, "spec.storage.url: not writable")]
    status = checks.to_status(results, NOW)
    assert not status.passed
    assert checks.first_failure(checks.from_status(status)) == results[2]
    assert not checks.due(status, NOW + timedelta(seconds=5))
    assert checks.due(status, NOW + timedelta(seconds=checks.RETRY_AFTER_S))
    ok = checks.to_status(results[:2], NOW)
    assert ok.passed and not checks.due(ok, NOW + timedelta(days=1))
    assert checks.due(None, NOW)
    # bounded: one short line per check, whatever the checks said
    long = checks.to_status([checks.failed(checks.POSTGRES, "x" * 5000)], NOW)
    assert len(long.checks[0].detail) <= checks.DETAIL_MAX


def test_canary_pod_starts_every_image_and_installs_the_stack_like_a_trial() -> None:
    stack = StackSource(image="stack:1", layout=StackLayout.SPRIG)
    pod = canary.canary_pod(sweep="s", sweep_uid="u", namespace="ns", stack=stack,
                            operator_image="op:1", task_images=["t1", "t2", "t1", "t3"], pull_policy="IfNotPresent")
    init = pod["spec"]["initContainers"]
    assert init[0] == stack_container(stack, "IfNotPresent")
    assert [c["image"] for c in init] == ["stack:1", "op:1", "t2", "t3"]
    task, probe_container = pod["spec"]["containers"]
    assert task["image"] == "t1" and task["name"] == canary.TASK_CONTAINER
    # the trial's /logs, where its setup command makes the verifier's directories
    assert {"name": LOGS_VOLUME, "mountPath": LOGS_MOUNT} in task["volumeMounts"]
    # the operator's own probe shares the pod's network: the task image need not have curl
    assert probe_container["name"] == canary.PROBE_CONTAINER and probe_container["image"] == "op:1"
    assert probe_container["securityContext"] == RESTRICTED_SECURITY_CONTEXT
    assert pod["metadata"]["ownerReferences"][0]["kind"] == "BuzzSweep"
    assert pod["metadata"]["name"] == "s-preflight"
    many = [f"img{i}" for i in range(canary.MAX_IMAGES + 5)]
    assert canary.covered(many) == (canary.MAX_IMAGES, canary.MAX_IMAGES + 5)
    assert len(canary.canary_name("x" * 300)) <= 63


def test_a_mount_image_canary_gets_the_stack_as_trials_do_without_the_init_copy() -> None:
    stack = StackSource(image="stack:1", layout=StackLayout.FOLDER, mount=StackMount.IMAGE)
    pod = canary.canary_pod(sweep="s", sweep_uid="u", namespace="ns", stack=stack,
                            operator_image="op:1", task_images=["t1"], pull_policy="Never")
    assert [c["name"] for c in pod["spec"]["initContainers"]] == ["operator"]
    task = pod["spec"]["containers"][0]
    assert stack_mounts(stack) == task["volumeMounts"][:2]
    assert stack_volumes(stack, "Never") == pod["spec"]["volumes"][:2]


def test_the_canary_carries_a_trial_pods_policy_labels_and_no_trial_label() -> None:
    pod = canary.canary_pod(sweep="s", sweep_uid="u", namespace="ns", stack=StackSource(image="i", layout=StackLayout.FOLDER),
                            operator_image="op", task_images=["t"], pull_policy="Never")
    found = pod["metadata"]["labels"]
    trial = pod_labels({}, "t1", 0)
    policy = {k: v for k, v in trial.items() if k not in (L.TRIAL, L.RETRY)}
    assert policy.items() <= found.items()
    assert found[L.PHASE] == L.PHASE_AGENTS and found[L.COMPONENT] == "trial-pod"
    # the janitor collects pods with a trial label and no trial: the canary has none
    assert L.TRIAL not in found and found[L.PREFLIGHT] == canary.MARKER


def test_a_failed_image_names_its_spec_field() -> None:
    from buzz_operator.preflight.drive.runner import image_field

    assert image_field("stack: ErrImageNeverPull: Container image ...") == "spec.stack"
    assert image_field("stack: ErrImageNeverPull: Container image ...", "spec.stackImage") == "spec.stackImage"
    assert image_field("operator: ErrImagePull: ...") == "spec.operatorImage"
    assert image_field("task: ErrImageNeverPull: ...") == "spec.taskImageRegistry"
    assert image_field("image-3: ImagePullBackOff") == "spec.taskImageRegistry"
    assert image_field("probe: ErrImageNeverPull: ...") == "spec.operatorImage"
    assert image_field("stack exited 1: Error: stack: no /usr/local/bin/sprig in image s:1") == "spec.stack"


def test_stack_check_keeps_the_digests_the_canary_read() -> None:
    manifest = render_manifest({"buzz-acp": "a" * 64, "sprig": "a" * 64, "buzz": "a" * 64})
    result = checks.stack_verdict(manifest, "spec.stack")
    assert result.verdict is Verdict.PASSED and result.stack is not None
    assert result.stack.binaries == {"buzz": "a" * 64, "buzz-acp": "a" * 64, "sprig": "a" * 64}
    status = checks.to_status([checks.passed(checks.IMAGES), result], NOW)
    assert status.stack == result.stack  # what the lock records
    assert checks.to_status([checks.passed(checks.IMAGES)], NOW).stack is None


@pytest.mark.parametrize(("manifest", "said"), [
    (None, "left no /opt/buzz/stack-digests.txt"),
    ("", "lists no file"),
    ("not a digest line\n", "line 1"),
    (render_manifest({"buzz": "b" * 64}), "no bin/buzz-acp"),
])
def test_stack_check_fails_naming_the_stack_field(manifest: str | None, said: str) -> None:
    result = checks.stack_verdict(manifest, "spec.stackImage")
    assert result.verdict is Verdict.FAILED and result.stack is None
    assert result.detail.startswith("spec.stackImage: ") and said in result.detail, result.detail


def test_stack_check_quotes_a_mount_image_installs_refusal() -> None:
    result = checks.stack_verdict(None, "spec.stack", refusal="stack: the task image has no sha256sum, which …")
    assert result.verdict is Verdict.FAILED
    assert result.detail == "spec.stack: the task image has no sha256sum, which …"


def test_blocking_is_the_first_failure_of_a_failed_preflight() -> None:
    failed = checks.to_status([checks.passed(checks.RELAY), checks.failed(checks.STACK, "spec.stack: x")], NOW)
    assert checks.blocking(failed) == checks.failed(checks.STACK, "spec.stack: x")
    assert checks.blocking(checks.to_status([checks.passed(checks.RELAY)], NOW)) is None
