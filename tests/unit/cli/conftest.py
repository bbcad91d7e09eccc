"""buzzctl under typer's CliRunner against sweeps built with the project's own code."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from tests.unit.results.sweep_builder import MIXED, build_sweep


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


@pytest.fixture(autouse=True)
def no_cluster(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> None:
    """Unit tests never reach a cluster: a kubeconfig that does not exist makes any attempt exit 2."""
    monkeypatch.setenv("KUBECONFIG", str(tmp_path_factory.mktemp("kube") / "missing-kubeconfig"))
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    monkeypatch.delenv("BUZZCTL_STORE", raising=False)


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> str:
    root = tmp_path_factory.mktemp("store")
    build_sweep(
        root,
        "mixed",
        MIXED,
        spec={"timeoutMultiplier": 2.0, "attempts": 3, "parallelism": 2},
    )
    return root.as_uri()
