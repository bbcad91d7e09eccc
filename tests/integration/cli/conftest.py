"""Fixtures for buzzctl against the local cluster: the CRDs and a namespace of its own."""

from __future__ import annotations

import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]


def kubectl(*args: str, stdin: str | None = None) -> str:
    return subprocess.run(["kubectl", *args], check=True, capture_output=True, text=True, input=stdin).stdout


@pytest.fixture(scope="session")
def crds(kubeconfig: str) -> None:
    kubectl("apply", "-f", str(ROOT / "crds"))
    for name in ("buzzsweeps.bench.buzz.dev", "buzztrials.bench.buzz.dev"):
        kubectl("wait", "--for=condition=Established", f"crd/{name}", "--timeout=60s")


@pytest.fixture
def namespace(kubeconfig: str, crds: None) -> Iterator[str]:
    """No operator watches it: the objects stay exactly as the test writes them."""
    name = f"cli-{uuid.uuid4().hex[:8]}"
    kubectl("create", "namespace", name)
    yield name
    subprocess.run(["kubectl", "delete", "namespace", name, "--wait=false"], capture_output=True)
