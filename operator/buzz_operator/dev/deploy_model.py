"""The scripted model endpoint (buzz_operator.dev.model) as a Pod behind a Service, for the local
stack, demos and tests: what a scripted condition's endpoint config points trial pods at.

It runs from the operator image, which holds the buzz_operator package. Trial pods dial it by
ClusterIP: the local cluster has no DNS, so `point_endpoints` writes the Service's address into an
endpoint config whose base URLs name the Service (manifests/endpoints/scripted.json). Development
only: the operator calls model endpoints, it never deploys one.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from buzz_operator.dev.pod_service import deploy_behind_service
from buzz_operator.kube.client import Kube

OPERATOR_IMAGE = "docker.io/buzz/operator:dev"
MODEL_PORT = 8091
BASE_URL_VARIABLES = ("OPENAI_COMPAT_BASE_URL", "ANTHROPIC_BASE_URL")
LABEL = "buzz-scripted-model"


@dataclass(frozen=True)
class DevModel:
    name: str
    namespace: str
    port: int
    cluster_ip: str

    @property
    def base_url(self) -> str:
        """Chat Completions base (buzz-agent appends /chat/completions)."""
        return f"http://{self.cluster_ip}:{self.port}/v1"


def model_pod(name: str, *, image: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "labels": {"app.kubernetes.io/name": LABEL, LABEL: name}},
        "spec": {
            "automountServiceAccountToken": False,
            "enableServiceLinks": False,
            "containers": [{
                "name": "model",
                "image": image,
                "imagePullPolicy": "IfNotPresent",
                "command": ["python3", "-m", "buzz_operator.dev.model", "--host", "0.0.0.0", "--port", str(MODEL_PORT)],
                "ports": [{"containerPort": MODEL_PORT, "name": "http"}],
                "readinessProbe": {"httpGet": {"path": "/healthz", "port": MODEL_PORT}, "periodSeconds": 1},
                "resources": {"requests": {"cpu": "50m", "memory": "64Mi"}},
                "securityContext": {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]},
                                    "runAsNonRoot": True, "seccompProfile": {"type": "RuntimeDefault"}},
            }],
        },
    }


def model_service(name: str, port: int) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": name},
        "spec": {"selector": {LABEL: name}, "ports": [{"name": "http", "port": port, "targetPort": MODEL_PORT}]},
    }


def point_endpoints(config: dict[str, Any], base_url: str) -> dict[str, Any]:
    """`config` with every endpoint's base URL moved to `base_url`'s host and port; the path each
    entry names is kept (Chat Completions wants /v1, Anthropic's base has none)."""
    target = urlsplit(base_url)
    pointed = copy.deepcopy(config)
    for entry in pointed.values():
        env = entry.get("env") or {}
        for variable in BASE_URL_VARIABLES:
            if variable in env:
                parts = urlsplit(env[variable])
                env[variable] = urlunsplit((target.scheme, target.netloc, parts.path, parts.query, parts.fragment))
    return pointed


async def deploy(kube: Kube, namespace: str, *, name: str = LABEL, port: int = MODEL_PORT,
                 image: str = OPERATOR_IMAGE, timeout_s: float = 120.0) -> DevModel:
    """Pod and Service (each kept if it exists); returns once the Service routes to a ready pod."""
    cluster_ip = await deploy_behind_service(kube, namespace, model_pod(name, image=image), model_service(name, port),
                                             what="scripted model", timeout_s=timeout_s)
    return DevModel(name, namespace, port, cluster_ip)


async def logs(kube: Kube, namespace: str, name: str = LABEL) -> str:
    """The model's stdout: one JSON line per request, with the usage it reported."""
    return str(await kube.core.read_namespaced_pod_log(name, namespace, container="model"))
