"""A planted leaked key, end to end: the stand-in's `leaky` policy writes its Nostr secret key
(hex and nsec) and its model API key into its log, then solves the task. The operator, under
KopfRunner on the host, runs one trial of a sweep that quarantines such bundles
(spec.storage.quarantinePrefix). The trial must still succeed with its score, its bundle be
uploaded whole under the quarantine prefix with a pointer at its own place, and the leak be
visible in the trial's status (condition SecretsFound, status.secretFindings), a Warning Event,
the operator's metrics and `buzzctl sweep results` (SECRETS×1) — none of which may print the key."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from buzz_operator.observability.metrics import REGISTRY
from kopf.testing import KopfRunner
from prometheus_client import generate_latest
from prometheus_client.parser import text_string_to_metric_families

from tests.support.cluster import kubectl_json

SWEEP = "leaky"
QUARANTINE = "quarantine"




def condition(body: dict[str, Any], type_: str) -> dict[str, Any] | None:
    return next((c for c in (body.get("status") or {}).get("conditions", []) if c["type"] == type_), None)


def leaky_sweep(make_sweep, store_url: str) -> dict[str, Any]:  # type: ignore[no-untyped-def]
    """The oracle sweep with its one seat on the stand-in's `leaky` policy."""
    body = make_sweep(SWEEP, store_url=store_url, tasks=["hello-file"])
    spec = body["spec"]
    manifest = spec["condition"]["inline"]
    manifest["condition"] = "standin-leaky"
    manifest["roster"][0]["endpoint"] = "standin/leaky"
    manifest["prices"] = {"standin/leaky": manifest["prices"]["standin/oracle"]}
    spec["endpoints"]["config"]["standin/leaky"] = {"provider": "standin", "api_key_env": "STANDIN_API_KEY", "env": {}}
    spec["storage"]["quarantinePrefix"] = QUARANTINE
    return body


def run_to_completion(namespace: str, body: dict[str, Any]) -> None:
    subprocess.run(["kubectl", "-n", namespace, "apply", "-f", "-"], input=json.dumps(body), check=True,
                   capture_output=True, text=True)
    deadline = time.monotonic() + 420
    while time.monotonic() < deadline:
        sweep = kubectl_json("-n", namespace, "get", "buzzsweep", SWEEP)
        done = condition(sweep, "Complete")
        if done and done["status"] == "True":
            time.sleep(2)  # one more sweep tick: the trial index has seen the trial's last write
            return
        time.sleep(1)
    raise AssertionError(f"the sweep did not complete: {sweep.get('status')}")


def buzzctl(*args: str) -> str:
    return subprocess.run([str(Path(sys.executable).parent / "buzzctl"), *args], check=True, capture_output=True,
                          text=True).stdout


def metric_samples() -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    text = generate_latest(REGISTRY).decode()
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for family in text_string_to_metric_families(text) for s in family.samples}


async def test_a_leaked_key_shows_in_status_events_metrics_and_summary(  # type: ignore[no-untyped-def]
    namespace, crds, cluster_relay, sweep_secrets, make_sweep, tmp_path: Path
) -> None:
    store = tmp_path / "store"
    body = leaky_sweep(make_sweep, f"file://{store}")
    args = ["run", "--standalone", "-n", namespace, "-m", "buzz_operator.handlers"]
    with KopfRunner(args, timeout=60) as runner:
        run_to_completion(namespace, body)
        samples = metric_samples()
    assert runner.exception is None, runner.output

    [trial] = kubectl_json("-n", namespace, "get", "buzztrials")["items"]
    name, status = trial["metadata"]["name"], trial["status"]
    # the leak is reported, not scored: the trial ran its task and keeps its reward
    assert status["phase"] == "Succeeded" and status["reward"] == 1.0, status
    found = condition(trial, "SecretsFound")
    assert found is not None and (found["status"], found["reason"]) == ("True", "SecretsInBundle"), found
    findings = status["secretFindings"]
    assert findings["count"] >= 2 and findings["quarantined"] is True, findings
    assert findings["kinds"].get("trial-credential", 0) >= 1 and "nostr-private-key" in findings["kinds"], findings
    assert status["bundleURL"] == f"file://{store}/{QUARANTINE}/{SWEEP}/{name}"

    # the bundle: whole, committed under the quarantine prefix; only the pointer at its own place
    quarantined = store / QUARANTINE / SWEEP / name
    assert (quarantined / "result.json").is_file() and (quarantined / "agent" / "buzz" / "solo-1.stderr.log").is_file()
    assert sorted(p.name for p in (store / SWEEP / name).iterdir()) == ["quarantined.json"]
    scan = json.loads((quarantined / "agent" / "buzz" / "summary.json").read_text())["secret_scan"]
    assert not scan["clean"] and len(scan["findings"]) == findings["count"]
    log = (quarantined / "agent" / "buzz" / "solo-1.stderr.log").read_text()
    assert sweep_secrets in log  # the planted key really is in the bundle: nothing was lost or cut

    events = [e for e in kubectl_json("-n", namespace, "get", "events")["items"]
              if e["involvedObject"].get("name") == name]
    [warning] = [e for e in events if e["reason"] == "SecretsInBundle"]
    assert warning["type"] == "Warning" and "suspected secret" in warning["message"], warning

    labels = (("namespace", namespace), ("quarantined", "true"), ("sweep", SWEEP))
    assert samples[("buzz_trial_secret_findings", labels)] == findings["count"]
    assert samples[("buzz_trials_with_secret_findings", labels)] == 1

    summary = buzzctl("sweep", "results", SWEEP, "--store", f"file://{store}", "-o", "json")
    [row] = json.loads(summary)["conditions"]
    assert row["n"] == 1 and "SECRETS×1" in row["flags"], row

    # none of them prints a secret: the API key, the seat's key (in the log) or the relay owner's
    seat_key = next(line for line in log.splitlines() if "BUZZ_PRIVATE_KEY=" in line).split(
        "BUZZ_PRIVATE_KEY=")[1].split()[0]
    told = json.dumps([status, events]) + summary + repr(samples)
    for secret in (sweep_secrets, seat_key, cluster_relay.owner.secret_hex):
        assert secret not in told
