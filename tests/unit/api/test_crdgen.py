"""The checked-in CRDs are what the models generate, and the generator's --check catches drift."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from buzz_operator.api import crdgen
from buzz_operator.api.common import SWEEPS, TRIALS

REPO = Path(__file__).resolve().parents[3]
CHECKED_IN = REPO / "crds"


def test_checked_in_crds_are_current(tmp_path: Path) -> None:
    written = crdgen.write(tmp_path)
    assert sorted(path.name for path in written) == sorted(path.name for path in CHECKED_IN.glob("*.yaml"))
    for path in written:
        assert path.read_text() == (CHECKED_IN / path.name).read_text(), f"{path.name} is stale"


def test_check_passes_on_fresh_output(tmp_path: Path) -> None:
    crdgen.write(tmp_path)
    assert crdgen.main(["--check", "--out", str(tmp_path)]) == 0


def test_check_names_the_stale_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    crdgen.write(tmp_path)
    stale = tmp_path / "bench.buzz.dev_buzztrials.yaml"
    stale.write_text(stale.read_text().replace("shortNames:\n    - btr", "shortNames:\n    - bt"))
    assert crdgen.main(["--check", "--out", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert "bench.buzz.dev_buzztrials.yaml" in err
    assert "bench.buzz.dev_buzzsweeps.yaml" not in err


def test_check_names_a_missing_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert crdgen.main(["--check", "--out", str(tmp_path)]) == 1
    assert "bench.buzz.dev_buzzsweeps.yaml" in capsys.readouterr().err


def _crd(name: str) -> dict:
    return yaml.safe_load((CHECKED_IN / name).read_text())


def test_sweep_crd_identity_and_columns() -> None:
    crd = _crd("bench.buzz.dev_buzzsweeps.yaml")
    assert crd["apiVersion"] == "apiextensions.k8s.io/v1"
    assert crd["metadata"]["name"] == "buzzsweeps.bench.buzz.dev"
    names = crd["spec"]["names"]
    assert names == {
        "kind": "BuzzSweep",
        "listKind": "BuzzSweepList",
        "plural": "buzzsweeps",
        "singular": "buzzsweep",
        "shortNames": ["bsw"],
        "categories": ["buzz"],
    }
    (version,) = crd["spec"]["versions"]
    assert (version["name"], version["served"], version["storage"]) == ("v1alpha1", True, True)
    assert version["subresources"] == {"status": {}}
    columns = [(c["name"], c["type"], c["jsonPath"]) for c in version["additionalPrinterColumns"]]
    assert columns[:7] == [
        ("Condition", "string", ".status.conditionShort"),
        ("Succeeded", "integer", ".status.succeeded"),
        ("Failed", "integer", ".status.failed"),
        ("Running", "integer", ".status.running"),
        ("Total", "integer", ".status.total"),
        ("Reward", "string", ".status.shown.reward"),  # rounded: printer columns cannot format
        ("Cost", "string", ".status.shown.cost"),
    ]
    assert columns[-1] == ("Age", "date", ".metadata.creationTimestamp")


def test_trial_crd_columns() -> None:
    crd = _crd("bench.buzz.dev_buzztrials.yaml")
    assert crd["spec"]["names"]["shortNames"] == ["btr"]
    (version,) = crd["spec"]["versions"]
    visible = [c["name"] for c in version["additionalPrinterColumns"] if "priority" not in c]
    assert visible == ["Task", "Attempt", "Phase", "Outcome", "Reward", "Cost", "Age"]


def _resolve(schema: dict, path: str) -> dict:
    node = schema
    for part in path.split("."):
        node = node["properties"][part]
    return node


@pytest.mark.parametrize("name", ["bench.buzz.dev_buzzsweeps.yaml", "bench.buzz.dev_buzztrials.yaml"])
def test_status_keeps_unknown_fields_only_under_kopf(name: str) -> None:
    root = _crd(name)["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    status = root["properties"]["status"]
    assert "x-kubernetes-preserve-unknown-fields" not in status
    assert status["properties"]["kopf"]["x-kubernetes-preserve-unknown-fields"] is True


def test_every_column_path_exists_in_the_schema() -> None:
    for name in ("bench.buzz.dev_buzzsweeps.yaml", "bench.buzz.dev_buzztrials.yaml"):
        version = _crd(name)["spec"]["versions"][0]
        root = version["schema"]["openAPIV3Schema"]
        for column in version["additionalPrinterColumns"]:
            path = column["jsonPath"].lstrip(".")
            if path.startswith("metadata."):
                continue
            node = _resolve(root, path)
            expected = {"integer": "integer", "number": "number", "string": "string"}[column["type"]]
            assert node["type"] == expected, column


def test_the_adapters_plural_names_are_the_crds() -> None:
    # kube/resources.py and every handler address the resources by these names
    assert (crdgen.SWEEP.plural, crdgen.TRIAL.plural) == (SWEEPS, TRIALS)
