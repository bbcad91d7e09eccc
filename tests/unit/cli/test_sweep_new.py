"""buzzctl sweep new: the objects it writes, and every refusal before the cluster is touched."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml
from buzz_operator.api.sweep import BuzzSweepSpec
from buzz_operator.cli.main import app
from buzz_operator.cli.sweep_new import SweepRequest, build
from buzz_operator.condition import ExperimentManifest
from typer.testing import CliRunner

ROOT = Path(__file__).resolve().parents[3]
MANIFEST = ROOT / "manifests" / "standin-team.yaml"
ENDPOINTS = ROOT / "manifests" / "endpoints" / "standin.json"
KEY = "standin-" + "9f" * 16


@pytest.fixture(autouse=True)
def api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STANDIN_API_KEY", KEY)


def new(runner: CliRunner, *extra: str, manifest: Path = MANIFEST, endpoints: Path = ENDPOINTS):
    argv = ["sweep", "new", "--manifest", str(manifest), "--endpoints", str(endpoints), "--dataset", "builtin",
            "--name", "team-a", "--attempts", "5", "--parallelism", "2", *extra]  # fmt: skip
    return runner.invoke(app, argv)


def test_objects_on_stdout_and_never_the_key(runner: CliRunner) -> None:
    result = new(runner, "--max-cost-usd", "12.5", "--include", "hello-*")
    assert result.exit_code == 0, result.stderr
    assert KEY not in result.stdout and KEY not in result.stderr
    docs = list(yaml.safe_load_all(result.stdout))
    assert [d["kind"] for d in docs] == ["ConfigMap", "ConfigMap", "BuzzSweep"]
    condition, endpoints, sweep = docs
    assert condition["data"]["manifest.yaml"] == MANIFEST.read_text()
    assert condition["data"]["personas__lead.md"] == (ROOT / "manifests/personas/lead.md").read_text()
    assert json.loads(endpoints["data"]["endpoints.json"]) == json.loads(ENDPOINTS.read_text())
    spec = BuzzSweepSpec.model_validate(sweep["spec"])
    assert (spec.attempts, spec.parallelism, spec.include, spec.budget.max_cost_usd) == (
        5,
        2,
        ["hello-*"],
        12.5,
    )  # type: ignore[union-attr]
    assert spec.condition.config_map_ref.name == "team-a-condition"  # type: ignore[union-attr]
    assert spec.endpoints.secret_ref.name == "team-a-api-keys"  # type: ignore[union-attr]
    assert (
        sweep["metadata"]["annotations"]["bench.buzz.dev/condition-sha256"]
        == ExperimentManifest.load(MANIFEST).sha256
    )
    assert "Secret team-a-api-keys (STANDIN_API_KEY) is not printed" in result.stderr


def test_the_secret_holds_the_key_from_the_named_variable() -> None:
    objects = build(SweepRequest("team-a", MANIFEST, ENDPOINTS, "builtin"), {"STANDIN_API_KEY": KEY})
    assert objects.secret["stringData"] == {"STANDIN_API_KEY": KEY}
    assert all(KEY not in json.dumps(doc) for doc in objects.printable())


def test_missing_api_key_variable_is_refused(runner: CliRunner, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("STANDIN_API_KEY")
    result = new(runner)
    assert (
        result.exit_code == 1 and "STANDIN_API_KEY" in result.stderr and len(result.stderr.splitlines()) == 1
    )


def test_placeholder_endpoints_are_refused(runner: CliRunner, tmp_path: Path) -> None:
    endpoints = json.loads(ENDPOINTS.read_text())
    endpoints["standin/team"]["env"] = {"DATABRICKS_HOST": "https://example-workspace.cloud.databricks.com"}
    path = tmp_path / "endpoints.json"
    path.write_text(json.dumps(endpoints))
    result = new(runner, endpoints=path)
    assert (
        result.exit_code == 1 and "placeholder endpoints" in result.stderr and "standin/team" in result.stderr
    )
    assert result.stdout == ""


def test_prompt_digest_mismatch_is_refused(runner: CliRunner, tmp_path: Path) -> None:
    shutil.copytree(ROOT / "manifests" / "personas", tmp_path / "personas")
    shutil.copy(MANIFEST, tmp_path / "team.yaml")
    (tmp_path / "personas" / "worker.md").write_text("a different persona\n")
    result = new(runner, manifest=tmp_path / "team.yaml")
    assert result.exit_code == 1 and "roster.1.prompt" in result.stderr and result.stdout == ""


def test_roster_endpoint_missing_from_config(runner: CliRunner, tmp_path: Path) -> None:
    path = tmp_path / "endpoints.json"
    path.write_text(json.dumps({"standin/oracle": json.loads(ENDPOINTS.read_text())["standin/oracle"]}))
    result = new(runner, endpoints=path)
    assert result.exit_code == 1 and "standin/team" in result.stderr


def test_bad_manifest_dataset_and_spec(runner: CliRunner, tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("condition: x\nroster: []\n")
    assert new(runner, manifest=bad).exit_code == 1
    result = runner.invoke(app, ["sweep", "new", "--manifest", str(MANIFEST), "--endpoints", str(ENDPOINTS),
                                 "--dataset", "somewhere", "--name", "x"])  # fmt: skip
    assert result.exit_code == 1 and "--dataset" in result.stderr
    result = new(runner, "--cpu-request-fraction", "2")
    assert result.exit_code == 1 and "cpuRequestFraction" in result.stderr


def test_apply_without_a_cluster_exits_two_after_the_checks(
    runner: CliRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert new(runner, "--apply").exit_code == 2
    monkeypatch.delenv("STANDIN_API_KEY")
    assert new(runner, "--apply").exit_code == 1  # refused before the cluster is tried
