"""URLs map to the RBAC attributes the apiserver authorizes them as, and a real aiohttp session
(against a local HTTP server) has its requests counted once install() has run."""

from __future__ import annotations

import aiohttp
import pytest
from aiohttp import web
from buzz_operator.observability import apicalls
from buzz_operator.observability.apicalls import ApiCall, classify
from buzz_operator.observability.metrics import REGISTRY

BASE = "https://10.96.0.1:443"


@pytest.mark.parametrize(
    ("method", "path", "expected"),
    [
        ("GET", "/api/v1/namespaces/ns/pods/p1", ApiCall("get", "", "pods", "", True)),
        ("GET", "/api/v1/namespaces/ns/pods", ApiCall("list", "", "pods", "", True)),
        ("GET", "/api/v1/pods?watch=true&resourceVersion=1", ApiCall("watch", "", "pods", "", False)),
        ("POST", "/api/v1/namespaces/ns/events", ApiCall("create", "", "events", "", True)),
        ("GET", "/api/v1/namespaces/ns/pods/p1/exec?command=sh", ApiCall("get", "", "pods", "exec", True)),
        ("GET", "/api/v1/namespaces/ns/pods/p1/log", ApiCall("get", "", "pods", "log", True)),
        ("DELETE", "/api/v1/namespaces/ns/secrets/s", ApiCall("delete", "", "secrets", "", True)),
        ("DELETE", "/api/v1/namespaces/ns/secrets", ApiCall("deletecollection", "", "secrets", "", True)),
        (
            "PATCH",
            "/apis/bench.buzz.dev/v1alpha1/namespaces/ns/buzztrials/t/status",
            ApiCall("patch", "bench.buzz.dev", "buzztrials", "status", True),
        ),
        (
            "PUT",
            "/apis/apps/v1/namespaces/ns/deployments/d",
            ApiCall("update", "apps", "deployments", "", True),
        ),
        (
            "GET",
            "/apis/apiextensions.k8s.io/v1/customresourcedefinitions?watch=1",
            ApiCall("watch", "apiextensions.k8s.io", "customresourcedefinitions", "", False),
        ),
        ("GET", "/api/v1/namespaces/ns", ApiCall("get", "", "namespaces", "", False)),
    ],
)
def test_paths_map_to_rbac_attributes(method: str, path: str, expected: ApiCall) -> None:
    assert classify(method, BASE + path) == expected


@pytest.mark.parametrize(
    "path", ["/apis", "/api", "/api/v1", "/apis/bench.buzz.dev/v1alpha1", "/version", "/healthz"]
)
def test_discovery_is_not_a_resource_request(path: str) -> None:
    assert classify("GET", BASE + path) is None


def test_rbac_resource_names_the_subresource() -> None:
    assert ApiCall("get", "", "pods", "exec").rbac_resource == "pods/exec"
    assert ApiCall("get", "", "pods").rbac_resource == "pods"


async def test_sessions_created_after_install_are_counted() -> None:
    async def pod(_: web.Request) -> web.Response:
        return web.json_response({"kind": "Pod"})

    async def forbidden(_: web.Request) -> web.Response:
        return web.json_response({"kind": "Status"}, status=403)

    app = web.Application()
    app.router.add_get("/api/v1/namespaces/obs/pods/p1", pod)
    app.router.add_post("/api/v1/namespaces/obs/secrets", forbidden)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]

    def count(verb: str, resource: str, code: str) -> float:
        labels = {"verb": verb, "group": "core", "resource": resource, "code": code}
        return REGISTRY.get_sample_value("buzz_kube_api_requests_total", labels) or 0.0

    before_get, before_post = count("get", "pods", "200"), count("create", "secrets", "403")
    apicalls.install()
    apicalls.install()  # idempotent: still one count per request
    try:
        async with aiohttp.ClientSession() as session:
            async with session.get(f"http://127.0.0.1:{port}/api/v1/namespaces/obs/pods/p1") as response:
                assert response.status == 200
            async with session.post(
                f"http://127.0.0.1:{port}/api/v1/namespaces/obs/secrets", json={}
            ) as response:
                assert response.status == 403
    finally:
        await runner.cleanup()
    assert count("get", "pods", "200") == before_get + 1
    assert count("create", "secrets", "403") == before_post + 1
