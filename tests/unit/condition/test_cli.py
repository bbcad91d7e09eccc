"""buzzctl condition: exit 0 ok, 1 invalid input (one line, no traceback), 2 usage."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from buzz_operator.cli.condition import app
from buzz_operator.condition import ExperimentManifest
from typer.testing import CliRunner

REPO = Path(__file__).resolve().parents[3]
MANIFESTS = REPO / "manifests"
runner = CliRunner()


def _write(tmp_path: Path, data: dict, name: str = "condition.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_hash_prints_the_sha256(tmp_path: Path, solo: dict) -> None:
    result = runner.invoke(app, ["hash", str(_write(tmp_path, solo))])
    assert result.exit_code == 0
    assert result.stdout == ExperimentManifest.load(solo).sha256 + "\n"


def test_check_ok(tmp_path: Path, team: dict) -> None:
    result = runner.invoke(app, ["check", str(_write(tmp_path, team))])
    assert result.exit_code == 0
    assert result.stdout.startswith("OK team-test ")
    assert "4 seats" in result.stdout
    assert result.stdout.count("\n") == 1


def test_check_with_artifact_root_verifies_prompts() -> None:
    result = runner.invoke(
        app, ["check", str(MANIFESTS / "standin-team.yaml"), "--artifact-root", str(MANIFESTS)]
    )
    assert result.exit_code == 0, result.output
    assert "prompts verified" in result.stdout


def test_invalid_manifest_exit_1_one_line_naming_the_field(tmp_path: Path, solo: dict) -> None:
    solo["roster"][0]["generation"] = {"temperature": 0.7}
    path = _write(tmp_path, solo)
    for command in ("hash", "check"):
        result = runner.invoke(app, [command, str(path)])
        assert result.exit_code == 1
        assert result.stdout == ""
        assert result.stderr.count("\n") == 1
        assert str(path) in result.stderr
        assert "roster.0.generation.temperature" in result.stderr
        assert "Traceback" not in result.output
        # A clean exit, not an escaped exception that CliRunner caught for us.
        assert isinstance(result.exception, SystemExit)


def test_missing_file_exit_1(tmp_path: Path) -> None:
    result = runner.invoke(app, ["hash", str(tmp_path / "nope.yaml")])
    assert result.exit_code == 1
    assert "nope.yaml" in result.stderr
    assert result.stderr.count("\n") == 1


def test_prompt_mismatch_exit_1_names_the_file(tmp_path: Path) -> None:
    root = tmp_path / "root"
    (root / "personas").mkdir(parents=True)
    (root / "personas/solo.md").write_bytes(b"changed\n")
    source = (MANIFESTS / "standin-oracle.yaml").read_text(encoding="utf-8")
    manifest = tmp_path / "m.yaml"
    manifest.write_text(source, encoding="utf-8")
    result = runner.invoke(app, ["check", str(manifest), "--artifact-root", str(root)])
    assert result.exit_code == 1
    assert "prompt hash mismatch" in result.stderr
    assert "personas/solo.md" in result.stderr
    assert result.stderr.count("\n") == 1


@pytest.mark.parametrize(
    "argv",
    [
        ["hash"],
        ["check"],
        ["check", "x.yaml", "--artifact-root"],
        ["check", "x.yaml", "--bogus"],
        ["frobnicate"],
        ["hash", "a.yaml", "b.yaml"],
    ],
)
def test_usage_errors_exit_2(argv: list[str]) -> None:
    assert runner.invoke(app, argv).exit_code == 2


def test_mounted_under_buzzctl(tmp_path: Path, solo: dict) -> None:
    from buzz_operator.cli.main import app as buzzctl

    result = runner.invoke(buzzctl, ["condition", "hash", str(_write(tmp_path, solo))])
    assert result.exit_code == 0
    assert result.stdout.strip() == ExperimentManifest.load(solo).sha256


def test_check_with_endpoint_config() -> None:
    result = runner.invoke(
        app,
        [
            "check",
            str(MANIFESTS / "standin-oracle.yaml"),
            "--artifact-root",
            str(MANIFESTS),
            "--endpoint-config",
            str(MANIFESTS / "endpoints" / "standin.json"),
        ],
    )
    assert result.exit_code == 0, result.output
    assert "prompts verified, endpoints configured" in result.stdout


def test_check_endpoint_config_missing_endpoint(tmp_path: Path, solo: dict) -> None:
    config = _write(tmp_path, {"other/model": {"provider": "openai", "api_key_env": "K"}}, "endpoints.json")
    result = runner.invoke(app, ["check", str(_write(tmp_path, solo)), "--endpoint-config", str(config)])
    assert result.exit_code == 1
    assert result.stderr.startswith(f"error: {config}: roster.0.endpoint: ")
    assert "'openai/luna'" in result.stderr


def test_check_endpoint_config_refuses_placeholders(tmp_path: Path, solo: dict) -> None:
    config = _write(
        tmp_path,
        {
            "openai/luna": {
                "provider": "databricks_v2",
                "api_key_env": "DATABRICKS_TOKEN",
                "env": {"DATABRICKS_HOST": "https://example-workspace.cloud.databricks.com"},
            }
        },
        "endpoints.json",
    )
    result = runner.invoke(app, ["check", str(_write(tmp_path, solo)), "--endpoint-config", str(config)])
    assert result.exit_code == 1
    assert "placeholder endpoints must be configured before a run: ['openai/luna']" in result.stderr
    assert "example-workspace" not in result.stderr
