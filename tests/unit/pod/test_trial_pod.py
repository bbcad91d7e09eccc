"""The trial pod, part by part, against golden dicts."""

from __future__ import annotations

import json
from typing import Any

import pytest
from buzz_operator.api.common import ImagePullPolicy
from buzz_operator.api.stack import StackLayout, StackSource
from buzz_operator.api.trial import BuzzTrialSpec, TrialDeadlines, TrialResources
from buzz_operator.pod.trial_pod import build_trial_pod, forwarder_listen_address, task_resources

TRIAL = "demo-oracle-0123456789"
LABELS = {
    "bench.buzz.dev/sweep": "demo-oracle",
    "bench.buzz.dev/task": "reply-to-thread",
    "bench.buzz.dev/attempt": "1",
    "bench.buzz.dev/condition": "0123456789abcdef",
    "app.kubernetes.io/managed-by": "buzz-operator",
}


def _spec(**changes: Any) -> BuzzTrialSpec:
    spec = BuzzTrialSpec(
        sweep_name="demo-oracle",
        task="reply-to-thread",
        task_digest="a" * 64,
        attempt=1,
        condition_hash="0123456789abcdef" + "0" * 48,
        image="docker.io/buzz-tasks/buzz-native-reply-to-thread:0123456789abcdef",
        stack=StackSource(image="docker.io/buzz/stack:dev", layout=StackLayout.FOLDER),
        operator_image="docker.io/buzz/operator:dev",
        resources=TrialResources(cpus=1, memory_mb=1024, storage_mb=2048),
        deadlines=TrialDeadlines(
            schedule_seconds=600,
            setup_seconds=120,
            agent_seconds=600,
            agent_source="task",
            collect_seconds=300,
            verifier_seconds=600,
            upload_seconds=300,
        ),
    )
    return spec.model_copy(update=changes)


def _pod(retry: int = 0, **changes: Any) -> dict[str, Any]:
    return build_trial_pod(
        trial_name=TRIAL,
        trial_uid="5b6f0d5e-0000-4000-8000-000000000001",
        namespace="bench",
        retry=retry,
        spec=_spec(**changes),
        trial_labels=LABELS,
        relay_listen="127.0.0.1:3600",
        relay_target="10.96.77.10:3600",
    )


RESTRICTED = {
    "runAsNonRoot": True,
    "runAsUser": 65532,
    "runAsGroup": 65532,
    "allowPrivilegeEscalation": False,
    "readOnlyRootFilesystem": True,
    "capabilities": {"drop": ["ALL"]},
    "seccompProfile": {"type": "RuntimeDefault"},
}


def test_metadata_golden() -> None:
    assert _pod(retry=1)["metadata"] == {
        "name": "demo-oracle-0123456789-r1",
        "namespace": "bench",
        "labels": {
            **LABELS,
            "bench.buzz.dev/trial": TRIAL,
            "bench.buzz.dev/retry": "1",
            "app.kubernetes.io/component": "trial-pod",
            # the agents phase's egress from creation (docs/egress.md)
            "bench.buzz.dev/phase": "agents",
        },
        "ownerReferences": [
            {
                "apiVersion": "bench.buzz.dev/v1alpha1",
                "kind": "BuzzTrial",
                "name": TRIAL,
                "uid": "5b6f0d5e-0000-4000-8000-000000000001",
                "controller": True,
                "blockOwnerDeletion": True,
            }
        ],
    }
    assert _pod()["metadata"]["name"] == TRIAL
    assert _pod()["apiVersion"] == "v1" and _pod()["kind"] == "Pod"


def test_pod_level_golden() -> None:
    spec = _pod()["spec"]
    assert {k: v for k, v in spec.items() if k not in {"initContainers", "containers"}} == {
        "restartPolicy": "Never",
        "automountServiceAccountToken": False,
        "enableServiceLinks": False,
        "terminationGracePeriodSeconds": 10,
        "securityContext": {"seccompProfile": {"type": "RuntimeDefault"}},
        "volumes": [{"name": "buzz-stack", "emptyDir": {}}, {"name": "logs", "emptyDir": {}}],
    }


# The install scripts, word for word (pod/stack_install.py says why each step is there).
MANIFEST_AND_DIRS = (
    "{ [ -x /opt/buzz/bin/buzz-acp ] || { echo 'stack: image IMAGE (layout LAYOUT) installs no executable "
    "bin/buzz-acp' >&2; exit 1; }; } && cd /opt/buzz && nl='\n' && seen=\"$nl\" && find bin \\( -type f -o -type l "
    "\\) | LC_ALL=C sort | while IFS= read -r f; do t=$(readlink -f \"$f\") || exit 1; case \"$seen\" in "
    "*\"$nl$t$nl\"*) sum=${seen#*\"$nl$t$nl\"}; sum=${sum%%\"$nl\"*} ;; *) sum=$(sha256sum \"$t\") || exit 1; "
    "sum=${sum%% *}; seen=\"$seen$t$nl$sum$nl\" ;; esac; printf \"%s  %s\\n\" \"$sum\" \"$f\"; done > stack-digests.txt.tmp "
    "&& mv stack-digests.txt.tmp stack-digests.txt && mkdir -p /opt/buzz/logs /opt/buzz/prompts "
    "&& chmod 0777 /opt/buzz/logs /opt/buzz/prompts"
)
FOLDER_INSTALL = (
    "{ [ -d /stack/bin ] || { echo 'stack: no /stack/bin in image docker.io/buzz/stack:dev (layout folder)' >&2; "
    "exit 1; } && cp -R /stack/. /opt/buzz/; } && "
    + MANIFEST_AND_DIRS.replace("IMAGE", "docker.io/buzz/stack:dev").replace("LAYOUT", "folder")
)
SPRIG_INSTALL = (
    "{ [ -f /usr/local/bin/sprig ] || { echo 'stack: no /usr/local/bin/sprig in image ghcr.io/block/sprig:1 "
    "(spec.stack.binaryPath)' >&2; exit 1; } && [ -f /etc/ssl/certs/ca-certificates.crt ] || { echo 'stack: no "
    "/etc/ssl/certs/ca-certificates.crt in image ghcr.io/block/sprig:1' >&2; exit 1; } && mkdir -p /opt/buzz/bin "
    "&& cp /usr/local/bin/sprig /opt/buzz/bin/sprig && chmod 0755 /opt/buzz/bin/sprig && for name in buzz-acp "
    "buzz-agent buzz-dev-mcp buzz rg tree git-credential-nostr git-sign-nostr; do ln -sf sprig /opt/buzz/bin/$name "
    "|| exit 1; done && cp /etc/ssl/certs/ca-certificates.crt /opt/buzz/ca-certificates.crt; } && "
    + MANIFEST_AND_DIRS.replace("IMAGE", "ghcr.io/block/sprig:1").replace("LAYOUT", "sprig")
)


def _stack_golden(image: str, script: str, cpu: str = "1") -> dict[str, Any]:
    return {
        "name": "stack",
        "image": image,
        "imagePullPolicy": "IfNotPresent",
        "command": ["sh", "-c", script],
        "resources": {
            "requests": {"cpu": cpu, "memory": "64Mi"},
            "limits": {"cpu": cpu, "memory": "64Mi"},
        },
        "securityContext": RESTRICTED,
        "terminationMessagePolicy": "FallbackToLogsOnError",
        "volumeMounts": [{"name": "buzz-stack", "mountPath": "/opt/buzz"}],
    }


def test_stack_init_container_golden() -> None:
    stack = _pod()["spec"]["initContainers"][0]
    assert stack == _stack_golden("docker.io/buzz/stack:dev", FOLDER_INSTALL)


def test_sprig_stack_init_container_golden() -> None:
    sprig = StackSource(image="ghcr.io/block/sprig:1", layout=StackLayout.SPRIG)
    stack = _pod(stack=sprig)["spec"]["initContainers"][0]
    assert stack == _stack_golden("ghcr.io/block/sprig:1", SPRIG_INSTALL)


def test_a_trial_planned_with_stack_image_installs_a_folder_image() -> None:
    stack = _pod(stack=None, stack_image="docker.io/buzz/stack:dev")["spec"]["initContainers"][0]
    assert stack == _stack_golden("docker.io/buzz/stack:dev", FOLDER_INSTALL)


def test_task_container_golden() -> None:
    task = _pod()["spec"]["containers"][0]
    assert task == {
        "name": "task",
        "image": "docker.io/buzz-tasks/buzz-native-reply-to-thread:0123456789abcdef",
        "imagePullPolicy": "IfNotPresent",
        "command": ["sh", "-c", 'trap "exit 0" TERM; while :; do sleep 3600 & wait $!; done'],
        "resources": {
            "requests": {"cpu": "1", "memory": "1024Mi", "ephemeral-storage": "2048Mi"},
            "limits": {"cpu": "1", "memory": "1024Mi", "ephemeral-storage": "2048Mi"},
        },
        "securityContext": {
            "privileged": False,
            "allowPrivilegeEscalation": False,
            "capabilities": {
                "drop": ["ALL"],
                "add": [
                    "CHOWN",
                    "DAC_OVERRIDE",
                    "FOWNER",
                    "FSETID",
                    "KILL",
                    "NET_BIND_SERVICE",
                    "SETGID",
                    "SETUID",
                ],
            },
        },
        "volumeMounts": [
            {"name": "buzz-stack", "mountPath": "/opt/buzz"},
            {"name": "logs", "mountPath": "/logs"},
        ],
    }


def test_forwarder_is_a_native_sidecar_after_the_stack_install() -> None:
    spec = _pod()["spec"]
    assert [c["name"] for c in spec["initContainers"]] == ["stack", "forwarder"]
    assert [c["name"] for c in spec["containers"]] == ["task"]
    forwarder = spec["initContainers"][1]
    assert forwarder == {
        "name": "forwarder",
        "image": "docker.io/buzz/operator:dev",
        "imagePullPolicy": "IfNotPresent",
        "restartPolicy": "Always",
        "command": ["relay-forwarder", "127.0.0.1:3600", "10.96.77.10:3600"],
        "resources": {
            "requests": {"cpu": "100m", "memory": "96Mi"},
            "limits": {"cpu": "100m", "memory": "96Mi"},
        },
        "securityContext": RESTRICTED,
    }


def test_every_container_is_guaranteed_qos() -> None:
    spec = _pod()["spec"]
    for container in spec["initContainers"] + spec["containers"]:
        resources = container["resources"]
        assert resources["requests"] == resources["limits"], container["name"]
        assert {"cpu", "memory"} <= set(resources["limits"]), container["name"]


def test_no_secrets_host_access_or_privilege_in_the_pod() -> None:
    pod = _pod()
    text = json.dumps(pod)
    for forbidden in (
        "secretKeyRef",
        "secretRef",
        '"secret"',
        "hostPath",
        "hostNetwork",
        "hostPID",
        "hostIPC",
    ):
        assert forbidden not in text
    for container in pod["spec"]["initContainers"] + pod["spec"]["containers"]:
        assert "env" not in container and "envFrom" not in container
        assert container["securityContext"]["allowPrivilegeEscalation"] is False


def test_pull_policy_and_runtime_class_are_applied() -> None:
    pod = _pod(image_pull_policy=ImagePullPolicy.NEVER, runtime_class_name="gvisor")
    assert pod["spec"]["runtimeClassName"] == "gvisor"
    images = pod["spec"]["initContainers"] + pod["spec"]["containers"]
    assert {container["imagePullPolicy"] for container in images} == {"Never"}
    assert "runtimeClassName" not in _pod()["spec"]


@pytest.mark.parametrize(
    ("cpus", "memory", "storage", "expected"),
    [
        (1, 512, None, {"cpu": "1", "memory": "512Mi"}),
        (0.5, 512, None, {"cpu": "500m", "memory": "512Mi"}),
        (2.25, 8192, 10240, {"cpu": "2250m", "memory": "8192Mi", "ephemeral-storage": "10240Mi"}),
        (0.0001, 64, None, {"cpu": "1m", "memory": "64Mi"}),
    ],
)
def test_task_resource_quantities(
    cpus: float, memory: int, storage: int | None, expected: dict[str, str]
) -> None:
    resources = task_resources(TrialResources(cpus=cpus, memory_mb=memory, storage_mb=storage))
    assert resources == {"requests": expected, "limits": expected}


@pytest.mark.parametrize(
    ("url", "listen"),
    [
        ("ws://localhost:3600", "127.0.0.1:3600"),
        ("wss://localhost:8443/relay", "127.0.0.1:8443"),
    ],
)
def test_forwarder_listens_on_the_canonical_port(url: str, listen: str) -> None:
    assert forwarder_listen_address(url) == listen


def test_non_websocket_relay_urls_are_refused() -> None:
    with pytest.raises(ValueError, match="relay url"):
        forwarder_listen_address("http://localhost:3600")


def test_owner_uid_is_required() -> None:
    with pytest.raises(ValueError, match="BuzzTrial uid must not be empty"):
        build_trial_pod(
            trial_name=TRIAL,
            trial_uid="",
            namespace="bench",
            retry=0,
            spec=_spec(),
            trial_labels=LABELS,
            relay_listen="127.0.0.1:3600",
            relay_target="10.0.0.1:3600",
        )


def test_cpu_request_below_the_limit_when_the_sweep_lowers_it() -> None:
    from buzz_operator.api.trial import TrialResources
    from buzz_operator.pod.trial_pod import task_resources

    full = task_resources(TrialResources(cpus=1, memory_mb=1024))
    assert full["requests"] == full["limits"] == {"cpu": "1", "memory": "1024Mi"}
    shared = task_resources(TrialResources(cpus=1, memory_mb=1024, cpu_request=0.25))
    assert shared["requests"] == {"cpu": "250m", "memory": "1024Mi"}
    assert shared["limits"] == {"cpu": "1", "memory": "1024Mi"}


def test_grading_pod_is_the_task_image_alone_without_token_or_secret() -> None:
    from buzz_operator.pod.trial_pod import build_grading_pod, grading_pod_name

    spec = _spec()
    pod = build_grading_pod(trial_name="t-1", trial_uid="u", namespace="ns", generation=3, spec=spec,
                            trial_labels={"x": "y"})
    assert pod["metadata"]["name"] == grading_pod_name("t-1", 3) == "t-1-regrade-3"
    # grading-phase labels from the start: the chart's grading policies select it (no-network by default)
    assert pod["metadata"]["labels"]["bench.buzz.dev/phase"] == "grading"
    assert pod["metadata"]["labels"]["bench.buzz.dev/network"] == "no-network"
    assert pod["metadata"]["ownerReferences"][0]["uid"] == "u"
    body = pod["spec"]
    assert body["automountServiceAccountToken"] is False and "initContainers" not in body
    [task] = body["containers"]
    assert task["image"] == spec.image and task["securityContext"]["allowPrivilegeEscalation"] is False
    assert "env" not in task and "envFrom" not in task


def test_pull_secrets_reach_every_pod_of_the_trial() -> None:
    from buzz_operator.api.common import LocalObjectRef
    from buzz_operator.pod.trial_pod import build_grading_pod
    from buzz_operator.preflight import canary

    assert "imagePullSecrets" not in _pod()["spec"]  # none asked for: the pod is as it always was
    refs = [LocalObjectRef(name="regcred"), LocalObjectRef(name="mirror")]
    wanted = [{"name": "regcred"}, {"name": "mirror"}]
    assert _pod(image_pull_secrets=refs)["spec"]["imagePullSecrets"] == wanted
    grading = build_grading_pod(trial_name=TRIAL, trial_uid="u", namespace="bench", generation=2,
                                spec=_spec(image_pull_secrets=refs), trial_labels=LABELS)
    assert grading["spec"]["imagePullSecrets"] == wanted
    probe = canary.canary_pod(sweep="s", sweep_uid="u", namespace="bench", stack=_spec().stack_source,
                              operator_image="op", task_images=["t"], pull_policy="IfNotPresent",
                              image_pull_secrets=["regcred", "mirror"])
    assert probe["spec"]["imagePullSecrets"] == wanted


def _millicores(quantity: str) -> int:
    return int(quantity[:-1]) if quantity.endswith("m") else int(float(quantity) * 1000)


def _effective_cpu_request(pod: dict[str, Any]) -> int:
    """The scheduler's figure (KEP-753): the larger of each plain init container's request plus
    the sidecars started before it, and the sum of the containers and every sidecar."""
    spec, sidecars, init_peak = pod["spec"], 0, 0
    for init in spec["initContainers"]:
        request = _millicores(init["resources"]["requests"]["cpu"])
        if init.get("restartPolicy") == "Always":
            sidecars += request
        else:
            init_peak = max(init_peak, sidecars + request)
    running = sidecars + sum(_millicores(c["resources"]["requests"]["cpu"]) for c in spec["containers"])
    return max(init_peak, running)


@pytest.mark.parametrize(("cpus", "cpu_request", "stack_cpu"), [(1, None, "1"), (2, None, "2"), (1, 0.25, "250m")])
def test_the_stack_install_runs_on_the_task_containers_share(cpus: float, cpu_request: float | None,
                                                             stack_cpu: str) -> None:
    from buzz_operator.api.trial import TrialResources
    from buzz_operator.pod.trial_pod import FORWARDER_RESOURCES

    pod = _pod(resources=TrialResources(cpus=cpus, memory_mb=1024, cpu_request=cpu_request))
    stack = pod["spec"]["initContainers"][0]
    assert stack["resources"]["requests"]["cpu"] == stack["resources"]["limits"]["cpu"] == stack_cpu
    task = pod["spec"]["containers"][0]["resources"]["requests"]["cpu"]
    # the pod asks the scheduler for no more than before: the task's share and the forwarder's
    assert _effective_cpu_request(pod) == _millicores(task) + _millicores(FORWARDER_RESOURCES["cpu"])


def test_task_env_and_working_dir_are_the_task_containers_in_both_pods() -> None:
    """task.toml's [environment] env and workdir are set on the task container, which every exec
    (agents, verifier) inherits; the grading pod runs the verifier in the same surroundings."""
    from buzz_operator.pod.trial_pod import build_grading_pod

    spec = _spec(task_env={"MODE": "fast", "URL": "x${HOME}y"}, working_dir="/app")
    for pod in (_pod(task_env=spec.task_env, working_dir="/app"),
                build_grading_pod(trial_name="t-1", trial_uid="u", namespace="ns", generation=1, spec=spec,
                                  trial_labels={})):
        [task] = [c for c in pod["spec"]["containers"] if c["name"] == "task"]
        assert task["env"] == [{"name": "MODE", "value": "fast"}, {"name": "URL", "value": "x${HOME}y"}]
        assert task["workingDir"] == "/app"
    [task] = [c for c in _pod()["spec"]["containers"] if c["name"] == "task"]
    assert "env" not in task and "workingDir" not in task
