"""One kept connection to the API server: a REST client and a websocket client (for exec).

Configuration is read when `connect()` is called, not at import time: kubernetes_asyncio's
module-level defaults read KUBECONFIG once on import, which tests and the operator set later.
In a pod the ServiceAccount wins, as kopf's own login does.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

from kubernetes_asyncio import client, config
from kubernetes_asyncio.client import Configuration
from kubernetes_asyncio.stream import WsApiClient

MERGE_PATCH = "application/merge-patch+json"
IN_CLUSTER_TOKEN = Path("/var/run/secrets/kubernetes.io/serviceaccount/token")


def _in_cluster() -> bool:
    return bool(os.environ.get("KUBERNETES_SERVICE_HOST")) and IN_CLUSTER_TOKEN.exists()


async def load_configuration() -> Configuration:
    configuration = Configuration()
    if _in_cluster():
        config.load_incluster_config(client_configuration=configuration)
    else:
        path = os.environ.get("KUBECONFIG") or str(Path.home() / ".kube" / "config")
        await config.load_kube_config(config_file=path, client_configuration=configuration)
    return configuration


@dataclass
class Kube:
    """The REST and websocket clients plus the typed APIs the operator uses."""

    api: client.ApiClient
    ws: WsApiClient

    @property
    def core(self) -> client.CoreV1Api:
        return client.CoreV1Api(self.api)

    @property
    def custom(self) -> client.CustomObjectsApi:
        return client.CustomObjectsApi(self.api)

    @property
    def core_ws(self) -> client.CoreV1Api:
        return client.CoreV1Api(self.ws)

    async def close(self) -> None:
        await self.api.close()
        await self.ws.close()

    async def __aenter__(self) -> Kube:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.close()


async def connect() -> Kube:
    configuration = await load_configuration()
    return Kube(api=client.ApiClient(configuration), ws=WsApiClient(configuration))
