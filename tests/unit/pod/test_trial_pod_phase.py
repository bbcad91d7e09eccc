"""A trial pod's egress phase labels (docs/egress.md): created in the agents phase, relabelled for
grading with the network the task allows its verifier, resolved as Harbor resolves it."""

from __future__ import annotations

import tomllib

import pytest
from buzz_operator.api import labels as L
from buzz_operator.dataset.config import TaskConfig, VerifierSection
from buzz_operator.pod.trial_pod import NETWORKS, grading_labels, grading_network, pod_labels, policy_labels
from pydantic import ValidationError


def config(toml: str) -> TaskConfig:
    return TaskConfig.model_validate(tomllib.loads(toml))


@pytest.mark.parametrize(
    ("toml", "network"),
    [
        ("", "public"),  # Harbor's default
        ('[environment]\nnetwork_mode = "no-network"', "no-network"),
        ('[environment]\nnetwork_mode = "allowlist"\nallowed_hosts = ["pypi.org"]', "allowlist"),
        # the verifier's own override wins over the environment's baseline
        ('[environment]\nnetwork_mode = "no-network"\n[verifier]\nnetwork_mode = "public"', "public"),
        ('[verifier]\nnetwork_mode = "no-network"', "no-network"),
        # Harbor's deprecated allow_internet counts only where network_mode is not written
        ("[environment]\nallow_internet = false", "no-network"),
        ("[environment]\nallow_internet = true", "public"),
        ('[environment]\nallow_internet = false\nnetwork_mode = "public"', "public"),
        # ... or allowed_hosts (Harbor's handle_deprecated_environment_allow_internet)
        ('[environment]\nallow_internet = true\nnetwork_mode = "allowlist"\nallowed_hosts = ["pypi.org"]', "allowlist"),
        # the agents' override is the agents' phase, not the verifier's
        ('[agent]\nnetwork_mode = "no-network"', "public"),
    ],
    ids=["default", "no-network", "allowlist", "verifier-override", "verifier-sealed", "allow-internet-false",
         "allow-internet-true", "network-mode-wins", "allowed-hosts-wins", "agent-override-only"],
)
def test_grading_network_is_harbors_verifier_phase_policy(toml: str, network: str) -> None:
    assert grading_network(config(toml)) == network


def test_an_unknown_network_is_refused_and_would_grade_sealed() -> None:
    with pytest.raises(ValidationError) as caught:
        config('[verifier]\nnetwork_mode = "offline"')
    assert [e["loc"] for e in caught.value.errors()] == [("verifier", "network_mode")]
    # a config that got past the loader some other way still fails closed
    forged = config("").model_copy(update={"verifier": VerifierSection.model_construct(network_mode="offline")})
    assert grading_network(forged) == "no-network"


def test_the_builtin_tasks_grade_with_the_network_they_declare() -> None:
    from buzz_operator.dataset.suite import builtin_dataset_path, load_dataset

    tasks = load_dataset(builtin_dataset_path())
    assert tasks
    for task in tasks:
        assert grading_network(task.config) == task.config.environment.network_mode == "public", task.name


def test_pods_start_in_the_agents_phase_and_grade_with_a_network_label() -> None:
    labels = pod_labels({"bench.buzz.dev/sweep": "s"}, "t1", 2)
    assert labels[L.PHASE] == L.PHASE_AGENTS and policy_labels().items() <= labels.items()
    assert L.NETWORK not in labels  # the task's network is only set with the grading phase
    for network in NETWORKS:
        assert grading_labels(network) == {L.PHASE: L.PHASE_GRADING, L.NETWORK: network}
    with pytest.raises(ValueError, match="unknown task network"):
        grading_labels("everything")
