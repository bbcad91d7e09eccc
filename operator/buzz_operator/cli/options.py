"""Options shared by buzzctl's commands that do not need the Kubernetes client to be declared.

kubernetes_asyncio takes about a second to import; commands that talk to the cluster import
cluster.py when they run, so `buzzctl condition hash` and the storage-only reads start fast."""

from __future__ import annotations

from typing import Annotated

import typer

NAMESPACE_ENV = "BUZZCTL_NAMESPACE"

NamespaceOption = Annotated[
    str,
    typer.Option("--namespace", "-n", envvar=NAMESPACE_ENV, help="Namespace of the sweep."),
]
