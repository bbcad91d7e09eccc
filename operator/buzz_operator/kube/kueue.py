"""Reading Kueue's objects for a queued trial pod: the namespace's Workloads, the LocalQueue, and
the pod's Events (for the image being pulled). Read only; the operator never writes Kueue's
objects — Kueue makes the Workload from the pod's kueue.x-k8s.io/queue-name label.

Kueue may be absent (its API not served) or not readable by the operator (RBAC): then there is
nothing to read, and the trial's status says only what the pod says (docs/queueing.md#limits).
"""

from __future__ import annotations

import logging
from typing import Any

from kubernetes_asyncio.client.exceptions import ApiException

from buzz_operator.kube.client import Kube

log = logging.getLogger(__name__)

KUEUE_GROUP = "kueue.x-k8s.io"
KUEUE_VERSION = "v1beta2"
NOT_FOUND, FORBIDDEN = 404, 403
REQUEST_TIMEOUT_S = 10.0


def _absent(error: ApiException, what: str) -> bool:
    # 404: Kueue's API is not served (or the object is gone); 403: the operator may not read it.
    # Either way the wait is still explained by the pod itself.
    if error.status in (NOT_FOUND, FORBIDDEN):
        if error.status == FORBIDDEN:
            log.warning("cannot read Kueue %s: HTTP 403 (the operator's RBAC needs get/list on %s)", what, what)
        return True
    return False


async def workloads(kube: Kube, namespace: str) -> list[dict[str, Any]]:
    """The namespace's Workloads ([] without Kueue): the pod's own, and the rest of its queue."""
    try:
        listed = await kube.custom.list_namespaced_custom_object(
            KUEUE_GROUP, KUEUE_VERSION, namespace, "workloads", _request_timeout=REQUEST_TIMEOUT_S)
    except ApiException as error:
        if _absent(error, "workloads"):
            return []
        raise
    return list(listed.get("items") or [])


async def local_queue(kube: Kube, namespace: str, name: str) -> dict[str, Any] | None:
    try:
        return await kube.custom.get_namespaced_custom_object(
            KUEUE_GROUP, KUEUE_VERSION, namespace, "localqueues", name, _request_timeout=REQUEST_TIMEOUT_S)
    except ApiException as error:
        if _absent(error, "localqueues"):
            return None
        raise


async def pod_events(kube: Kube, namespace: str, pod: str) -> list[dict[str, Any]]:
    """The pod's Events (the kubelet's Pulling/Pulled among them); [] when they may not be read."""
    try:
        listed = await kube.core.list_namespaced_event(
            namespace, field_selector=f"involvedObject.kind=Pod,involvedObject.name={pod}",
            _request_timeout=REQUEST_TIMEOUT_S)
    except ApiException as error:
        if _absent(error, "events"):
            return []
        raise
    return list(kube.api.sanitize_for_serialization(listed).get("items") or [])
