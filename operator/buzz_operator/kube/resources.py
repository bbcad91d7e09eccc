"""The project's own custom resources (BuzzSweep, BuzzTrial) through one adapter.

Every read and write of a BuzzSweep or BuzzTrial goes through here, so the group, version,
plural names and the merge-patch content type are written once, and what a 404 or a 409 means
is decided once: a get of something gone is None, a create that meets an existing object (the
names are deterministic, so it is the one a previous reconcile made) and a delete or relabel of
something gone are done. Any other API error is raised to the caller.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from typing import Any

from kubernetes_asyncio.client.exceptions import ApiException

from buzz_operator.api.common import GROUP, SWEEPS, TRIALS, VERSION
from buzz_operator.kube.client import MERGE_PATCH, Kube

__all__ = ["SWEEPS", "TRIALS", "create", "delete", "get", "iter_objects", "list_objects", "pages",
           "patch_status", "relabel"]

CONFLICT, NOT_FOUND = 409, 404
# Objects per page of iter_objects: a page of BuzzTrials is a few MB of JSON at most, where one
# list of a 100,000-trial namespace would be hundreds of MB in the operator at once.
PAGE = 500


def _timeout(timeout_s: float | None) -> dict[str, Any]:
    return {} if timeout_s is None else {"_request_timeout": timeout_s}


async def get(kube: Kube, plural: str, namespace: str, name: str, *,
              timeout_s: float | None = None) -> dict[str, Any] | None:
    """The object, or None when there is none of that name."""
    try:
        return await kube.custom.get_namespaced_custom_object(GROUP, VERSION, namespace, plural, name,
                                                              **_timeout(timeout_s))
    except ApiException as error:
        if error.status == NOT_FOUND:
            return None
        raise


async def list_objects(kube: Kube, plural: str, namespace: str, *, selector: str | None = None,
                       timeout_s: float | None = None) -> list[dict[str, Any]]:
    listed = await kube.custom.list_namespaced_custom_object(GROUP, VERSION, namespace, plural,
                                                             label_selector=selector, **_timeout(timeout_s))
    return list(listed.get("items") or [])


async def iter_objects(kube: Kube, plural: str, namespace: str, *, selector: str | None = None,
                       page: int = PAGE) -> AsyncIterator[dict[str, Any]]:
    """Every object, read a page at a time (the API's limit/continue), so a caller that keeps
    only what it needs of each holds one page, never the whole list."""
    async for items, _ in pages(kube, plural, namespace, selector=selector, page=page):
        for item in items:
            yield item


async def pages(kube: Kube, plural: str, namespace: str, *, selector: str | None = None,
                page: int = PAGE) -> AsyncIterator[tuple[list[dict[str, Any]], str]]:
    """The listing a page at a time, each with the list's resourceVersion (the same on every
    page of one listing: a watch resumed from it misses nothing; an empty listing has one page)."""
    token: str | None = None
    while True:
        extra = {"_continue": token} if token else {}
        listed = await kube.custom.list_namespaced_custom_object(GROUP, VERSION, namespace, plural,
                                                                 label_selector=selector, limit=page, **extra)
        meta = listed.get("metadata") or {}
        yield list(listed.get("items") or []), str(meta.get("resourceVersion") or "")
        token = meta.get("continue")
        if not token:
            return


async def create(kube: Kube, plural: str, namespace: str, body: Mapping[str, Any]) -> bool:
    """True when this call created it, False when an object of that name was there already."""
    try:
        await kube.custom.create_namespaced_custom_object(GROUP, VERSION, namespace, plural, dict(body))
    except ApiException as error:
        if error.status == CONFLICT:
            return False
        raise
    return True


async def delete(kube: Kube, plural: str, namespace: str, name: str) -> bool:
    """True when this call deleted it, False when it was gone already."""
    try:
        await kube.custom.delete_namespaced_custom_object(GROUP, VERSION, namespace, plural, name)
    except ApiException as error:
        if error.status == NOT_FOUND:
            return False
        raise
    return True


async def patch_status(kube: Kube, plural: str, namespace: str, name: str, status: Mapping[str, Any]) -> None:
    """Merge ``status`` into the status subresource. A 404 is raised: a handler writing the status
    of an object that is gone must stop, not carry on as if it had been written."""
    await kube.custom.patch_namespaced_custom_object_status(GROUP, VERSION, namespace, plural, name,
                                                            {"status": dict(status)}, _content_type=MERGE_PATCH)


async def relabel(kube: Kube, plural: str, namespace: str, name: str, *, labels: Mapping[str, str | None],
                  annotations: Mapping[str, str] | None = None, drop_finalizer: str | None = None,
                  tries: int = 5) -> dict[str, Any] | None:
    """Set (a value) or remove (None) labels, set annotations and, with `drop_finalizer`, take
    that one finalizer off, in one merge patch; the object as patched, None when it is gone.

    A merge patch replaces the finalizer list whole, so dropping one is conditional on the
    resourceVersion read with it: a 409 (someone changed the object in between) reads it again,
    at most `tries` times, so another controller's finalizer is never lost."""
    metadata: dict[str, Any] = {"labels": dict(labels)}
    if annotations:
        metadata["annotations"] = dict(annotations)
    for attempt in range(tries):
        if drop_finalizer is not None:
            current = await get(kube, plural, namespace, name)
            if current is None:
                return None
            meta = current.get("metadata") or {}
            finalizers = list(meta.get("finalizers") or [])
            metadata["resourceVersion"] = meta.get("resourceVersion")
            metadata["finalizers"] = [f for f in finalizers if f != drop_finalizer] or None
        try:
            return await kube.custom.patch_namespaced_custom_object(
                GROUP, VERSION, namespace, plural, name, {"metadata": metadata}, _content_type=MERGE_PATCH)
        except ApiException as error:
            if error.status == NOT_FOUND:
                return None
            if error.status != CONFLICT or drop_finalizer is None or attempt == tries - 1:
                raise
    raise AssertionError("unreachable")  # the last try returns or raises
