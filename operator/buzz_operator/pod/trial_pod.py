"""The trial pod as a plain v1 Pod dict (no client library types: pure and easy to diff).

One pod per try (docs/corridor.md#the-pod):
- init container `stack` installs the agent stack from the stack image into an emptyDir at
  /opt/buzz, the path every seed artifact refers to, per the image's layout (sprig or folder,
  pod/stack_install.py), and leaves the digests of what it installed there — or, with
  `spec.stack.mount: image`, no init container: the stack image is an `image` volume mounted
  read-only at /opt/buzz-image in `task`, and the launch exec links /opt/buzz/bin into it;
- container `task` runs the task image kept alive by a shell loop, so every corridor step
  runs by exec exactly as the seed drove its Docker container;
- native sidecar `forwarder` (an init container with `restartPolicy: Always`, Kubernetes ≥ 1.29),
  only when the relay URL is a loopback address (api/relay.py): it listens there, inside the
  pod's network namespace, and pumps bytes to the relay Service's ClusterIP, so agents dial the
  relay's canonical URL authority (the relay binds tenants to the Host header). As a sidecar it
  is started before the task container and stopped after it, so no step ever runs while the
  relay path is missing, and a forwarder crash is restarted by the kubelet instead of leaving the
  pod half-alive. A relay URL pods can route to is dialled directly, and the pod has no forwarder;
- a compose task's services, native sidecars after the forwarder, each started (and healthy, where
  it has a healthcheck) before the next and before `task`, every name resolving to the pod
  (pod/services.py).

Its labels say which egress it gets (docs/egress.md): `bench.buzz.dev/phase=agents` from
creation, so the chart's agents-phase NetworkPolicy (relay, model endpoints, DNS) selects it while
the seats run; once they are stopped, trial/drive/egress_phase.py relabels it `phase=grading` with the
task's grading network, and the grading policies select it instead.

Nothing secret is in the spec: seat keys and model API keys reach agents through exec
environments, so `kubectl get pod -o yaml` and the pod's own filesystem do not hold them,
and no ServiceAccount token is mounted (the agents are untrusted code): that hardened skeleton,
shared with the grading pod and the preflight canary, is pod/base.py.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from buzz_operator.api import labels
from buzz_operator.api.ownership import owner_reference
from buzz_operator.api.relay import is_loopback_url
from buzz_operator.api.stack import StackMount, StackSource
from buzz_operator.api.trial import BuzzTrialSpec, TrialResources
from buzz_operator.api.trial_names import pod_name
from buzz_operator.condition.paths import REMOTE_ROOT
from buzz_operator.dataset.config import TaskConfig
from buzz_operator.pod.base import (
    empty_dirs,
    guaranteed,
    hardened_pod,
    restricted_container,
    task_image_container,
)
from buzz_operator.pod.services import host_aliases, mounts, service_containers, service_volumes
from buzz_operator.pod.stack_install import IMAGE_ROOT, install_command

STACK_VOLUME = "buzz-stack"
STACK_IMAGE_VOLUME = "buzz-stack-image"  # mount image: the stack image itself
LOGS_VOLUME = "logs"
LOGS_MOUNT = "/logs"
FORWARDER_COMMAND = "relay-forwarder"
# Guaranteed QoS needs requests == limits on every container, the small ones included.
STACK_RESOURCES = {"cpu": "100m", "memory": "64Mi"}
FORWARDER_RESOURCES = {"cpu": "100m", "memory": "96Mi"}


def forwarder_listen_address(relay_url: str) -> str:
    """Where agents' connections to a loopback relay URL land inside the pod (docs/corridor.md#forwarder).

    ws://localhost:3600 → 127.0.0.1:3600, ws://127.0.0.2:3600 → 127.0.0.2:3600 and
    ws://[::1]:3600 → [::1]:3600: the address agents dial, on the pod's own loopback. Acceptance
    refused loopback URLs whose port the unprivileged forwarder cannot bind (api/relay.py); a URL
    that is not loopback has no forwarder at all.
    """
    if not is_loopback_url(relay_url):
        raise ValueError(f"relay url {relay_url[:120]!r} is not a loopback address: pods dial it directly")
    parts = urlsplit(relay_url)
    host = parts.hostname or ""
    address = "127.0.0.1" if host.rstrip(".") == "localhost" else host
    port = parts.port or (443 if parts.scheme == "wss" else 80)
    return f"[{address}]:{port}" if ":" in address else f"{address}:{port}"


def forwarder_container(spec: BuzzTrialSpec, relay_listen: str, relay_target: str) -> dict[str, Any]:
    """The forwarder sidecar: `relay_listen` on the pod's loopback to the relay Service's
    `relay_target` (<ClusterIP>:<port>)."""
    return {
        **restricted_container("forwarder", spec.operator_image, spec.image_pull_policy.value,
                               [FORWARDER_COMMAND, relay_listen, relay_target],
                               resources=guaranteed(FORWARDER_RESOURCES)),
        "restartPolicy": "Always",  # a native sidecar: up before `task`, outlives it
    }


def _quantity_cpu(cpus: float) -> str:
    millis = math.ceil(cpus * 1000)
    return str(millis // 1000) if millis % 1000 == 0 else f"{millis}m"


def task_resources(resources: TrialResources) -> dict[str, dict[str, str]]:
    """The task container's requests (task.toml's, or the sweep's share of them) and limits
    (task.toml's × the sweep's multiple, or no CPU and memory limit): docs/resources.md#headroom.
    Ephemeral storage is requested and limited as task.toml asks."""
    requests = {"cpu": _quantity_cpu(resources.cpus), "memory": f"{resources.memory_mb}Mi"}
    if resources.cpu_request is not None and resources.cpu_request < resources.cpus:
        requests["cpu"] = _quantity_cpu(resources.cpu_request)
    if resources.memory_request_mb is not None and resources.memory_request_mb < resources.memory_mb:
        requests["memory"] = f"{resources.memory_request_mb}Mi"
    multiple = resources.limit_multiple
    limits = {} if resources.unlimited else {
        "cpu": _quantity_cpu(resources.cpus * multiple),
        "memory": f"{math.ceil(resources.memory_mb * multiple)}Mi",
    }
    if resources.storage_mb is not None:
        requests["ephemeral-storage"] = limits["ephemeral-storage"] = f"{resources.storage_mb}Mi"
    return {"requests": requests, "limits": limits}


# The networks a task can allow its verifier (Harbor's NetworkMode), as label values.
NETWORK_PUBLIC, NETWORK_ALLOWLIST, NETWORK_NONE = "public", "allowlist", "no-network"
NETWORKS = (NETWORK_PUBLIC, NETWORK_ALLOWLIST, NETWORK_NONE)


def policy_labels() -> dict[str, str]:
    """What the chart's trial NetworkPolicies select a pod by, in its agents phase: every trial
    pod carries these, and so does the preflight canary, so it proves what trials get."""
    return {
        labels.COMPONENT: labels.TRIAL_POD,
        labels.MANAGED_BY: labels.MANAGER,
        labels.PHASE: labels.PHASE_AGENTS,
    }


def pod_labels(trial_labels: Mapping[str, str], trial_name: str, retry: int,
               queue_name: str | None = None) -> dict[str, str]:
    # Kueue's label only with a queue: without one the pod is exactly what it was before Kueue
    # (docs/queueing.md#plain-pods), and Kueue, if installed, leaves it alone
    queue = {labels.KUEUE_QUEUE_NAME: queue_name} if queue_name else {}
    return {
        **trial_labels,
        labels.TRIAL: trial_name,
        labels.RETRY: str(retry),
        **policy_labels(),
        **queue,
    }


def grading_labels(network: str) -> dict[str, str]:
    """The labels a trial pod takes once its agents are stopped: the grading policies select
    `phase=grading`, and open the mirrors (public, allowlist) and the internet (public) by
    `network`."""
    if network not in NETWORKS:
        raise ValueError(f"unknown task network {network!r} (one of {', '.join(NETWORKS)})")
    return {labels.PHASE: labels.PHASE_GRADING, labels.NETWORK: network}


def grading_network(config: TaskConfig) -> str:
    """The network the task allows its verifier, resolved as Harbor resolves the verifier
    phase's policy (TaskConfig.verifier_network, after harbor/trial/network_policy.py):
    `[verifier] network_mode` when the task sets it, else `[environment] network_mode`, which
    Harbor's deprecated `allow_internet` sets where neither network_mode nor allowed_hosts is
    written. The loader refuses a network Harbor does not know; anything else grades with no
    network (fail closed).
    """
    network = config.verifier_network().network_mode
    return network if network in NETWORKS else NETWORK_NONE


def stack_container(source: StackSource, pull_policy: str, cpu: str = STACK_RESOURCES["cpu"]) -> dict[str, Any]:
    """The init container that installs the stack into the /opt/buzz emptyDir, as the
    unprivileged init user (the trial pod's and the preflight canary's).

    A trial pod's gives it the task container's CPU request: it runs before that container and
    before the forwarder, so the pod's effective request is unchanged (the scheduler takes the
    larger of an init container's and the running containers' sum), while at 100m copying and
    hashing the stack was the slowest container start of the trial pod (bench/trial.py)."""
    return {
        **restricted_container("stack", source.image, pull_policy, ["sh", "-c", install_command(source)],
                               resources=guaranteed({**STACK_RESOURCES, "cpu": cpu})),
        # an install that refuses the image says why on stderr; the kubelet keeps that as the
        # container's termination message, which the failure reason quotes (kube/pods.py)
        "terminationMessagePolicy": "FallbackToLogsOnError",
        "volumeMounts": [{"name": STACK_VOLUME, "mountPath": REMOTE_ROOT}],
    }


def stack_volumes(source: StackSource, pull_policy: str) -> list[dict[str, Any]]:
    """The /opt/buzz emptyDir, and with mount image the stack image as a volume: the kubelet
    pulls it as it pulls a container's image, with the same policy and pull Secrets."""
    image = [{"name": STACK_IMAGE_VOLUME, "image": {"reference": source.image, "pullPolicy": pull_policy}}]
    return [*empty_dirs(STACK_VOLUME), *(image if source.mount is StackMount.IMAGE else [])]


def stack_mounts(source: StackSource) -> list[dict[str, Any]]:
    """Where the task container sees the stack: /opt/buzz (writable: logs, prompts, the CA file),
    and with mount image the image read-only beside it, which bin/'s links point into."""
    image = [{"name": STACK_IMAGE_VOLUME, "mountPath": IMAGE_ROOT, "readOnly": True}]
    return [{"name": STACK_VOLUME, "mountPath": REMOTE_ROOT}, *(image if source.mount is StackMount.IMAGE else [])]


def stack_init(source: StackSource, pull_policy: str, cpu: str = STACK_RESOURCES["cpu"]) -> list[dict[str, Any]]:
    """The `stack` init container with mount copy; none with mount image (the launch installs)."""
    return [] if source.mount is StackMount.IMAGE else [stack_container(source, pull_policy, cpu)]


def task_container(spec: BuzzTrialSpec, extra_mounts: list[dict[str, str]]) -> dict[str, Any]:
    """The task image kept alive for exec, with /logs and the given mounts; task.toml's literal
    environment and working directory on the container, which every exec inherits (Harbor sets
    them on each command it runs in the environment)."""
    compose = mounts(spec.compose, spec.compose.task_mounts) if spec.compose is not None else []
    container = task_image_container("task", spec.image, spec.image_pull_policy.value,
                                     resources=task_resources(spec.resources),
                                     mounts=[*extra_mounts, *compose, {"name": LOGS_VOLUME, "mountPath": LOGS_MOUNT}])
    if spec.task_env:
        container["env"] = [{"name": name, "value": value} for name, value in spec.task_env.items()]
    if spec.working_dir:
        container["workingDir"] = spec.working_dir
    return container


def pull_secret_names(spec: BuzzTrialSpec) -> list[str]:
    """spec.imagePullSecrets (copied from the sweep) as the pod base takes them."""
    return [ref.name for ref in spec.image_pull_secrets or []]


def build_trial_pod(
    *,
    trial_name: str,
    trial_uid: str,
    namespace: str,
    retry: int,
    spec: BuzzTrialSpec,
    trial_labels: Mapping[str, str],
    relay_listen: str | None,
    relay_target: str | None,
) -> dict[str, Any]:
    """The v1 Pod of one try of a trial.

    For a loopback relay URL, ``relay_listen`` is forwarder_listen_address(relay url) and
    ``relay_target`` the relay Service's ``<ClusterIP>:<port>``, resolved through the API because
    a cluster may have no DNS (the local stack has none). Both None: agents dial the relay URL
    directly, and the pod has no forwarder.
    """
    if (relay_listen is None) != (relay_target is None):
        raise ValueError("relay_listen and relay_target come together: both for a forwarder, neither without")
    forwarder = [] if relay_listen is None or relay_target is None else [
        forwarder_container(spec, relay_listen, relay_target)]
    source, pull = spec.stack_source, spec.image_pull_policy.value
    return hardened_pod(
        name=pod_name(trial_name, retry),
        namespace=namespace,
        labels=pod_labels(trial_labels, trial_name, retry, spec.queue_name),
        owner=owner_reference("BuzzTrial", trial_name, trial_uid),
        init_containers=[*stack_init(source, pull, cpu=task_resources(spec.resources)["requests"]["cpu"]),
                         *forwarder, *service_containers(spec.compose, pull)],
        containers=[task_container(spec, stack_mounts(source))],
        volumes=[*stack_volumes(source, pull), *empty_dirs(LOGS_VOLUME), *service_volumes(spec.compose)],
        grace_seconds=10,
        runtime_class_name=spec.runtime_class_name,
        image_pull_secrets=pull_secret_names(spec),
        host_aliases=host_aliases(spec.compose),
    )


def grading_pod_name(trial_name: str, generation: int) -> str:
    return f"{trial_name}-regrade-{generation}"


def build_grading_pod(
    *, trial_name: str, trial_uid: str, namespace: str, generation: int, spec: BuzzTrialSpec,
    trial_labels: Mapping[str, str], network: str = NETWORK_NONE,
) -> dict[str, Any]:
    """A pod for re-running the verifier on recorded evidence: the task image kept alive for exec
    like the trial pod's `task` container, with no agents, no relay and no Secret — and a compose
    task's services, started afresh, so a verifier that talks to them finds them."""
    # in the grading phase from the start: the chart's grading policies give it the egress the
    # task allows its verifier, as they give a trial pod after its agents stopped (docs/egress.md)
    pod_labels_ = {**trial_labels, labels.TRIAL: trial_name, labels.COMPONENT: "grading-pod",
                   labels.MANAGED_BY: labels.MANAGER, **grading_labels(network)}
    return hardened_pod(
        name=grading_pod_name(trial_name, generation),
        namespace=namespace,
        labels=pod_labels_,
        owner=owner_reference("BuzzTrial", trial_name, trial_uid),
        init_containers=service_containers(spec.compose, spec.image_pull_policy.value),
        containers=[task_container(spec, [])],
        volumes=[*empty_dirs(LOGS_VOLUME), *service_volumes(spec.compose)],
        grace_seconds=5,
        runtime_class_name=spec.runtime_class_name,
        image_pull_secrets=pull_secret_names(spec),
        host_aliases=host_aliases(spec.compose),
    )
