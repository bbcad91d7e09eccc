"""coordination.k8s.io Leases as the API server's JSON: read, created, and patched only over the
version read (a 409 says another replica wrote it first). Used by leadership/drive/elector.py."""

from __future__ import annotations

import json
from typing import Any

from kubernetes_asyncio import client

from buzz_operator.kube.client import MERGE_PATCH, Kube
from buzz_operator.kube.objects import CONFLICT, NOT_FOUND, _answer, _ok


def _api(kube: Kube) -> client.CoordinationV1Api:
    return client.CoordinationV1Api(kube.api)


async def read_lease(kube: Kube, namespace: str, name: str, *, timeout_s: float) -> dict[str, Any] | None:
    status, body = await _answer(_api(kube).read_namespaced_lease(name, namespace, _preload_content=False,
                                                                  _request_timeout=timeout_s))
    return json.loads(body) if _ok(status, body, allowed=(NOT_FOUND,)) else None


async def create_lease(kube: Kube, namespace: str, name: str, spec: dict[str, Any], *, timeout_s: float) -> bool:
    """False when another replica created it first."""
    body = {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": {"name": name, "namespace": namespace},
            "spec": spec}
    status, answer = await _answer(_api(kube).create_namespaced_lease(namespace, body, _preload_content=False,
                                                                      _request_timeout=timeout_s))
    return _ok(status, answer, allowed=(CONFLICT,))


async def patch_lease(kube: Kube, lease: dict[str, Any], spec: dict[str, Any], *, timeout_s: float) -> bool:
    """Writes ``spec`` over the Lease as read: a merge patch carrying the resourceVersion read, so
    the API server refuses it (409, False here) when another replica wrote the Lease since."""
    meta = lease["metadata"]
    body = {"metadata": {"resourceVersion": meta["resourceVersion"]}, "spec": spec}
    status, answer = await _answer(_api(kube).patch_namespaced_lease(
        meta["name"], meta["namespace"], body, _content_type=MERGE_PATCH, _preload_content=False,
        _request_timeout=timeout_s))
    return _ok(status, answer, allowed=(CONFLICT,))
