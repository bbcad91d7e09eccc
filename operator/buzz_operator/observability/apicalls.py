"""Every Kubernetes API request the operator makes, counted by RBAC verb and resource.

Both kopf and kubernetes_asyncio talk through aiohttp sessions; a trace config added to every
session the process creates sees each request (REST, watch and exec websocket alike). The
counter is what an RBAC review needs: which verb on which resource, and how often it was
refused. Paths map to RBAC attributes the way the apiserver's request-info resolver does.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs, urlsplit

import aiohttp

from buzz_operator.observability.metrics import API_REQUESTS

_METHOD_VERBS = {"POST": "create", "PUT": "update", "PATCH": "patch"}


@dataclass(frozen=True)
class ApiCall:
    verb: str
    group: str
    resource: str
    subresource: str = ""
    namespaced: bool = False

    @property
    def rbac_resource(self) -> str:
        return f"{self.resource}/{self.subresource}" if self.subresource else self.resource


def classify(method: str, url: str) -> ApiCall | None:
    """RBAC attributes of one request; None for non-resource URLs (discovery, /version)."""
    parts = urlsplit(url)
    segments = [s for s in parts.path.split("/") if s]
    if segments[:1] == ["api"] and len(segments) >= 2:
        group, rest = "", segments[2:]
    elif segments[:1] == ["apis"] and len(segments) >= 3:
        group, rest = segments[1], segments[3:]
    else:
        return None
    if not rest:
        return None
    namespaced = False
    if rest[0] == "namespaces" and len(rest) >= 3:
        namespaced, rest = True, rest[2:]
    resource = rest[0]
    name = rest[1] if len(rest) >= 2 else ""
    subresource = rest[2] if len(rest) >= 3 else ""
    method = method.upper()
    if method in _METHOD_VERBS:
        verb = _METHOD_VERBS[method]
    elif method == "DELETE":
        verb = "delete" if name else "deletecollection"
    elif name:
        verb = "get"
    else:
        query = parse_qs(parts.query)
        # kubernetes_asyncio sends watch=True; the apiserver parses it like Go's ParseBool
        verb = "watch" if query.get("watch", [""])[0].lower() in ("true", "1", "t") else "list"
    return ApiCall(verb=verb, group=group, resource=resource, subresource=subresource, namespaced=namespaced)


def _record(method: str, url: str, status: int | str) -> None:
    call = classify(method, url)
    if call is not None:
        API_REQUESTS.labels(call.verb, call.group or "core", call.rbac_resource, str(status)).inc()


async def _on_end(_: aiohttp.ClientSession, __: Any, params: aiohttp.TraceRequestEndParams) -> None:
    _record(params.method, str(params.url), params.response.status)


async def _on_exception(
    _: aiohttp.ClientSession, __: Any, params: aiohttp.TraceRequestExceptionParams
) -> None:
    _record(params.method, str(params.url), "error")


def trace_config() -> aiohttp.TraceConfig:
    config = aiohttp.TraceConfig()
    config.on_request_end.append(_on_end)
    config.on_request_exception.append(_on_exception)
    return config


_installed = False


def install() -> None:
    """Give every aiohttp session created from now on the counting trace config (idempotent)."""
    global _installed
    if _installed:
        return
    original = aiohttp.ClientSession.__init__

    def __init__(self: aiohttp.ClientSession, *args: Any, **kwargs: Any) -> None:
        kwargs["trace_configs"] = [*(kwargs.get("trace_configs") or []), trace_config()]
        original(self, *args, **kwargs)

    aiohttp.ClientSession.__init__ = __init__  # type: ignore[method-assign]
    _installed = True
