"""Fixtures for the trial pod tests: a fresh namespace per test, the BuzzTrial CRDs, a fresh
Postgres database per test, and the dev relay running in the cluster as a Pod behind a
Service (reached from the host by its ClusterIP while presenting the canonical Host)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from buzz_operator.api.trial import BuzzTrialSpec, TrialResources
from buzz_operator.condition import ExperimentManifest
from buzz_operator.dataset import load_task
from buzz_operator.trial.deadlines import step_deadlines

from tests.support.cluster import (  # noqa: F401  (pytest finds fixtures among a conftest's names)
    ClusterRelay,
    cluster_relay,
    crds,
    host_ip,
    image_volumes,
    kube,
    kubectl,
    local_registry,
    namespace,
    relay_db,
    sweep_secrets,
    with_database,
)

ROOT = Path(__file__).resolve().parents[3]
RELAY_URL = "ws://localhost:3600"


def trial_spec(task_name: str, manifest: ExperimentManifest) -> BuzzTrialSpec:
    task = load_task(ROOT / "tasks" / task_name)
    return BuzzTrialSpec(
        sweep_name="by-hand", task=task.name, task_digest=task.digest, attempt=1,
        condition_hash=manifest.sha256, image=task.image_ref("docker.io/buzz-tasks", "builtin"),
        stack_image="docker.io/buzz/stack:dev", operator_image="docker.io/buzz/operator:dev",
        image_pull_policy="Never", endpoints=["standin/oracle"],
        resources=TrialResources(cpus=0.5, memory_mb=256),
        deadlines=step_deadlines(agent_timeout_sec=60, verifier_timeout_sec=30, build_timeout_sec=120,
                                 manifest_timeout_seconds=manifest.trial_budget.timeout_seconds, multiplier=1.0),
    )


@pytest.fixture
def make_trial_spec() -> object:
    """`make_trial_spec(task_name, manifest)` → a BuzzTrialSpec for a builtin task image."""
    return trial_spec


def standin_condition(
    policy: str = "oracle", *, team: bool = False, timeout_seconds: int | None = None
) -> tuple[dict[str, Any], dict[str, Any]]:
    """(manifest, endpoint config) of the solo (or lead + worker) stand-in condition with every
    seat on `standin/<policy>`."""
    import yaml

    manifest = yaml.safe_load((ROOT / "manifests" / ("standin-team.yaml" if team else "standin-oracle.yaml")).read_text())
    endpoint = f"standin/{policy}"
    manifest["condition"] = f"standin-{policy}{'-team' if team else ''}"
    for entry in manifest["roster"]:
        entry["endpoint"] = endpoint
    manifest["prices"] = {endpoint: next(iter(manifest["prices"].values()))}
    if timeout_seconds is not None:
        manifest["trial_budget"]["timeout_seconds"] = timeout_seconds
    return manifest, {endpoint: {"provider": "standin", "api_key_env": "STANDIN_API_KEY", "env": {}}}


def sweep_body(
    name: str, store_url: str, task: str, policy: str = "oracle", **condition: Any
) -> dict[str, object]:
    """A BuzzSweep (not reconciled here: the test drives the trial) naming the test's relay."""
    from buzz_operator.api.common import GROUP, VERSION

    manifest, endpoints = standin_condition(policy, **condition)
    return {
        "apiVersion": f"{GROUP}/{VERSION}", "kind": "BuzzSweep", "metadata": {"name": name},
        "spec": {
            "condition": {"inline": manifest},
            "endpoints": {"config": endpoints, "secretRef": {"name": "api-keys"}},
            "dataset": {"builtin": {}}, "include": [task], "attempts": 1,
            "relay": {"url": RELAY_URL, "serviceRef": {"name": "relay", "port": 3600},
                      "ownerKeySecretRef": {"name": "relay-owner", "key": "owner-key"},
                      "postgresDsnSecretRef": {"name": "relay-owner", "key": "postgres-dsn"}},
            "storage": {"url": store_url}, "imagePullPolicy": "Never",
        },
    }


@pytest.fixture
def make_sweep() -> object:
    return sweep_body


@pytest.fixture
def make_condition() -> object:
    return standin_condition
