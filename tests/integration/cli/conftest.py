"""Fixtures for buzzctl against the local cluster: the CRDs and a namespace of its own."""

from __future__ import annotations

import subprocess
import uuid
from collections.abc import Iterator

import pytest

from tests.support.cluster import ROOT, crds, kubectl  # noqa: F401  (pytest finds fixtures among a conftest's names)


@pytest.fixture
def namespace(kubeconfig: str, crds: None) -> Iterator[str]:  # noqa: F811  (crds: the fixture above)
    """No operator watches it: the objects stay exactly as the test writes them."""
    name = f"cli-{uuid.uuid4().hex[:8]}"
    kubectl("create", "namespace", name)
    yield name
    subprocess.run(["kubectl", "delete", "namespace", name, "--wait=false"], capture_output=True)
