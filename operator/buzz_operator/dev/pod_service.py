"""A development server as a Pod behind a Service, created and waited for until pods can reach it.

The dev relay (dev/deploy_relay.py) and the scripted model endpoint (dev/deploy_model.py) are
deployed the same way on the local stack, in demos and in tests: create both objects (keeping
either if it exists, so a second deploy adopts the first), wait for the pod to be ready, then for
the Service to route to it. Development only: the operator never deploys either.
"""

from __future__ import annotations

import asyncio
from typing import Any

from kubernetes_asyncio.client.exceptions import ApiException

from buzz_operator.kube.client import Kube
from buzz_operator.kube.objects import CONFLICT, create_pod
from buzz_operator.kube.pods import wait_running


async def deploy_behind_service(
    kube: Kube, namespace: str, pod: dict[str, Any], service: dict[str, Any], *, what: str, timeout_s: float
) -> str:
    """Create `pod` and `service` (each kept if it exists) and return the Service's ClusterIP once
    it routes to the ready pod; `what` names the server in the error when its pod does not start."""
    await create_pod(kube, namespace, pod)
    try:
        await kube.core.create_namespaced_service(namespace, service)
    except ApiException as exc:
        if exc.status != CONFLICT:
            raise
    name, service_name = pod["metadata"]["name"], service["metadata"]["name"]
    state = await wait_running(kube, namespace, name, timeout_s=timeout_s)
    if not state.ready:
        raise RuntimeError(f"{what} pod did not start: {state.reason}: {state.message}")
    async with asyncio.timeout(timeout_s):
        while True:
            if await _routed(kube, namespace, name, service_name):
                break
            await asyncio.sleep(0.5)
    created = await kube.core.read_namespaced_service(service_name, namespace)
    return str(created.spec.cluster_ip)


async def _routed(kube: Kube, namespace: str, pod: str, service: str) -> bool:
    # Ready pod first, then the Service's Endpoints naming it: kube-proxy programs the
    # ClusterIP from Endpoints, so before that a connection to the Service is refused.
    body = await kube.core.read_namespaced_pod(pod, namespace)
    if not any(c.type == "Ready" and c.status == "True" for c in body.status.conditions or []):
        return False
    endpoints = await kube.core.read_namespaced_endpoints(service, namespace)
    return any(subset.addresses for subset in endpoints.subsets or [])
