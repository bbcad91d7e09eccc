"""``sweep new --apply``: the checked objects created through the API, ConfigMaps and the
Secret replaced if they exist (they are derived from the files), the BuzzSweep created once."""

from __future__ import annotations

from typing import Any

from kubernetes_asyncio.client.exceptions import ApiException

from buzz_operator.api.common import GROUP, SWEEPS
from buzz_operator.cli.cluster import with_kube
from buzz_operator.cli.exits import fail
from buzz_operator.cli.sweep_new import SweepObjects
from buzz_operator.kube import resources
from buzz_operator.kube.client import Kube

CONFLICT = 409


async def _upsert(create: Any, replace: Any, namespace: str, body: dict[str, Any]) -> str:
    name = body["metadata"]["name"]
    try:
        await create(namespace, body)
        return "created"
    except ApiException as error:
        if error.status != CONFLICT:
            raise
    await replace(name, namespace, body)
    return "configured"


async def apply_objects(namespace: str, objects: SweepObjects) -> list[str]:
    async def run(kube: Kube) -> list[str]:
        core = kube.core
        lines = []
        for body in (objects.condition, objects.endpoints):
            verb = await _upsert(
                core.create_namespaced_config_map, core.replace_namespaced_config_map, namespace, body
            )
            lines.append(f"configmap/{body['metadata']['name']} {verb}")
        verb = await _upsert(
            core.create_namespaced_secret, core.replace_namespaced_secret, namespace, objects.secret
        )
        lines.append(f"secret/{objects.secret['metadata']['name']} {verb}")
        name = objects.sweep["metadata"]["name"]
        try:
            created = await resources.create(kube, SWEEPS, namespace, objects.sweep)
        except ApiException as error:
            if error.status == 422:
                fail(f"BuzzSweep {name!r} refused by the API server: {error.body}")
            raise
        if not created:
            fail(f"BuzzSweep {name!r} already exists in namespace {namespace!r}")
        lines.append(f"buzzsweep.{GROUP}/{name} created")
        return lines

    return await with_kube(run)
