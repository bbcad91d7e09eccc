"""summary, export and report from an s3:// store alone (the S3 test server), as after the
cluster is gone: credentials from the AWS_* environment, no kubeconfig at all."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import jsonschema
from buzz_operator.results import RESULTS_SCHEMA
from buzz_operator.storage import S3Store

from tests.unit.results.sweep_builder import MIXED, build_sweep

BUZZCTL = Path(sys.executable).with_name("buzzctl")


def test_results_from_s3(s3_server, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    bucket = s3_server.fresh_bucket()
    build_sweep(tmp_path / "local", "mixed", MIXED)
    store = S3Store(bucket, "bundles", endpoint=s3_server.endpoint, access_key=s3_server.access_key,
                    secret_key=s3_server.secret_key, region=s3_server.region)  # fmt: skip
    asyncio.run(store.put_dir("mixed", tmp_path / "local" / "mixed"))
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("AWS_")},
        "KUBECONFIG": str(tmp_path / "no-cluster"),
        "AWS_ENDPOINT_URL": s3_server.endpoint,
        "AWS_ACCESS_KEY_ID": s3_server.access_key,
        "AWS_SECRET_ACCESS_KEY": s3_server.secret_key,
        "AWS_REGION": s3_server.region,
    }
    url = f"s3://{bucket}/bundles"

    def buzzctl(*argv: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(BUZZCTL), *argv, "--store", url], capture_output=True, text=True, env=env)

    summary = buzzctl("sweep", "results", "mixed", "-o", "json", "--failures")
    assert summary.returncode == 0, summary.stderr
    document = json.loads(summary.stdout)
    jsonschema.Draft202012Validator(RESULTS_SCHEMA).validate(document)
    assert document["trials"] == 7 and document["unfinished"] == ["user-mention-2"]
    assert document["failures"][0]["bundle"].startswith(f"{url}/mixed/")
    assert s3_server.secret_key not in summary.stdout + summary.stderr

    export = buzzctl("sweep", "export", "mixed", str(tmp_path / "job"))
    assert export.returncode == 0, export.stderr
    assert len([p for p in (tmp_path / "job").iterdir() if p.is_dir()]) == 7

    report = buzzctl("report", "mixed", "--html", str(tmp_path / "r.html"))
    assert report.returncode == 0 and "Plotly.newPlot" in (tmp_path / "r.html").read_text()

    evidence = buzzctl("trial", "evidence", "reply-to-thread-1", "--sweep", "mixed")
    assert evidence.returncode == 0 and "↳" in evidence.stdout

    missing = buzzctl("sweep", "results", "nope")
    assert missing.returncode == 1
