"""Creating, reading and deleting the core objects a trial owns, idempotently: a create that
meets 409 returns the existing object (deterministic names make that the one we made), and a
delete that meets 404 is done."""

from __future__ import annotations

import asyncio
import base64
import json
from collections.abc import Mapping
from typing import Any

from kubernetes_asyncio.client.exceptions import ApiException

from buzz_operator.kube.client import MERGE_PATCH, Kube

CONFLICT, NOT_FOUND = 409, 404


async def create_pod(kube: Kube, namespace: str, pod: dict[str, Any]) -> dict[str, Any]:
    try:
        created = await kube.core.create_namespaced_pod(namespace, pod)
    except ApiException as exc:
        if exc.status != CONFLICT:
            raise
        created = await kube.core.read_namespaced_pod(pod["metadata"]["name"], namespace)
    return kube.api.sanitize_for_serialization(created)


async def read_pod(kube: Kube, namespace: str, name: str) -> dict[str, Any] | None:
    """The pod as the API server's JSON, None when it is gone.

    Read raw: turning the answer into a typed V1Pod (dateutil parsing every timestamp) and
    straight back into a dict was most of the operator's CPU for a read, and reads run at every
    change of a launching pod (bench/profiled_operator.py: 145 reads, 0.62 CPU-s)."""
    response = await kube.core.read_namespaced_pod(name, namespace, _preload_content=False)
    try:
        body = await response.read()
    finally:
        response.release()
    if response.status == NOT_FOUND:
        return None
    if not 200 <= response.status <= 299:
        error = ApiException(status=response.status, reason=response.reason)
        error.body = body.decode("utf-8", errors="replace")[:1000]
        raise error
    return json.loads(body)


async def delete_pod(kube: Kube, namespace: str, name: str, *, grace_seconds: int | None = None) -> None:
    try:
        await kube.core.delete_namespaced_pod(name, namespace, grace_period_seconds=grace_seconds)
    except ApiException as exc:
        if exc.status != NOT_FOUND:
            raise


async def patch_pod_labels(kube: Kube, namespace: str, name: str, labels: Mapping[str, str]) -> dict[str, Any]:
    """Set `labels` on a pod (a JSON merge patch: other labels are kept); the pod as patched.
    Raises ApiException (404 when the pod is gone)."""
    patched = await kube.core.patch_namespaced_pod(name, namespace, {"metadata": {"labels": dict(labels)}},
                                                   _content_type=MERGE_PATCH)
    return kube.api.sanitize_for_serialization(patched)


async def wait_pod_gone(kube: Kube, namespace: str, name: str, *, timeout_s: float, poll: float = 0.5) -> None:
    async with asyncio.timeout(timeout_s):
        while True:
            if await read_pod(kube, namespace, name) is None:
                return
            await asyncio.sleep(poll)


def secret_body(
    name: str, data: Mapping[str, str], *, labels: Mapping[str, str], owner: dict[str, Any] | None
) -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": name, "labels": dict(labels)}
    if owner is not None:
        metadata["ownerReferences"] = [owner]
    encoded = {key: base64.b64encode(value.encode()).decode() for key, value in data.items()}
    return {"apiVersion": "v1", "kind": "Secret", "type": "Opaque", "metadata": metadata, "data": encoded}


async def create_secret(kube: Kube, namespace: str, body: dict[str, Any]) -> None:
    """Create the Secret; an existing one of that name is kept (its content is deterministic)."""
    try:
        await kube.core.create_namespaced_secret(namespace, body)
    except ApiException as exc:
        if exc.status != CONFLICT:
            raise


async def read_secret(kube: Kube, namespace: str, name: str, *, key: str | None = None) -> dict[str, str]:
    secret = await kube.core.read_namespaced_secret(name, namespace)
    data = {k: base64.b64decode(v).decode() for k, v in (secret.data or {}).items()}
    if key is not None:
        if key not in data:
            raise KeyError(f"Secret {namespace}/{name} has no key {key!r}")
        return {key: data[key]}
    return data


async def delete_secret(kube: Kube, namespace: str, name: str) -> None:
    try:
        await kube.core.delete_namespaced_secret(name, namespace)
    except ApiException as exc:
        if exc.status != NOT_FOUND:
            raise


async def service_target(kube: Kube, namespace: str, name: str, port: int) -> str:
    """`<ClusterIP>:<port>` of a Service, read through the API (clusters may have no DNS)."""
    service = await kube.core.read_namespaced_service(name, namespace)
    cluster_ip = service.spec.cluster_ip
    if not cluster_ip or cluster_ip == "None":
        raise ValueError(f"Service {namespace}/{name} has no ClusterIP (headless services cannot be targeted)")
    return f"{cluster_ip}:{port}"


async def read_config_map(kube: Kube, namespace: str, name: str) -> dict[str, str]:
    config_map = await kube.core.read_namespaced_config_map(name, namespace)
    return dict(config_map.data or {})
