"""buzzctl over bundles the operator itself wrote: summary (schema-valid, one row, every committed
trial counted), failures, export (a job directory of every committed trial — Harbor's own code
reads it in tests/e2e/test_demo_path.py, through tests/support/harbor_venv.py), the report, and
every trial's evidence as a thread. Called by the e2e demo test (tests/e2e/test_demo_path.py)
on the store of the sweeps it just ran:

    check_sweep_results(f"file://{store}", name, tmp_path / name)
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import yaml
from buzz_operator.results import RESULTS_SCHEMA

from tests.unit.cli.test_export import METADATA

BUZZCTL = Path(sys.executable).with_name("buzzctl")


def buzzctl(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(BUZZCTL), *argv], capture_output=True, text=True, timeout=300)


def check_sweep_results(store_url: str, sweep: str, workdir: Path) -> dict[str, Any]:
    """Every storage-only buzzctl command over one sweep; returns the summary document."""
    store = Path(store_url.removeprefix("file://")) / sweep
    committed = sorted(p.parent.name for p in store.glob("*/result.json"))
    done = buzzctl("sweep", "results", sweep, "--store", store_url, "-o", "json", "--failures")
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    jsonschema.Draft202012Validator(RESULTS_SCHEMA).validate(document)
    assert document["trials"] == len(committed) and sum(r["n"] for r in document["conditions"]) == len(
        committed
    )
    for failure in document["failures"]:
        assert Path(failure["bundle"].removeprefix("file://")).is_dir(), failure

    job = workdir / "job"
    done = buzzctl("sweep", "export", sweep, str(job), "--store", store_url)
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in job.iterdir() if p.is_dir()) == committed
    result = json.loads((job / "result.json").read_text())
    assert result["stats"]["n_completed_trials"] == len(committed)
    assert set(yaml.safe_load((job / "metadata.yaml").read_text())) == METADATA

    done = buzzctl("report", sweep, "--store", store_url, "--html", str(workdir / "report.html"))
    assert done.returncode == 0, done.stderr
    for name in committed:
        done = buzzctl("trial", "evidence", name, "--sweep", sweep, "--store", store_url)
        assert done.returncode == 0 and "(user)" in done.stdout, (name, done.stderr)
    return document
