"""Bundle writer (docs/bundle.md#agent-bundle, docs/corridor.md#timingjson): every file, the summary, and never raising."""

from __future__ import annotations

import json
import stat
from pathlib import Path

from buzz_operator.condition import ExperimentManifest
from buzz_operator.ledger import TrialTiming, collect_accounting, trial_timing, write_bundle
from buzz_operator.ledger.timing import TIMING_DEFINITION

from .builders import turn_end, usage

ENDPOINTS = {
    "luna": {"provider": "openai", "api_key_env": "OPENAI_COMPAT_API_KEY", "env_keys": ["OPENAI_COMPAT_BASE_URL"]},
    "opus": {"provider": "databricks_v2", "api_key_env": "DATABRICKS_TOKEN", "env_keys": []},
}
SEAT_KEY = "5e" * 32
API_KEY = "dapi" + "f" * 32
STACK = {"image": "docker.io/buzz/stack:dev", "layout": "folder", "digest": "d" * 64, "binaries": {"buzz-acp": "e" * 64}}
BOX = {"headroom": {"limitMultiple": 3, "unlimited": False, "cpuRequestFraction": 1.0, "memoryRequestFraction": 1.0},
       "failed_tries": ["OOMKilled"], "resource_usage": {"agents": {"cgroup": 1, "oomKills": 0}}}


def stage(bundle: Path) -> None:
    """What the trial room puts in the bundle before write_bundle runs."""
    bundle.mkdir(parents=True)
    (bundle / "lead-1.system-prompt.md").write_text(f"You are `lead-1` (pubkey `{'ab' * 32}`).\n", encoding="utf-8")
    (bundle / "lead-1.stdout.log").write_text(usage("A", 1000, 100) + turn_end(), encoding="utf-8")
    (bundle / "transcript.json").write_text("{}", encoding="utf-8")


def test_bundle_files_and_summary(tmp_path: Path, manifest: ExperimentManifest, seats) -> None:
    bundle = tmp_path / "agent" / "buzz"
    stage(bundle)
    accounting = collect_accounting(bundle, seats, manifest.prices)
    timing = trial_timing(
        runtime_started=10.0, bundle_started=70.5, active_started=12.0, active_finished=60.0, usage_settle_seconds=1.5
    )
    report = write_bundle(
        bundle,
        manifest=manifest,
        trial_id="7f3c",
        channel_id="chan-1",
        seats=seats,
        accounting=accounting,
        endpoints_redacted=ENDPOINTS,
        stack=STACK,
        known_secrets=[SEAT_KEY, API_KEY],
        timing=timing,
        box=BOX,
    )
    assert report.ok and report.summary_path == bundle / "summary.json"

    manifest_doc = json.loads((bundle / "manifest.json").read_text(encoding="utf-8"))
    assert manifest_doc == {"sha256": manifest.sha256, "manifest": manifest.model_dump(mode="json")}
    assert (bundle / "endpoints.redacted.json").read_text(encoding="utf-8") == json.dumps(ENDPOINTS, indent=2, sort_keys=True)
    receipts = (bundle / "receipts.jsonl").read_text(encoding="utf-8").splitlines()
    assert [json.loads(line)["agent_id"] for line in receipts] == ["lead-1", "worker-1", "worker-2"]
    assert stat.S_IMODE((bundle / "receipts.jsonl").stat().st_mode) == 0o600
    assert (bundle / "timing.json").read_text(encoding="utf-8") == (
        '{\n  "schema_version": 1,\n  "definition": "' + TIMING_DEFINITION + '",\n'
        '  "runtime_until_bundle_seconds": 60.5,\n  "pre_prompt_seconds": 2.0,\n'
        '  "agent_active_seconds": 48.0,\n  "usage_settle_seconds": 1.5\n}\n'
    )

    text = (bundle / "summary.json").read_text(encoding="utf-8")
    summary = json.loads(text)
    assert text == json.dumps(summary, indent=2, sort_keys=True)
    assert summary["bundle_version"] == "1"
    assert (summary["condition"], summary["manifest_sha256"], summary["solo_roster"]) == (
        "ledger-team", manifest.sha256, False
    )
    assert (summary["trial_id"], summary["channel_id"]) == ("7f3c", "chan-1")
    assert summary["roster"][0] == {
        "agent_id": "lead-1", "role": "orchestrator", "endpoint": "opus", "system_prompt": "lead-1.system-prompt.md"
    }  # fmt: skip
    assert [entry["agent_id"] for entry in summary["roster"]] == ["lead-1", "worker-1", "worker-2"]
    assert summary["stack"] == STACK  # which binaries produced the bundle, even without result.json
    assert summary["box"] == BOX  # the room the box gave and what it did, as result.json says it
    assert summary["totals"]["input_tokens"] == 1000
    assert summary["accounting"]["reconciled"] is True
    assert set(summary["accounting"]) == {
        "reconciled", "note", "warnings", "estimated_cache_read_tokens", "assumes_cache_discount",
        "handoffs", "handoff_truncations", "handoff_cost_usd_upper_bound",
    }  # fmt: skip
    assert summary["secret_scan"] == {
        "clean": True,
        "findings": [],
        "review": [{"path": "lead-1.system-prompt.md", "line": 1, "kind": "hex-64"}],
    }
    assert summary["files"] == [
        "endpoints.redacted.json", "lead-1.stdout.log", "lead-1.system-prompt.md", "manifest.json",
        "receipts.jsonl", "timing.json", "transcript.json",
    ]  # fmt: skip

    # A second write (a resumed trial re-bundling) is byte-identical.
    again = write_bundle(
        bundle, manifest=manifest, trial_id="7f3c", channel_id="chan-1", seats=seats, accounting=accounting,
        endpoints_redacted=ENDPOINTS, stack=STACK, known_secrets=[SEAT_KEY, API_KEY], timing=timing, box=BOX,
    )  # fmt: skip
    assert again.ok and (bundle / "summary.json").read_text(encoding="utf-8") == text


def test_leaked_trial_secret_makes_the_bundle_unclean(tmp_path: Path, manifest: ExperimentManifest, seats) -> None:
    bundle = tmp_path / "b"
    stage(bundle)
    (bundle / "lead-1.stderr.log").write_text(f"env BUZZ_PRIVATE_KEY={SEAT_KEY}\n", encoding="utf-8")
    accounting = collect_accounting(bundle, seats, manifest.prices)
    report = write_bundle(
        bundle, manifest=manifest, trial_id="t", channel_id="c", seats=seats, accounting=accounting,
        endpoints_redacted=ENDPOINTS, stack=None, known_secrets=[SEAT_KEY],
    )  # fmt: skip
    summary = json.loads(report.summary_path.read_text(encoding="utf-8"))
    assert summary["secret_scan"]["clean"] is False
    assert summary["secret_scan"]["findings"] == [{"path": "lead-1.stderr.log", "line": 1, "kind": "trial-credential"}]
    assert SEAT_KEY not in report.summary_path.read_text(encoding="utf-8")


def test_unwritable_directory_never_raises(tmp_path: Path, manifest: ExperimentManifest, seats) -> None:
    blocker = tmp_path / "not-a-directory"
    blocker.write_text("", encoding="utf-8")
    report = write_bundle(
        blocker / "buzz", manifest=manifest, trial_id="t", channel_id="c", seats=seats,
        accounting=collect_accounting(tmp_path, seats, manifest.prices), endpoints_redacted=ENDPOINTS, stack=None,
    )  # fmt: skip
    assert not report.ok
    assert "not-a-directory" in (report.error or "")
    assert "bundle_error summary could not be written either" in (report.error or "")


def test_failure_is_recorded_inside_the_bundle(tmp_path: Path, manifest: ExperimentManifest, seats) -> None:
    unredacted = {"luna": {"provider": "openai", "api_key_env": "K", "env": {"OPENAI_COMPAT_BASE_URL": "https://x"}}}
    report = write_bundle(
        tmp_path, manifest=manifest, trial_id="t", channel_id="c", seats=seats,
        accounting=collect_accounting(tmp_path, seats, manifest.prices), endpoints_redacted=unredacted, stack=None,
    )  # fmt: skip
    assert not report.ok
    assert json.loads((tmp_path / "summary.json").read_text(encoding="utf-8")) == {
        "bundle_error": "endpoints.redacted.json: endpoint 'luna' carries unredacted keys ['env']"
    }
    assert not (tmp_path / "endpoints.redacted.json").exists()


def test_timing_of_a_trial_that_never_prompted() -> None:
    timing = trial_timing(
        runtime_started=0.0, bundle_started=5.0, active_started=None, active_finished=None, usage_settle_seconds=0.0
    )
    assert timing == TrialTiming(5.0, None, None, 0.0)
    assert json.loads(timing.render())["agent_active_seconds"] is None
