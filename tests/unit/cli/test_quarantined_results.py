"""buzzctl sweep results and report over a sweep with a leaked key: the trial whose bundle the
scan flagged is scored like the others and marked SECRETS×n, also when its bundle went under the
quarantine prefix (read through the trial's quarantined.json); a reader who cannot list the
quarantine sees it as not committed, never as clean.

Each bundle's secret_scan block is the ledger's own scan of a seat log; the rest of summary.json
and result.json are the few fields the summary reads."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import jsonschema
from buzz_operator.cli.main import app
from buzz_operator.ledger.secret_scan import scan_bundle
from buzz_operator.results import RESULTS_SCHEMA
from buzz_operator.storage import FileStore, upload_bundle
from buzz_operator.storage.bundle import write_quarantine_pointer
from buzz_operator.storage.prefixed import PrefixedStore
from typer.testing import CliRunner

# spelled in parts, so that no scanner takes this file for a leak
LEAKED = "sk-" + "Zz9Yy8Xx" * 5
CONDITION, HASH = "standin-oracle", "ab" * 32


def _trial(root: Path, name: str, log: str) -> Path:
    agent = root / "agent" / "buzz"
    agent.mkdir(parents=True)
    (agent / "solo-1.stderr.log").write_text(log, encoding="utf-8")
    summary = {"condition": CONDITION, "manifest_sha256": HASH, "roster": [{"agent_id": "solo-1"}],
               "totals": {"input_tokens": 10, "output_tokens": 2, "cost_usd": 0.001},
               "accounting": {"reconciled": True}, "secret_scan": scan_bundle(agent).to_json()}
    (agent / "summary.json").write_text(json.dumps(summary), encoding="utf-8")
    (root / "result.json").write_text(json.dumps({
        "trial_name": name, "task_name": "hello-file", "verifier_result": {"rewards": {"reward": 1.0}},
    }), encoding="utf-8")
    return root


def _store(tmp_path: Path, *, quarantine: str | None) -> str:
    store = FileStore(tmp_path / "store")

    async def run() -> None:
        await upload_bundle(store, "leaky", "clean-1", _trial(tmp_path / "c", "clean-1", "all good\n"))
        leaky = _trial(tmp_path / "l", "leaky-1", f"debug: STANDIN_API_KEY={LEAKED}\n")
        if quarantine is None:
            await upload_bundle(store, "leaky", "leaky-1", leaky)
        else:
            await upload_bundle(PrefixedStore(store, "quarantine"), "leaky", "leaky-1", leaky)
            await write_quarantine_pointer(store, "leaky", "leaky-1", quarantine, {"count": 1})

    asyncio.run(run())
    return store.url


def _summary(store: str) -> dict:  # type: ignore[type-arg]
    result = CliRunner().invoke(app, ["sweep", "results", "leaky", "--store", store, "-o", "json"])
    assert result.exit_code == 0, result.stderr
    document = json.loads(result.stdout)
    jsonschema.Draft202012Validator(RESULTS_SCHEMA).validate(document)
    return document


def test_a_leaked_key_is_flagged_in_place(tmp_path: Path) -> None:
    document = _summary(_store(tmp_path, quarantine=None))
    [row] = document["conditions"]
    assert row["n"] == 2 and "SECRETS×1" in row["flags"]
    table = CliRunner().invoke(app, ["sweep", "results", "leaky", "--store", _store(tmp_path / "again", quarantine=None)])
    assert "SECRETS×1" in table.stdout and LEAKED not in table.stdout


def test_a_quarantined_bundle_is_read_through_its_pointer(tmp_path: Path) -> None:
    document = _summary(_store(tmp_path, quarantine="quarantine"))
    [row] = document["conditions"]
    assert row["n"] == 2 and "SECRETS×1" in row["flags"] and document["unfinished"] == []
    report = tmp_path / "report.html"
    done = CliRunner().invoke(app, ["report", "leaky", "--store", (tmp_path / "store").as_uri(), "--html", str(report)])
    assert done.exit_code == 0, done.stderr
    page = report.read_text(encoding="utf-8")
    assert "SECRETS×1" in page and LEAKED not in page
    # the trial rows flag the one trial: its row says `secrets`, the clean one's does not
    leaky_row = next(line for line in page.split("<tr>") if "leaky-1" in line)
    clean_row = next(line for line in page.split("<tr>") if "clean-1" in line)
    assert "secrets" in leaky_row and "secrets" not in clean_row


def test_a_reader_who_cannot_see_the_quarantine_does_not_count_it_clean(tmp_path: Path) -> None:
    # the pointer names a prefix this reader finds nothing under (as a bucket policy would deny it)
    document = _summary(_store(tmp_path, quarantine="restricted"))
    [row] = document["conditions"]
    assert row["n"] == 1 and document["unfinished"] == ["leaky-1"]


def test_an_export_leaves_a_quarantined_trial_out_and_says_so(tmp_path: Path) -> None:
    store = _store(tmp_path, quarantine="quarantine")
    job = tmp_path / "job"
    done = CliRunner().invoke(app, ["sweep", "export", "leaky", str(job), "--store", store, "-o", "json"])
    assert done.exit_code == 0, done.stderr
    written = json.loads(done.stdout)
    assert written["trials"] == 1 and written["quarantined"] == ["leaky-1"]
    assert sorted(p.name for p in job.iterdir() if p.is_dir()) == ["clean-1"]
    assert not [p for p in job.rglob("*") if p.is_file() and LEAKED in p.read_text(errors="replace")]
