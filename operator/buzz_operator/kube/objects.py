"""Creating, reading and deleting the core objects a trial owns, idempotently: a create that
meets 409 returns the existing object (deterministic names make that the one we made), and a
delete that meets 404 is done."""

from __future__ import annotations

import asyncio
import base64
import json
from collections.abc import Awaitable, Mapping
from typing import Any

from kubernetes_asyncio.client.exceptions import ApiException

from buzz_operator.kube.client import MERGE_PATCH, Kube

CONFLICT, NOT_FOUND = 409, 404


async def _answer(call: Awaitable[Any]) -> tuple[int, bytes]:
    """Status and body of a call made with `_preload_content=False`: the client then neither
    raises on an error status nor turns the answer into typed models (dateutil parsing every
    timestamp), which was most of the operator's CPU for a read or write of a pod or Secret
    (bench/profiled_operator.py: 145 pod reads, 0.62 CPU-s; then 63 Secret reads and every
    create and delete answer parsed into models nobody read)."""
    response = await call
    try:
        body = await response.read()
    finally:
        response.release()
    return response.status, body


def _ok(status: int, body: bytes, *, allowed: tuple[int, ...] = ()) -> bool:
    """True for 2xx, False for an `allowed` error status; an ApiException for any other."""
    if 200 <= status <= 299:
        return True
    if status in allowed:
        return False
    error = ApiException(status=status, reason=_reason(body))
    error.body = body.decode("utf-8", errors="replace")[:1000]
    raise error


def _reason(body: bytes) -> str:
    try:
        return str(json.loads(body).get("reason") or "")
    except (ValueError, AttributeError):
        return ""


async def create_pod(kube: Kube, namespace: str, pod: dict[str, Any]) -> dict[str, Any]:
    status, body = await _answer(kube.core.create_namespaced_pod(namespace, pod, _preload_content=False))
    if not _ok(status, body, allowed=(CONFLICT,)):
        found = await read_pod(kube, namespace, pod["metadata"]["name"])
        if found is None:  # made and gone again between the two calls
            raise ApiException(status=NOT_FOUND, reason="NotFound")
        return found
    return json.loads(body)


async def read_pod(kube: Kube, namespace: str, name: str) -> dict[str, Any] | None:
    """The pod as the API server's JSON, None when it is gone."""
    status, body = await _answer(kube.core.read_namespaced_pod(name, namespace, _preload_content=False))
    return json.loads(body) if _ok(status, body, allowed=(NOT_FOUND,)) else None


async def delete_pod(kube: Kube, namespace: str, name: str, *, grace_seconds: int | None = None) -> None:
    status, body = await _answer(kube.core.delete_namespaced_pod(
        name, namespace, grace_period_seconds=grace_seconds, _preload_content=False))
    _ok(status, body, allowed=(NOT_FOUND,))


async def patch_pod(kube: Kube, namespace: str, name: str, patch: Mapping[str, Any]) -> dict[str, Any]:
    """A JSON merge patch of a pod's metadata; the pod as patched. Raises ApiException (404: gone)."""
    status, body = await _answer(kube.core.patch_namespaced_pod(
        name, namespace, dict(patch), _content_type=MERGE_PATCH, _preload_content=False))
    _ok(status, body)
    return json.loads(body)


async def patch_pod_labels(kube: Kube, namespace: str, name: str, labels: Mapping[str, str]) -> dict[str, Any]:
    """Set `labels` on a pod (a JSON merge patch: other labels are kept); the pod as patched.
    Raises ApiException (404 when the pod is gone)."""
    status, body = await _answer(kube.core.patch_namespaced_pod(
        name, namespace, {"metadata": {"labels": dict(labels)}}, _content_type=MERGE_PATCH, _preload_content=False))
    _ok(status, body)
    return json.loads(body)


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
    status, answer = await _answer(kube.core.create_namespaced_secret(namespace, body, _preload_content=False))
    _ok(status, answer, allowed=(CONFLICT,))


async def create_event(kube: Kube, namespace: str, body: dict[str, Any]) -> bool:
    """True when this call posted it, False when an Event of that name was there already."""
    status, answer = await _answer(kube.core.create_namespaced_event(namespace, body, _preload_content=False))
    return _ok(status, answer, allowed=(CONFLICT,))


async def read_secret(kube: Kube, namespace: str, name: str, *, key: str | None = None) -> dict[str, str]:
    """The Secret's data, decoded. Raises ApiException (404 when there is none)."""
    status, body = await _answer(kube.core.read_namespaced_secret(name, namespace, _preload_content=False))
    _ok(status, body)
    data = {k: base64.b64decode(v).decode() for k, v in (json.loads(body).get("data") or {}).items()}
    if key is not None:
        if key not in data:
            raise KeyError(f"Secret {namespace}/{name} has no key {key!r}")
        return {key: data[key]}
    return data


async def delete_secret(kube: Kube, namespace: str, name: str) -> None:
    status, body = await _answer(kube.core.delete_namespaced_secret(name, namespace, _preload_content=False))
    _ok(status, body, allowed=(NOT_FOUND,))


async def service_target(kube: Kube, namespace: str, name: str, port: int) -> str:
    """`<ClusterIP>:<port>` of a Service, read through the API (clusters may have no DNS)."""
    status, body = await _answer(kube.core.read_namespaced_service(name, namespace, _preload_content=False))
    _ok(status, body)
    cluster_ip = (json.loads(body).get("spec") or {}).get("clusterIP")
    if not cluster_ip or cluster_ip == "None":
        raise ValueError(f"Service {namespace}/{name} has no ClusterIP (headless services cannot be targeted)")
    return f"{cluster_ip}:{port}"


async def read_config_map(kube: Kube, namespace: str, name: str) -> dict[str, str]:
    status, body = await _answer(kube.core.read_namespaced_config_map(name, namespace, _preload_content=False))
    _ok(status, body)
    return dict(json.loads(body).get("data") or {})
