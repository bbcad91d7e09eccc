"""spec.queueName and the operator default: the trial spec carries the queue, the trial pod Kueue's
label, and without either nothing about the pod changes (docs/queueing.md)."""

from __future__ import annotations

from pathlib import Path

import pytest
from buzz_operator.api import validate_sweep_spec
from buzz_operator.api.stack import StackLayout, StackSource
from buzz_operator.api.validation import SpecError
from buzz_operator.condition.manifest import ExperimentManifest
from buzz_operator.dataset.task import load_task
from buzz_operator.pod.trial_pod import build_trial_pod
from buzz_operator.sweep.planner import plan_trials
from buzz_operator.sweep.settings import OperatorSettings
from buzz_operator.sweep.trialspec import build_trial_spec

REPO = Path(__file__).resolve().parents[3]
TASK = load_task(REPO / "tasks" / "hello-file")
MANIFEST = ExperimentManifest.load(REPO / "manifests" / "standin-oracle.yaml")
RELAY = {"url": "ws://relay.example:3600", "ownerKeySecretRef": {"name": "r", "key": "owner-key"},
         "postgresDsnSecretRef": {"name": "r", "key": "postgres-dsn"}}
QUEUE_LABEL = "kueue.x-k8s.io/queue-name"


def sweep(**fields: object):  # type: ignore[no-untyped-def]
    return validate_sweep_spec({"condition": {"configMapRef": {"name": "c"}}, "dataset": {"builtin": {}},
                                "relay": RELAY, **fields})


def pod_for(spec_fields: dict[str, object], default_queue: str | None = None) -> tuple[dict, dict]:
    planned = plan_trials("s", "uid", MANIFEST.sha256, [TASK.name], 1)[0]
    spec = build_trial_spec(planned, task=TASK, manifest=MANIFEST, condition_hash=MANIFEST.sha256,
                            sweep=sweep(**spec_fields), dataset="builtin",
                            default_stack=StackSource(image="docker.io/buzz/stack:dev", layout=StackLayout.FOLDER),
                            default_operator_image="docker.io/buzz/operator:dev", default_queue_name=default_queue)
    pod = build_trial_pod(trial_name=planned.name, trial_uid="u", namespace="ns", retry=0, spec=spec,
                          trial_labels=dict(planned.labels), relay_listen=None, relay_target=None)
    return spec.to_api(), pod


def test_queue_name_reaches_the_trial_spec_and_the_pod_label() -> None:
    spec, pod = pod_for({"queueName": "team-a", "queueWaitSeconds": 900})
    assert spec["queueName"] == "team-a" and spec["deadlines"]["queueSeconds"] == 900
    assert pod["metadata"]["labels"][QUEUE_LABEL] == "team-a"


def test_operator_default_applies_to_sweeps_without_a_queue_and_a_sweeps_own_wins() -> None:
    assert pod_for({}, default_queue="shared")[1]["metadata"]["labels"][QUEUE_LABEL] == "shared"
    assert pod_for({"queueName": "mine"}, default_queue="shared")[1]["metadata"]["labels"][QUEUE_LABEL] == "mine"


def test_without_a_queue_nothing_changes() -> None:
    spec, pod = pod_for({"queueWaitSeconds": 900})
    assert "queueName" not in spec and "queueSeconds" not in spec["deadlines"]
    assert not any(key.startswith("kueue.x-k8s.io/") for key in pod["metadata"]["labels"])
    assert "schedulingGates" not in pod["spec"]


def test_queue_name_must_fit_a_label_value() -> None:
    with pytest.raises(SpecError, match=r"spec\.queueName: must match"):
        sweep(queueName="Team_A")
    with pytest.raises(SpecError, match=r"spec\.queueName"):
        sweep(queueName="a" * 64)


def test_the_default_queue_comes_from_the_environment_named() -> None:
    assert OperatorSettings.from_env({"BUZZ_DEFAULT_QUEUE_NAME": " shared "}).queue_name == "shared"
    assert OperatorSettings.from_env({}).queue_name is None
    with pytest.raises(ValueError, match="BUZZ_DEFAULT_QUEUE_NAME"):
        OperatorSettings.from_env({"BUZZ_DEFAULT_QUEUE_NAME": "Not A Queue"})
