"""buzzctl report writes one self-contained HTML page from the store alone."""

from __future__ import annotations

from pathlib import Path

from buzz_operator.cli.main import app
from typer.testing import CliRunner


def test_report_file(runner: CliRunner, store: str, tmp_path: Path) -> None:
    page = tmp_path / "out" / "report.html"
    result = runner.invoke(app, ["report", "mixed", "--html", str(page), "--store", store])
    assert result.exit_code == 0, result.stderr
    text = page.read_text()
    assert "Plotly.newPlot" in text and text.count(f'<a href="{store}/mixed/') == 7
    assert result.stdout.startswith(f"report for sweep mixed: {page} (7 trials")


def test_report_of_unknown_sweep(runner: CliRunner, store: str, tmp_path: Path) -> None:
    assert (
        runner.invoke(app, ["report", "nope", "--html", str(tmp_path / "r.html"), "--store", store]).exit_code
        == 1
    )
