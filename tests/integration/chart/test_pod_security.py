"""Pod Security admission on the real apiserver (on by default from Kubernetes 1.25): the
operator's pod passes `restricted`, trial pods pass `baseline` (the level the README's "Pod
Security" section tells users to enforce on trial namespaces) and not `restricted`, and a
violating pod is refused. Each pod is created with a server-side dry run, which runs admission
in full (Pod Security included) without starting anything."""

from __future__ import annotations

import json
import subprocess
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from buzz_operator.api.common import ImagePullPolicy
from buzz_operator.api.trial import BuzzTrialSpec, TrialDeadlines, TrialResources
from buzz_operator.pod.trial_pod import build_trial_pod

from tests.support.cluster import OPERATOR_NAMESPACE_LABELS, TRIAL_NAMESPACE_LABELS, create_namespace
from tests.unit.chart.chartlib import SELF_CONTAINED, of_kind, pod_specs, render


def dry_run_create(namespace: str, pod: dict[str, Any]) -> subprocess.CompletedProcess[str]:
    body = {**pod, "metadata": {**pod["metadata"], "namespace": namespace}}
    return subprocess.run(["kubectl", "-n", namespace, "create", "--dry-run=server", "-f", "-"],
                          input=json.dumps(body), capture_output=True, text=True)


@pytest.fixture(scope="module")
def namespaces(kubeconfig: str) -> Iterator[dict[str, str]]:
    suffix = uuid.uuid4().hex[:8]
    names = {"restricted": f"psa-restricted-{suffix}", "baseline": f"psa-baseline-{suffix}"}
    create_namespace(names["restricted"], OPERATOR_NAMESPACE_LABELS)
    create_namespace(names["baseline"], TRIAL_NAMESPACE_LABELS)
    yield names
    for name in names.values():
        subprocess.run(["kubectl", "delete", "namespace", name, "--wait=false"], capture_output=True)


def trial_pod() -> dict[str, Any]:
    spec = BuzzTrialSpec(
        sweep_name="psa", task="hello-file", task_digest="a" * 64, attempt=1,
        condition_hash="0" * 64, image="docker.io/buzz-tasks/hello-file:dev",
        stack_image="docker.io/buzz/stack:dev", operator_image="docker.io/buzz/operator:dev",
        image_pull_policy=ImagePullPolicy.NEVER, resources=TrialResources(cpus=1, memory_mb=512),
        deadlines=TrialDeadlines(schedule_seconds=60, setup_seconds=60, agent_seconds=60, agent_source="task",
                                 collect_seconds=60, verifier_seconds=60, upload_seconds=60),
    )
    pod = build_trial_pod(trial_name="psa-trial", trial_uid=str(uuid.uuid4()), namespace="x", retry=0, spec=spec,
                          trial_labels={}, relay_listen="127.0.0.1:3600", relay_target="10.96.77.10:3600")
    pod["metadata"].pop("ownerReferences")  # the owner does not exist; admission is what is tested
    return pod


def test_the_operator_pod_and_every_chart_pod_pass_restricted(namespaces: dict[str, str]) -> None:
    docs = render(SELF_CONTAINED, release="psa", namespace=namespaces["restricted"])
    for account in of_kind(docs, "ServiceAccount"):  # the pods name them; admission looks them up
        subprocess.run(["kubectl", "-n", namespaces["restricted"], "apply", "-f", "-"], input=json.dumps(account),
                       capture_output=True, text=True, check=True)
    specs = dict(pod_specs(docs))
    assert "Deployment/psa-buzz-operator" in specs, sorted(specs)
    for name, spec in specs.items():
        pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name.split("/")[1]}, "spec": spec}
        done = dry_run_create(namespaces["restricted"], pod)
        assert done.returncode == 0, f"{name}: {done.stderr}"
        assert "violate" not in done.stderr, f"{name}: {done.stderr}"  # warn=restricted would say so


def test_trial_pods_pass_baseline_but_not_restricted(namespaces: dict[str, str]) -> None:
    done = dry_run_create(namespaces["baseline"], trial_pod())
    assert done.returncode == 0, done.stderr
    refused = dry_run_create(namespaces["restricted"], trial_pod())
    # the task container adds a few of Docker's default capabilities and may run as root
    assert refused.returncode != 0 and "violates PodSecurity" in refused.stderr, refused.stderr
    assert "capabilities" in refused.stderr and "runAsNonRoot" in refused.stderr, refused.stderr


def test_a_privileged_pod_is_refused_in_a_trial_namespace(namespaces: dict[str, str]) -> None:
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "privileged"},
           "spec": {"containers": [{"name": "c", "image": "docker.io/buzz/operator:dev",
                                    "securityContext": {"privileged": True}}]}}
    done = dry_run_create(namespaces["baseline"], pod)
    assert done.returncode != 0, "the apiserver admitted a privileged pod into a baseline namespace"
    assert 'violates PodSecurity "baseline:latest"' in done.stderr and "privileged" in done.stderr, done.stderr
