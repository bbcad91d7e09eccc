"""bench/pod_path.py and bench/node.py: the pieces of the P5 benchmarks that decide what is
measured — the one change made to the operator's trial pod for kwok's nodes, and how many trial
pods a node holds by what the scheduler counts."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "bench"))

from buzz_operator.api.trial import BuzzTrialSpec
from buzz_operator.pod.trial_pod import build_trial_pod, forwarder_listen_address
from node import parse_quantity, pod_requests
from pod_path import KWOK_SELECTOR, KWOK_TOLERATION, on_fake_nodes


def _spec() -> BuzzTrialSpec:
    return BuzzTrialSpec.model_validate({
        "sweepName": "s", "task": "hello-file", "taskDigest": "a" * 64, "attempt": 1, "conditionHash": "b" * 64,
        "image": "docker.io/buzz-tasks/builtin-hello-file:x", "operatorImage": "docker.io/buzz/operator:dev",
        "stack": {"image": "docker.io/buzz/stack:dev", "layout": "folder"},
        "resources": {"cpus": 1, "memoryMB": 1024, "cpuRequest": 0.1},
        "deadlines": {"scheduleSeconds": 60, "setupSeconds": 60, "agentSeconds": 60, "agentSource": "task",
                      "collectSeconds": 60,
                      "verifierSeconds": 60, "uploadSeconds": 60},
    })


def _pod() -> dict:
    return build_trial_pod(trial_name="t", trial_uid="u", namespace="ns", retry=0, spec=_spec(),
                           trial_labels={"app": "x"}, relay_listen=forwarder_listen_address("ws://localhost:3600"),
                           relay_target="10.96.77.10:3600")


def test_the_pod_on_fake_nodes_differs_from_the_operators_only_in_placement() -> None:
    real, fake = _pod(), on_fake_nodes(_pod())
    assert fake["spec"]["nodeSelector"] == KWOK_SELECTOR
    assert fake["spec"]["tolerations"] == [KWOK_TOLERATION]
    for key in ("nodeSelector", "tolerations"):
        fake["spec"].pop(key)
        real["spec"].pop(key, None)
    assert fake == real


def test_quantities_read_as_the_apiserver_writes_them() -> None:
    assert parse_quantity("100m") == pytest.approx(0.1)
    assert parse_quantity("2") == 2.0
    assert parse_quantity("1Gi") == 2**30
    assert parse_quantity("1024Mi") == 2**30
    assert parse_quantity("1500k") == 1.5e6


def test_a_pod_requests_its_containers_and_sidecars_or_its_largest_init_container() -> None:
    def c(cpu: str, memory: str, **extra: str) -> dict:
        return {"resources": {"requests": {"cpu": cpu, "memory": memory}}, **extra}

    pod = {"spec": {"containers": [c("100m", "1Gi")],
                    "initContainers": [c("50m", "64Mi"), c("10m", "16Mi", restartPolicy="Always")]}}
    assert pod_requests(pod) == {"cpu": pytest.approx(0.11), "memory": 2**30 + 16 * 2**20}
    # a plain init container larger than the steady state sets the request (plus the sidecars
    # started before it, here none after it in the list but counted as the scheduler does)
    pod["spec"]["initContainers"][0] = c("2", "64Mi")
    assert pod_requests(pod)["cpu"] == pytest.approx(2.01)


def test_the_operators_trial_pod_requests_what_its_spec_asks() -> None:
    counted = pod_requests(_pod())
    task = next(c for c in _pod()["spec"]["containers"] if c["name"] == "task")
    assert counted["cpu"] >= parse_quantity(task["resources"]["requests"]["cpu"]) == pytest.approx(0.1)
    assert counted["memory"] >= 1024 * 2**20
