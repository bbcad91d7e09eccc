"""The HTML report renders in headless Chromium (Debian's chromium, driven by Playwright) with no
JavaScript console error or page error, its charts drawn; the screenshot is kept and its path
printed (run with -s to see it)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.unit.results.sweep_builder import MIXED, build_sweep

CHROMIUM = "/usr/bin/chromium"
ARTIFACTS = Path(os.environ.get("BUZZ_RUN", "/var/tmp/buzz-operator")) / "test-artifacts"
BUZZCTL = Path(sys.executable).with_name("buzzctl")


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("store")
    store = build_sweep(root, "mixed", MIXED, sweep_config={"spec": {"timeoutMultiplier": 2.0}})
    page = tmp_path_factory.mktemp("report") / "report.html"
    # the installed console script, as a person (and make demo) runs it
    subprocess.run([str(BUZZCTL), "report", "mixed", "--html", str(page), "--store", store], check=True)
    return page


def test_report_renders_without_errors(report: Path) -> None:
    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing: hack/deps.sh installs Debian's chromium package")
    from playwright.sync_api import sync_playwright

    errors: list[str] = []
    requests: list[str] = []
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    shot = ARTIFACTS / "buzzctl-report.png"
    with sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=CHROMIUM,
            args=["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync"],
        )  # fmt: skip
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.on(
                "console",
                lambda m: errors.append(f"console.{m.type}: {m.text}") if m.type == "error" else None,
            )
            page.on("pageerror", lambda e: errors.append(f"pageerror: {e}"))
            page.on("request", lambda r: requests.append(r.url))
            page.goto(report.as_uri(), wait_until="load")
            page.wait_for_selector("#reward-chart .main-svg", timeout=15_000)
            page.wait_for_selector("#cost-chart .main-svg", timeout=15_000)
            bars = page.locator("#reward-chart g.point").count()
            rows = page.locator("#trials tr").count()
            page.screenshot(path=str(shot), full_page=True)
        finally:
            browser.close()
    print(f"\nreport screenshot: {shot} ({shot.stat().st_size} bytes)")
    assert errors == []
    # self-contained: the page itself is the only thing loaded
    assert requests == [report.as_uri()]
    assert bars >= 1 and rows == 8  # header + 7 committed trials
    assert shot.stat().st_size > 10_000


def test_chromium_cli_screenshot(report: Path, tmp_path: Path) -> None:
    """The same page through chromium's own --screenshot, as a second, Playwright-free check."""
    shot = ARTIFACTS / "buzzctl-report-cli.png"
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    shot.unlink(missing_ok=True)
    done = subprocess.run(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         f"--user-data-dir={tmp_path / 'profile'}", f"--screenshot={shot}", "--window-size=1400,1000",
         "--virtual-time-budget=5000", report.as_uri()],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    print(f"\nchromium --screenshot: {shot}")
    assert done.returncode == 0, done.stderr[-2000:]
    assert shot.is_file() and shot.stat().st_size > 10_000
    assert shutil.which("chromium") is not None
