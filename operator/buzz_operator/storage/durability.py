"""Refusing file:// storage where bundles would not outlive the operator's pod.

In a pod, a file:// store lives on whatever volume holds the path: an emptyDir or the image's
own filesystem goes with the pod, so a sweep's evidence — the one thing a sweep cannot produce
again — would be lost on the next reschedule, upgrade or eviction without anything saying so.
The chart knows which of its paths are such volumes and lists them in BUZZ_EPHEMERAL_PATHS
(colon-separated; `/` when the pod has no durable volume at all); a file:// URL under one is
refused, naming the field and what to do instead. Unset (the operator run on a host, as `make
demo` does), nothing is refused: a host's disk outlives the process.

Pure: the URL and the list in, the refusal out.
"""

from __future__ import annotations

import posixpath
from collections.abc import Mapping, Sequence
from urllib.parse import unquote, urlsplit

EPHEMERAL_PATHS_ENV = "BUZZ_EPHEMERAL_PATHS"
REMEDY = (
    "use s3:// storage (spec.storage.url with endpoint and credentialsSecretRef), or install the chart with "
    "bundles.existingClaim or bundles.claim.create (a PersistentVolumeClaim) and name its mount; "
    "bundles.ephemeral=true accepts losing them (demos)"
)


def ephemeral_paths(environ: Mapping[str, str]) -> tuple[str, ...]:
    """The absolute, normalised paths of BUZZ_EPHEMERAL_PATHS; relative entries are ignored."""
    raw = environ.get(EPHEMERAL_PATHS_ENV, "")
    return tuple(posixpath.normpath(p) for p in (part.strip() for part in raw.split(":")) if p.startswith("/"))


def _under(path: str, root: str) -> bool:
    return root == "/" or path == root or path.startswith(root.rstrip("/") + "/")


def ephemeral_storage_problem(url: str, ephemeral: Sequence[str]) -> str | None:
    """Why `url` would put bundles where they do not outlive the operator's pod, or None."""
    parts = urlsplit(url)
    if parts.scheme != "file" or not ephemeral:
        return None
    # normpath folds `..` the way the filesystem will, so /var/lib/x/../../tmp is seen as /tmp
    path = posixpath.normpath(unquote(parts.path) or "/")
    for root in ephemeral:
        if _under(path, root):
            where = "has no durable volume" if root == "/" else f"keeps {root} on an emptyDir"
            return f"{url}: the operator's pod {where}, so bundles there are lost with the pod; {REMEDY}"
    return None
