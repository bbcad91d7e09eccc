"""A bundle's secret scan reaches the trial's status (condition SecretsFound, secretFindings), a
Warning Event and the metrics — kinds, files and lines only, never the matched text. The scan is
the ledger's own, run on a bundle directory with a key in a seat's log."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from buzz_operator.api.conditions import find_condition
from buzz_operator.api.trial import BuzzTrialStatus, Phase
from buzz_operator.ledger.secret_scan import scan_bundle
from buzz_operator.observability import events
from buzz_operator.observability.metrics import Snapshot
from buzz_operator.trial.secret_findings import SECRETS_FOUND, findings_of, needs_quarantine
from buzz_operator.trial.state import (
    Bundled,
    Collected,
    Graded,
    Launched,
    Provisioned,
    Ran,
    Spend,
    advance,
    begin,
)

T0 = datetime(2026, 1, 1, 12, 0, 0, tzinfo=UTC)
# spelled in parts, so that no scanner takes this file for a leak
OPENAI_SHAPED = "sk-" + "A1b2C3d4" * 5
TRIAL_KEY = "f00d" * 16
URL = "file:///var/lib/b/demo/demo-abc"


def _bundling() -> BuzzTrialStatus:
    status = begin(BuzzTrialStatus(), T0)
    for offset, fact in enumerate((
        Provisioned(trial_id="tid-0", tenant_secret="demo-abc-seats", channel_id="chan-1"),
        Launched(pod="demo-abc"),
        Ran(task_event_id="ev-task", completion_message_id="ev-done"),
        Collected(Spend()),
        Graded(reward=1.0),
    ), start=1):
        status = advance(status, fact, T0 + timedelta(seconds=offset))
    assert status.phase is Phase.BUNDLING
    return status


def _leaky_bundle(root: Path) -> Path:
    root.mkdir()
    (root / "solo-1.stderr.log").write_text(
        "starting\n"
        f"debug environment: BUZZ_PRIVATE_KEY={TRIAL_KEY} STANDIN_API_KEY={OPENAI_SHAPED}\n",
        encoding="utf-8",
    )
    (root / "solo-1.stdout.log").write_text("nothing to see\n", encoding="utf-8")
    return root


def test_findings_name_kinds_files_and_lines_never_the_secret(tmp_path: Path) -> None:
    scan = scan_bundle(_leaky_bundle(tmp_path / "b"), known_secrets=[TRIAL_KEY])
    findings = findings_of(scan, quarantined=True)
    assert findings.count == 2 and findings.kinds == {"openai-key": 1, "trial-credential": 1}
    assert findings.locations == ["solo-1.stderr.log:2 (trial-credential)", "solo-1.stderr.log:2 (openai-key)"]
    assert needs_quarantine(scan) and findings.quarantined
    text = findings.model_dump_json()
    assert TRIAL_KEY not in text and OPENAI_SHAPED not in text


def test_a_bundle_with_findings_sets_the_condition_status_event_and_metrics(tmp_path: Path) -> None:
    scan = scan_bundle(_leaky_bundle(tmp_path / "b"), known_secrets=[TRIAL_KEY])
    before = _bundling()
    after = advance(before, Bundled(bundle_url=URL, secrets=findings_of(scan)), T0 + timedelta(seconds=9))
    assert after.phase is Phase.SUCCEEDED  # a leak is reported, not a failed trial: the score stands
    condition = find_condition(after.conditions, SECRETS_FOUND)
    assert condition is not None and (condition.status.value, condition.reason) == ("True", "SecretsInBundle")
    assert "2 suspected secret(s)" in condition.message and "solo-1.stderr.log:2 (openai-key)" in condition.message
    assert f"uploaded to {URL}" in condition.message
    assert after.secret_findings is not None and after.secret_findings.count == 2
    api = after.to_api()
    assert api["secretFindings"]["kinds"] == {"openai-key": 1, "trial-credential": 1}

    warnings = [e for e in events.trial_events(before, after) if e.type == events.WARNING]
    assert [e.reason for e in warnings] == ["SecretsInBundle"]
    assert warnings[0].message == condition.message
    # written again unchanged (a resumed daemon): no second Warning
    assert not [e for e in events.trial_events(after, after) if e.reason == "SecretsInBundle"]

    snapshot = Snapshot()
    snapshot.observe_trial({"metadata": {"name": "demo-abc", "namespace": "ns"},
                            "spec": {"sweepName": "demo", "conditionHash": "ab" * 32}, "status": api})
    found = {(s.name, tuple(sorted(s.labels.items()))): s.value for f in snapshot.collect() for s in f.samples}
    labels = (("namespace", "ns"), ("quarantined", "false"), ("sweep", "demo"))
    assert found[("buzz_trial_secret_findings", labels)] == 2
    assert found[("buzz_trials_with_secret_findings", labels)] == 1
    everything = repr(found) + api.__repr__() + repr(warnings)
    assert TRIAL_KEY not in everything and OPENAI_SHAPED not in everything


def test_a_clean_bundle_says_so_and_keeps_status_small(tmp_path: Path) -> None:
    root = tmp_path / "clean"
    root.mkdir()
    (root / "solo-1.stderr.log").write_text("all good\n", encoding="utf-8")
    after = advance(_bundling(), Bundled(bundle_url=URL, secrets=findings_of(scan_bundle(root))),
                    T0 + timedelta(seconds=9))
    condition = find_condition(after.conditions, SECRETS_FOUND)
    assert condition is not None and (condition.status.value, condition.reason) == ("False", "NoFindings")
    assert after.secret_findings is None
    assert not [e for e in events.trial_events(_bundling(), after) if e.type == events.WARNING]


def test_a_bundle_that_was_not_written_is_unknown_not_clean() -> None:
    after = advance(_bundling(), Bundled(bundle_url=URL, secrets=findings_of(None)), T0 + timedelta(seconds=9))
    condition = find_condition(after.conditions, SECRETS_FOUND)
    assert condition is not None and (condition.status.value, condition.reason) == ("Unknown", "BundleNotScanned")
    assert after.secret_findings is not None and not after.secret_findings.scanned
    assert not needs_quarantine(None)  # nothing was written, so nothing to move
