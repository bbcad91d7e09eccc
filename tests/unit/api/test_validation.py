"""validate_sweep_spec / validate_trial_spec: defaults applied, every error names its field."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from buzz_operator.api import SpecError, validate_sweep_spec, validate_trial_spec

SWEEP: dict[str, Any] = {
    "condition": {"configMapRef": {"name": "standin-oracle"}},
    "dataset": {"builtin": {}},
    "relay": {
        "url": "ws://localhost:3600",
        "serviceRef": {"name": "buzz-dev-relay", "port": 3600},
        "ownerKeySecretRef": {"name": "buzz-dev-relay", "key": "owner-key"},
        "postgresDsnSecretRef": {"name": "buzz-dev-relay", "key": "postgres-dsn"},
    },
}

TRIAL: dict[str, Any] = {
    "sweepName": "demo",
    "task": "reply-to-thread",
    "taskDigest": "a" * 64,
    "attempt": 1,
    "conditionHash": "b" * 64,
    "image": "docker.io/buzz-tasks/reply-to-thread:1",
    "stackImage": "buzz-stack:dev",
    "operatorImage": "buzz-operator:dev",
    "resources": {"cpus": 1, "memoryMB": 1024},
    "deadlines": {
        "scheduleSeconds": 600,
        "setupSeconds": 120,
        "agentSeconds": 600,
        "agentSource": "task",
        "collectSeconds": 300,
        "verifierSeconds": 600,
        "uploadSeconds": 300,
    },
}


def _with(base: dict[str, Any], path: str, value: Any) -> dict[str, Any]:
    data = copy.deepcopy(base)
    node = data
    *parents, last = path.split(".")
    for part in parents:
        node = node[part]
    node[last] = value
    return data


def test_defaults_are_applied() -> None:
    spec = validate_sweep_spec(SWEEP)
    assert (spec.attempts, spec.parallelism, spec.timeout_multiplier) == (1, 4, 1.0)
    assert (spec.retry.max_retries, spec.retry.backoff_seconds, spec.retry.max_backoff_seconds) == (
        2,
        10,
        300,
    )
    assert spec.condition.config_map_ref is not None
    assert spec.condition.config_map_ref.manifest_key == "manifest.yaml"
    assert spec.task_image_registry == "docker.io/buzz-tasks"
    assert spec.suspend is False and spec.regrade is False


def test_round_trip_through_the_api_shape() -> None:
    spec = validate_sweep_spec(SWEEP)
    again = validate_sweep_spec(spec.to_api())
    assert again == spec
    assert spec.to_api()["condition"] == {
        "configMapRef": {"name": "standin-oracle", "manifestKey": "manifest.yaml"}
    }


@pytest.mark.parametrize(
    ("path", "value", "message"),
    [
        ("attempts", 0, "spec.attempts: must be >= 1"),
        ("parallelism", 0, "spec.parallelism: must be >= 1"),
        ("timeoutMultiplier", 0, "spec.timeoutMultiplier: must be > 0"),
        ("imagePullPolicy", "Sometimes", "spec.imagePullPolicy: must be one of"),
        ("relay.url", "http://relay:3600", "spec.relay.url: must match"),
        ("relay.serviceRef.port", 0, "spec.relay.serviceRef.port: must be >= 1"),
        ("storage", {"url": "ftp://x"}, "spec.storage.url: must match"),
        ("condition", {}, "spec.condition: needs exactly one of inline, configMapRef (found: none)"),
        (
            "condition",
            {"inline": {"condition": "x"}, "configMapRef": {"name": "y"}},
            "spec.condition: needs exactly one of inline, configMapRef (found: inline, configMapRef)",
        ),
        ("dataset", {}, "spec.dataset: needs exactly one of builtin, configMapRef, objectStore, registry, package"),
        (
            "dataset",
            {"objectStore": {"prefix": "tasks/../../etc"}},
            "spec.dataset.objectStore.prefix: must not",
        ),
        (
            "endpoints",
            {"secretRef": {"name": "keys"}},
            "spec.endpoints: needs exactly one of config, configMapRef",
        ),
        (
            "retry",
            {"backoffSeconds": 60, "maxBackoffSeconds": 5},
            "spec.retry: maxBackoffSeconds must be >= ",
        ),
        ("retry", {"maxRetries": -1}, "spec.retry.maxRetries: must be >= 0"),
        ("budget", {"maxCostUSD": 0}, "spec.budget.maxCostUSD: must be > 0"),
        ("attemps", 3, "spec.attemps: unknown field"),
        ("include", ["ok", 3], "spec.include[1]:"),
        ("rerun", {"reasons": []}, "spec.rerun.reasons:"),
    ],
)
def test_errors_name_the_field(path: str, value: Any, message: str) -> None:
    with pytest.raises(SpecError) as caught:
        validate_sweep_spec(_with(SWEEP, path, value))
    assert str(caught.value).startswith(message), str(caught.value)
    assert caught.value.field == message.split(":")[0]


def test_missing_required_fields_are_each_named() -> None:
    with pytest.raises(SpecError) as caught:
        validate_sweep_spec({})
    assert [field for field, _ in caught.value.problems] == ["spec.condition", "spec.dataset", "spec.relay"]
    assert all(reason == "required" for _, reason in caught.value.problems)


def test_non_object_spec_is_refused() -> None:
    with pytest.raises(SpecError, match="spec: must be an object, not list"):
        validate_sweep_spec([])


def test_python_names_are_accepted_too() -> None:
    data = _with(SWEEP, "attempts", 3)
    data["timeout_multiplier"] = 2.0
    spec = validate_sweep_spec(data)
    assert (spec.attempts, spec.timeout_multiplier) == (3, 2.0)


def test_trial_spec_validates() -> None:
    spec = validate_trial_spec(TRIAL)
    assert spec.resources.memory_mb == 1024
    assert spec.retry.max_retries == 2
    # the headroom is stated, not implied: the box a trial ran in is part of its record
    assert spec.to_api()["resources"] == {"cpus": 1.0, "memoryMB": 1024, "limitMultiple": 1.0, "unlimited": False}


@pytest.mark.parametrize(
    ("path", "value", "field"),
    [
        ("taskDigest", "sha256:" + "a" * 64, "spec.taskDigest"),
        ("conditionHash", "XYZ", "spec.conditionHash"),
        ("attempt", 0, "spec.attempt"),
        ("resources", {"cpus": 0, "memoryMB": 1}, "spec.resources.cpus"),
        ("deadlines", {**TRIAL["deadlines"], "agentSeconds": 0}, "spec.deadlines.agentSeconds"),
    ],
)
def test_trial_spec_errors_name_the_field(path: str, value: Any, field: str) -> None:
    with pytest.raises(SpecError) as caught:
        validate_trial_spec(_with(TRIAL, path, value))
    assert caught.value.field == field
