"""buzzctl ledger price / bundle scan: output contract and exit codes 0, 1, 2."""

from __future__ import annotations

import json
from pathlib import Path

import yaml
from buzz_operator.cli.main import app
from typer.testing import CliRunner

from .builders import handoff, manifest_data, turn_end, usage

runner = CliRunner()


def manifest_file(tmp_path: Path, data: dict | None = None) -> Path:
    path = tmp_path / "team.yaml"
    path.write_text(yaml.safe_dump(data or manifest_data()), encoding="utf-8")
    return path


def test_price_prints_sorted_receipts_then_verdict(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "worker-1.stdout.log").write_text(usage("W", 4000, 500) + turn_end(), encoding="utf-8")
    (logs / "lead-1.stderr.log").write_text(usage("A", 10_000, 2_000) + handoff(1, 1000) + turn_end(), encoding="utf-8")
    result = runner.invoke(app, ["ledger", "price", "--manifest", str(manifest_file(tmp_path)), "--logs", str(logs)])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    receipts = [json.loads(line) for line in lines[:-1]]
    assert [r["agent_id"] for r in receipts] == ["lead-1", "worker-1", "worker-2"]
    assert lines[0] == json.dumps(receipts[0], sort_keys=True)
    assert receipts[2]["turns"] == 0 and receipts[2]["cost_usd"] == 0.0  # no log: idle seat
    verdict = json.loads(lines[-1])
    assert list(verdict) == ["reconciled", "note", "warnings"]
    assert verdict["reconciled"] is True and verdict["warnings"] == []
    assert "1 of 3 agent(s) were never woken (['worker-2'])" in verdict["note"]


def test_price_invalid_manifest_is_one_line_naming_the_field(tmp_path: Path) -> None:
    data = manifest_data()
    data["roster"][0]["temperature"] = 0.7
    result = runner.invoke(app, ["ledger", "price", "--manifest", str(manifest_file(tmp_path, data)), "--logs", str(tmp_path)])
    assert result.exit_code == 1
    assert result.stdout == ""
    message = result.stderr.strip()
    assert "\n" not in message and "temperature" in message and "team.yaml" in message
    assert "Traceback" not in result.output


def test_price_missing_logs_dir_and_missing_file(tmp_path: Path) -> None:
    result = runner.invoke(app, ["ledger", "price", "--manifest", str(manifest_file(tmp_path)), "--logs", str(tmp_path / "nope")])
    assert (result.exit_code, result.stderr.strip()) == (1, f"--logs: not a directory: {tmp_path / 'nope'}")
    result = runner.invoke(app, ["ledger", "price", "--manifest", str(tmp_path / "absent.yaml"), "--logs", str(tmp_path)])
    assert result.exit_code == 1 and "absent.yaml" in result.stderr and result.stderr.count("\n") == 1


def test_usage_errors_exit_2(tmp_path: Path) -> None:
    assert runner.invoke(app, ["ledger", "price", "--logs", str(tmp_path)]).exit_code == 2
    assert runner.invoke(app, ["bundle", "scan"]).exit_code == 2


def test_bundle_scan(tmp_path: Path) -> None:
    (tmp_path / "lead-1.stdout.log").write_text("ok\nkey sk-" + "Z9" * 20 + "\n", encoding="utf-8")
    result = runner.invoke(app, ["bundle", "scan", str(tmp_path)])
    assert result.exit_code == 0
    assert json.loads(result.stdout) == {
        "clean": False,
        "findings": [{"path": "lead-1.stdout.log", "line": 2, "kind": "openai-key"}],
        "review": [],
    }
    assert "Z9Z9" not in result.stdout
    missing = runner.invoke(app, ["bundle", "scan", str(tmp_path / "nope")])
    assert (missing.exit_code, missing.stderr.strip()) == (1, f"DIR: not a directory: {tmp_path / 'nope'}")
