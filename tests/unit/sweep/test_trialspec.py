"""A planned trial's spec from a real task directory and a real condition manifest."""

from __future__ import annotations

from pathlib import Path

import pytest
from buzz_operator.api import BuzzTrialSpec, validate_sweep_spec, validate_trial_spec
from buzz_operator.api.stack import StackLayout, StackSource
from buzz_operator.condition.manifest import ExperimentManifest
from buzz_operator.dataset.task import load_task
from buzz_operator.sweep.planner import PlannedTrial, plan_trials
from buzz_operator.sweep.trialspec import build_trial_spec, trial_object

REPO = Path(__file__).resolve().parents[3]
TASK = load_task(REPO / "tasks" / "reply-to-thread")
MANIFEST = ExperimentManifest.load(REPO / "manifests" / "standin-oracle.yaml")
HASH = MANIFEST.sha256
SWEEP = validate_sweep_spec(
    {
        "condition": {"configMapRef": {"name": "standin-oracle"}},
        "dataset": {"builtin": {}},
        "attempts": 2,
        "timeoutMultiplier": 2.0,
        "runtimeClassName": "gvisor",
        "relay": {
            "url": "ws://localhost:3600",
            "serviceRef": {"name": "buzz-dev-relay", "port": 3600},
            "ownerKeySecretRef": {"name": "buzz-dev-relay", "key": "owner-key"},
            "postgresDsnSecretRef": {"name": "buzz-dev-relay", "key": "postgres-dsn"},
        },
    }
)


DEFAULT_STACK = StackSource(image="docker.io/buzz/stack:dev", layout=StackLayout.FOLDER)


def _spec(manifest: ExperimentManifest = MANIFEST, sweep=SWEEP) -> tuple[PlannedTrial, BuzzTrialSpec]:  # type: ignore[no-untyped-def]
    planned = plan_trials("demo-oracle", "uid-1", HASH, [TASK.name], 2)[1]
    spec = build_trial_spec(
        planned,
        task=TASK,
        manifest=manifest,
        condition_hash=HASH,
        sweep=sweep,
        dataset="buzz-native",
        default_stack=DEFAULT_STACK,
        default_operator_image="docker.io/buzz/operator:dev",
    )
    return planned, spec


def test_spec_resolves_image_resources_and_deadlines() -> None:
    _, spec = _spec()
    assert spec.to_api() == {
        "sweepName": "demo-oracle",
        "task": "reply-to-thread",
        "taskDigest": TASK.digest,
        "attempt": 2,
        "conditionHash": HASH,
        "image": TASK.image_ref("docker.io/buzz-tasks", "buzz-native"),
        "stack": {"image": "docker.io/buzz/stack:dev", "layout": "folder", "mount": "copy"},
        "operatorImage": "docker.io/buzz/operator:dev",
        "imagePullPolicy": "IfNotPresent",
        "runtimeClassName": "gvisor",
        "endpoints": ["standin/oracle"],
        "resources": {"cpus": 1.0, "memoryMB": 1024, "storageMB": 1024, "limitMultiple": 1.0, "unlimited": False},
        "deadlines": {
            "scheduleSeconds": 600,  # the pod start and setup are not × timeoutMultiplier
            "setupSeconds": 120,
            # task: 300 s × 2 = 600 s; the manifest's 300 s budget is shorter and wins.
            "agentSeconds": 300,
            "agentSource": "manifest",
            "collectSeconds": 300,
            "verifierSeconds": 60,
            "uploadSeconds": 300,
        },
        "retry": {"maxRetries": 2, "backoffSeconds": 10, "maxBackoffSeconds": 300},
    }
    assert validate_trial_spec(spec.to_api()) == spec


def test_condition_overrides_replace_task_resources() -> None:
    data = MANIFEST.model_dump(mode="json")
    data["environment"] = {"override_cpus": 4, "override_memory_mb": 8192}
    _, spec = _spec(ExperimentManifest.load(data))
    assert (spec.resources.cpus, spec.resources.memory_mb, spec.resources.storage_mb) == (4, 8192, 1024)


def test_trial_object_is_owned_by_the_sweep() -> None:
    planned, spec = _spec()
    body = trial_object(planned, spec, namespace="bench", sweep_uid="uid-1")
    assert body["apiVersion"] == "bench.buzz.dev/v1alpha1" and body["kind"] == "BuzzTrial"
    assert body["metadata"] == {
        "name": planned.name,
        "namespace": "bench",
        "labels": planned.labels,
        "ownerReferences": [
            {
                "apiVersion": "bench.buzz.dev/v1alpha1",
                "kind": "BuzzSweep",
                "name": "demo-oracle",
                "uid": "uid-1",
                "controller": True,
                "blockOwnerDeletion": True,
            }
        ],
        # kopf's finalizer from the start: kopf then writes nothing to add it
        "finalizers": ["bench.buzz.dev/finalizer"],
    }
    assert body["spec"] == spec.to_api()


def test_mismatched_task_is_refused() -> None:
    planned = plan_trials("demo-oracle", "uid-1", HASH, ["user-mention"], 1)[0]
    with pytest.raises(ValueError, match="does not match"):
        build_trial_spec(
            planned,
            task=TASK,
            manifest=MANIFEST,
            condition_hash=HASH,
            sweep=SWEEP,
            dataset="buzz-native",
            default_stack=DEFAULT_STACK,
            default_operator_image="o",
        )


def test_the_sweeps_stack_or_its_deprecated_alias_is_planned() -> None:
    sprig = {"image": "ghcr.io/block/sprig:1", "layout": "sprig", "binaryPath": "/usr/bin/sprig"}
    _, spec = _spec(sweep=SWEEP.model_copy(update={"stack": StackSource.model_validate(sprig)}))
    assert spec.to_api()["stack"] == {**sprig, "mount": "copy"} and "stackImage" not in spec.to_api()
    # spec.stackImage keeps meaning what it always did: a folder image
    _, spec = _spec(sweep=SWEEP.model_copy(update={"stack_image": "example.org/my-stack:1"}))
    assert spec.to_api()["stack"] == {"image": "example.org/my-stack:1", "layout": "folder", "mount": "copy"}


def test_a_trial_planned_before_spec_stack_still_reads() -> None:
    _, spec = _spec()
    legacy = {k: v for k, v in spec.to_api().items() if k != "stack"} | {"stackImage": "docker.io/buzz/stack:dev"}
    assert validate_trial_spec(legacy).stack_source == DEFAULT_STACK
