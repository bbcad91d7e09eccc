"""A minimal kopf operator used to prove the local stack: a `Probe` CR makes a pod that runs
python3 to completion, and the probe's status records the pod's phase."""

from __future__ import annotations

import kopf
from kubernetes_asyncio import client, config
from kubernetes_asyncio.client.exceptions import ApiException

IMAGE = "docker.io/buzz/debian-py:bookworm"


@kopf.on.login()
def login(**kwargs: object) -> kopf.ConnectionInfo | None:
    # kopf's own kubeconfig reader resolves KUBECONFIG when called, not at import time
    return kopf.login_with_service_account(**kwargs) or kopf.login_with_kubeconfig(**kwargs)


async def _core() -> client.CoreV1Api:
    await config.load_kube_config()
    return client.CoreV1Api()


@kopf.on.create("test.buzz.dev", "v1", "probes")
async def create_pod(spec: dict, name: str, namespace: str, body: dict, **_: object) -> dict:
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": f"{name}-pod", "labels": {"probe": name}},
        "spec": {
            "restartPolicy": "Never",
            "automountServiceAccountToken": False,
            "containers": [{
                "name": "py",
                "image": IMAGE,
                "imagePullPolicy": "Never",
                "command": ["python3", "-c", spec["code"]],
            }],
        },
    }
    kopf.adopt(pod, owner=body)
    api = await _core()
    async with api.api_client:
        try:
            await api.create_namespaced_pod(namespace, pod)
        except ApiException as error:
            # a creation handled again (a freshly installed CRD's watch can replay it): the pod
            # this handler made is adopted, not a failure
            if error.status != 409:
                raise
    return {"pod": pod["metadata"]["name"]}


@kopf.on.field("v1", "pods", field="status.phase", labels={"probe": kopf.PRESENT})
async def pod_phase(new: str | None, labels: dict, namespace: str, **_: object) -> None:
    if new not in ("Succeeded", "Failed"):
        return
    api = client.CustomObjectsApi(await _api_client())
    async with api.api_client:
        await api.patch_namespaced_custom_object_status(
            "test.buzz.dev", "v1", namespace, "probes", labels["probe"], {"status": {"phase": new}},
            _content_type="application/merge-patch+json",
        )


async def _api_client() -> client.ApiClient:
    await config.load_kube_config()
    return client.ApiClient()
