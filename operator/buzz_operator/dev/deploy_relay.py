"""The development relay as a Pod behind a Service, for the local stack, demos and tests.

The relay binds tenants to the authority of RELAY_URL (ws://localhost:3600), which is why
trial pods reach it through their forwarder; the Service only has to expose the port. Its
key comes from a Secret, as a real relay's would; the database is reachable by DSN. Development
only: the operator dials a relay, it never deploys one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from buzz_operator.dev.pod_service import deploy_behind_service
from buzz_operator.kube.client import Kube
from buzz_operator.kube.objects import create_secret, secret_body

DEV_RELAY_IMAGE = "docker.io/buzz/dev-relay:dev"
RELAY_PORT = 3600
KEY_SECRET_KEY = "relay-private-key"
DSN_SECRET_KEY = "database-url"


@dataclass(frozen=True)
class DevRelay:
    name: str
    namespace: str
    service: str
    port: int
    cluster_ip: str

    @property
    def target(self) -> str:
        return f"{self.cluster_ip}:{self.port}"


def relay_pod(name: str, *, image: str, relay_url: str, owner_pubkey: str, secret: str) -> dict[str, Any]:
    def from_secret(key: str) -> dict[str, Any]:
        return {"secretKeyRef": {"name": secret, "key": key}}

    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "labels": {"app.kubernetes.io/name": "buzz-dev-relay", "buzz-dev-relay": name}},
        "spec": {
            "automountServiceAccountToken": False,
            "enableServiceLinks": False,
            "containers": [{
                "name": "relay",
                "image": image,
                "imagePullPolicy": "IfNotPresent",
                "env": [
                    {"name": "RELAY_URL", "value": relay_url},
                    {"name": "RELAY_OWNER_PUBKEY", "value": owner_pubkey},
                    {"name": "BUZZ_BIND", "value": f"0.0.0.0:{RELAY_PORT}"},
                    {"name": "BUZZ_RELAY_PRIVATE_KEY", "valueFrom": from_secret(KEY_SECRET_KEY)},
                    {"name": "DATABASE_URL", "valueFrom": from_secret(DSN_SECRET_KEY)},
                ],
                "ports": [{"containerPort": RELAY_PORT, "name": "relay"}],
                "readinessProbe": {"tcpSocket": {"port": RELAY_PORT}, "periodSeconds": 1},
                "securityContext": {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]},
                                    "runAsNonRoot": True},
            }],
        },
    }


def relay_service(name: str, port: int) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": name},
        "spec": {"selector": {"buzz-dev-relay": name}, "ports": [{"name": "relay", "port": port,
                                                                   "targetPort": RELAY_PORT}]},
    }


async def deploy(
    kube: Kube,
    namespace: str,
    *,
    name: str,
    relay_url: str,
    owner_pubkey: str,
    relay_secret_hex: str,
    database_url: str,
    port: int = RELAY_PORT,
    image: str = DEV_RELAY_IMAGE,
    timeout_s: float = 120.0,
) -> DevRelay:
    """Secret, Pod and Service (each kept if it exists); returns once the relay listens."""
    secret = f"{name}-keys"
    await create_secret(kube, namespace, secret_body(
        secret, {KEY_SECRET_KEY: relay_secret_hex, DSN_SECRET_KEY: database_url}, labels={}, owner=None))
    pod = relay_pod(name, image=image, relay_url=relay_url, owner_pubkey=owner_pubkey, secret=secret)
    cluster_ip = await deploy_behind_service(kube, namespace, pod, relay_service(name, port), what="dev relay",
                                             timeout_s=timeout_s)
    return DevRelay(name, namespace, name, port, cluster_ip)
