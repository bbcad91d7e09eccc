"""Every sample BuzzSweep under manifests/sweeps/ is valid against the API models."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from buzz_operator.api import API_VERSION, validate_sweep_spec

SAMPLES = sorted((Path(__file__).resolve().parents[3] / "manifests" / "sweeps").glob("*.yaml"))


def _documents(path: Path) -> list[dict]:
    return [document for document in yaml.safe_load_all(path.read_text()) if document]


@pytest.mark.parametrize("path", SAMPLES, ids=lambda path: path.name)
def test_samples_validate(path: Path) -> None:
    documents = _documents(path)
    assert documents, f"{path.name} holds no objects"
    for document in documents:
        assert (document["apiVersion"], document["kind"]) == (API_VERSION, "BuzzSweep")
        validate_sweep_spec(document["spec"])


def test_demo_runs_oracle_and_toplevel_folded_in_and_on_the_scripted_endpoint() -> None:
    (demo,) = [path for path in SAMPLES if path.name == "demo.yaml"]
    specs = {doc["metadata"]["name"]: validate_sweep_spec(doc["spec"]) for doc in _documents(demo)}
    assert sorted(specs) == ["demo-naive", "demo-oracle", "demo-scripted-naive", "demo-scripted-oracle", "demo-toplevel"]
    for name, spec in specs.items():
        family = "scripted" if name.startswith("demo-scripted-") else "standin"
        assert spec.condition.config_map_ref is not None
        assert spec.condition.config_map_ref.name == f"{family}-{name.rsplit('-', 1)[1]}"
        assert spec.endpoints.config_map_ref is not None and spec.endpoints.config_map_ref.name == f"{family}-endpoints"
        assert spec.endpoints.secret_ref is not None and spec.endpoints.secret_ref.name == f"{family}-api-keys"
        assert spec.dataset.builtin is not None
        assert (spec.attempts, spec.parallelism) == (2, 2)  # eight trials at once in all: one 2-core node
        assert spec.relay.url == "ws://localhost:3600" and spec.relay.service_ref.name == "buzz-dev-relay"
        assert spec.storage is not None and spec.storage.url == "file:///var/lib/buzz-operator/bundles"
