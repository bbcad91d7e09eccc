"""The `make demo` path, asserted: the demo's own set-up (dev relay in the cluster behind a
Service, Postgres behind a selector-less Service, the scripted model endpoint behind a Service,
the stand-in and scripted conditions as ConfigMaps, the endpoint ConfigMaps and API-key Secrets),
the operator started as its console script, and manifests/sweeps/demo.yaml applied — five
conditions over the whole builtin suite (nine Buzz-native tasks and hello-file), two attempts
each — with storage moved into the test's directory.

Expected from the stand-ins (tests/unit/agent pins their behaviour) and from the scripted model
(tests/unit/model), which the stand-in stack calls over HTTP as buzz-agent would, as
docs/scripted-model.md tabulates (tests/unit/agent/suite_trial.py EXPECTED_FAILURES): each oracle
team scores 1.0 on every task; toplevel fails each thread dimension and nothing else; naive fails,
on each of Block's five newest tasks, the dimensions of the mistake that task exists to catch, and
nothing else. The scripted trials' receipts bill exactly the tokens the scripted model reported,
request by request, in its own log."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from buzz_operator.condition import ExperimentManifest, plan_seats
from buzz_operator.dev import demo, deploy_model

from tests.e2e.test_sweep import condition, kubectl_json, wait_until
from tests.integration.cli.real_bundles import buzzctl, check_sweep_results
from tests.support.harbor_venv import export_job, harbor_check, harbor_releases, problems
from tests.unit.agent.suite_trial import EXPECTED_FAILURES

ROOT = Path(__file__).resolve().parents[2]
SUITE = sorted(p.parent.name for p in (ROOT / "tasks").glob("*/task.toml"))
ATTEMPTS = 2
CONDITION_FILES = {"demo-oracle": "standin-oracle.yaml", "demo-toplevel": "standin-toplevel.yaml",
                   "demo-naive": "standin-naive.yaml", "demo-scripted-oracle": "scripted-oracle.yaml",
                   "demo-scripted-naive": "scripted-naive.yaml"}
SCRIPTED = ("demo-scripted-oracle", "demo-scripted-naive")
LAYOUT = ("config.json", "result.json", "agent/buzz/manifest.json", "agent/buzz/receipts.jsonl",
          "agent/buzz/endpoints.redacted.json", "agent/buzz/summary.json", "agent/buzz/timing.json",
          "agent/buzz/transcript.json", "agent/buzz/buzz-evidence.json")
SEAT_FILES = ("{seat}.system-prompt.md", "{seat}.stdout.log", "{seat}.stderr.log")


def expected_misses(policy: str) -> dict[str, list[str]]:
    """Per task, the verifier dimensions `policy` fails (sorted), as docs/scripted-model.md says."""
    out = {task: sorted(by_policy[policy]) for task, by_policy in EXPECTED_FAILURES.items() if policy in by_policy}
    if policy == "toplevel":
        out["reply-to-thread"] = ["reply_to_thread"]
    return out


def _trials(namespace: str, sweep: str) -> list[dict[str, Any]]:
    items = kubectl_json("-n", namespace, "get", "buzztrials")["items"]
    return [t for t in items if t["spec"]["sweepName"] == sweep]


def _state(trial: dict[str, Any]) -> str:
    status = trial.get("status") or {}
    phase = status.get("phase", "Pending")
    if phase == "Succeeded":
        return "succeeded"
    if phase == "Failed":
        return "broken" if status.get("failureClass") == "broken" else "failed"
    return "pending" if phase == "Pending" else "running"


def _check_bundle(bundle: Path, seats: list[str], secrets: list[str]) -> None:
    missing = [f for f in LAYOUT if not (bundle / f).is_file()]
    missing += [f"agent/buzz/{f.format(seat=s)}" for s in seats for f in SEAT_FILES
                if not (bundle / "agent" / "buzz" / f.format(seat=s)).is_file()]
    if not ((bundle / "verifier" / "reward.json").is_file() or (bundle / "verifier" / "reward.txt").is_file()):
        missing.append("verifier/reward.json|reward.txt")
    assert not missing, f"{bundle}: missing {missing}"
    summary = json.loads((bundle / "agent" / "buzz" / "summary.json").read_text())
    assert summary["secret_scan"]["clean"], (bundle, summary["secret_scan"])
    everything = "".join(p.read_text(errors="replace") for p in bundle.rglob("*") if p.is_file())
    leaked = [s[:6] for s in secrets if s in everything]
    assert not leaked, f"{bundle}: secrets in the bundle (prefixes {leaked})"


@pytest.mark.timeout(1800)
async def test_demo_sweeps_end_to_end(namespace, crds, pg_dsn, relay_db, kube, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from buzz_operator.kube.objects import read_secret

    from tests.e2e.conftest import host_ip

    await demo.set_up(pg_dsn, host_ip(), namespace, relay_db)
    store = tmp_path / "store"
    operator = demo.start_operator(tmp_path / "operator.log", namespace)
    started = time.monotonic()
    try:
        for body in demo.demo_sweeps(f"file://{store}"):
            body["metadata"]["namespace"] = namespace
            kubectl_json("-n", namespace, "apply", "-f", _write(tmp_path, body))

        def finished() -> list[dict[str, Any]] | None:
            assert operator.poll() is None, (tmp_path / "operator.log").read_text()[-3000:]
            items = kubectl_json("-n", namespace, "get", "buzzsweeps")["items"]
            done = [s for s in items if (condition(s, "Complete") or {}).get("status") == "True"]
            return items if len(done) == len(CONDITION_FILES) else None

        sweeps = wait_until(finished, 1500, "every demo sweep to complete")
        print(f"\ndemo path: {len(SUITE) * ATTEMPTS * len(CONDITION_FILES)} trials in "
              f"{time.monotonic() - started:.0f}s")
        api_key = (await read_secret(kube, namespace, "standin-api-keys"))["STANDIN_API_KEY"]
        scripted_key = (await read_secret(kube, namespace, "scripted-api-keys"))["OPENAI_COMPAT_API_KEY"]
        owner = (await read_secret(kube, namespace, "buzz-dev-relay"))["owner-key"]

        for sweep in sweeps:
            name, status = sweep["metadata"]["name"], sweep["status"]
            trials = _trials(namespace, name)
            assert len(trials) == status["total"] == len(SUITE) * ATTEMPTS, (name, status)
            counts = {state: sum(_state(t) == state for t in trials)
                      for state in ("pending", "running", "succeeded", "failed", "broken")}
            assert counts == {k: status[k] for k in counts}, (name, counts, status)
            assert counts["succeeded"] == len(trials), (name, counts)
            seats = [s.seat_id for s in plan_seats(ExperimentManifest.load(ROOT / "manifests" / CONDITION_FILES[name]))]

            misses: dict[str, list[str]] = {}
            for trial in trials:
                trial_status, task = trial["status"], trial["spec"]["task"]
                assert trial_status["outcome"] == "ok", trial_status
                bundle = store / name / trial["metadata"]["name"]
                assert trial_status["bundleURL"] == f"file://{bundle}"
                _check_bundle(bundle, seats, [api_key, scripted_key, owner])
                result = json.loads((bundle / "result.json").read_text())
                assert result["verifier_result"]["rewards"]["reward"] == trial_status["reward"]
                if trial_status["reward"] < 1.0:
                    misses.setdefault(task, []).extend(
                        sorted(k for k, v in trial_status["rewards"].items() if k != "reward" and v < 1.0))

            # result.json only where the trial completed: every trial directory is one of the trials
            committed = {p.parent.name for p in (store / name).glob("*/result.json")}
            assert committed == {t["metadata"]["name"] for t in trials}
            expected = expected_misses(name.rsplit("-", 1)[-1])
            assert misses == {task: dims * ATTEMPTS for task, dims in expected.items()}, (name, misses)
            if not expected:
                assert status["meanReward"] == 1.0, (name, status)

            for document in ("config.json", "lock.json", "summary.json"):
                assert (store / name / document).is_file(), f"{name}/{document} missing"
            summary = json.loads((store / name / "summary.json").read_text())
            assert summary["counts"]["succeeded"] == status["succeeded"] and summary["finished"] is True
            assert summary["conditionHash"] == status["conditionHash"]
            assert status["summaryURL"] == f"file://{store}/{name}/summary.json"
            lock = json.loads((store / name / "lock.json").read_text())
            assert sorted(lock["tasks"]) == SUITE and lock["conditionHash"] == status["conditionHash"]
            # the stand-in stack as the preflight canary installed it (docs/stack.md)
            assert lock["stack"]["layout"] == "folder" and lock["stack"]["digest"], lock["stack"]

            # buzzctl over the same bundles, from storage alone: summary, export, report, threads
            document = check_sweep_results(f"file://{store}", name, tmp_path / "results" / name)
            # one row: results are keyed by stack digest too, so a second row means the stack image
            # changed under its tag during the run (rebuilt and imported by another `make images`)
            rows = [(r["stack"], r["n"]) for r in document["conditions"]]
            assert len(rows) == 1, f"{name}: trials ran {len(rows)} stacks (stack, n): {rows}"
            [row] = document["conditions"]
            assert row["n"] == len(trials) and row["pass_rate"] == pytest.approx(status["meanReward"]), (row, status)
            assert row["stack_digest"] == lock["stack"]["digest"]  # every trial ran the stack the lock names
            assert {(f["task"], f["reason"]) for f in document["failures"]} == {
                (task, "failed " + ", ".join(dims)) for task, dims in expected.items()}, document["failures"]

        check_comparison(f"file://{store}", tmp_path / "results")
        check_endpoint_billing(store, await deploy_model.logs(kube, namespace))
        check_with_harbor(store, tmp_path / "results")
    finally:
        for name in CONDITION_FILES:  # deleted while the operator runs, so its finalizers are served
            kubectl_json_quiet(namespace, name)
        operator.terminate()
        operator.wait(timeout=60)


def check_comparison(store_url: str, results: Path) -> None:
    """What `make demo` ends with (demo.COMPARED, docs/statistics.md): naive against the oracle
    loses exactly the tasks it fails and ties the rest, the dimensions whose difference is below
    zero are the ones it fails, and the report of both opens with the comparison and its plots."""
    import jsonschema
    from buzz_operator.results import COMPARE_SCHEMA

    done = buzzctl("compare", *demo.COMPARED, "--store", store_url, "-o", "json")
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    jsonschema.Draft202012Validator(COMPARE_SCHEMA).validate(document)
    [pair] = document["comparisons"]
    missed = expected_misses("naive")
    figures = pair["pass_rate"]
    assert (figures["tasks"], figures["wins"], figures["losses"]) == (len(SUITE), 0, len(missed)), figures
    assert figures["difference"]["estimate"] == pytest.approx(-len(missed) / len(SUITE)), figures
    assert figures["difference"]["high"] < 0 and pair["warnings"] == [], pair
    worse = {d["dimension"] for d in pair["dimensions"] if d["difference"]["estimate"] < 0}
    assert worse == {dim for dims in missed.values() for dim in dims}, pair["dimensions"]
    page = results / "comparison.html"
    done = buzzctl("report", *demo.COMPARED, "--store", store_url, "--html", str(page))
    assert done.returncode == 0, done.stderr
    text = page.read_text()
    assert "id=comparison" in text and "<svg id='forest-1'" in text and "<svg id='cost-vs-pass'" in text
    # the front: the oracle solves more; both are on it only if the naive team costs less
    front = {f["sweep"]: f for f in document["front"]}
    assert set(front) == set(demo.COMPARED) and front[demo.COMPARED[0]]["on_front"]["floor"], front
    assert "<table id=front>" in text
    # and the plan line the demo ends with (hack/demo.sh): the oracle as the pilot, the demo's size
    done = buzzctl("plan", "--pilot", demo.COMPARED[0], "--store", store_url, "-d", "-0.2", "--attempts",
                   str(ATTEMPTS), "-o", "json")
    assert done.returncode == 0, done.stderr
    plan = json.loads(done.stdout)
    assert plan["rates"]["source"] == "pilot" and plan["rates"]["tasks"] == len(SUITE), plan["rates"]
    assert (plan["size"]["tasks"], plan["size"]["attempts"]) == (len(SUITE), ATTEMPTS), plan["size"]
    assert [n["attempts"] for n in plan["needs"]] == [ATTEMPTS] and plan["needs"][0]["tasks"], plan["needs"]


def check_endpoint_billing(store: Path, model_log: str) -> None:
    """Every token the scripted model reported is in a scripted trial's receipt, and nothing else
    is: the model pod served only these sweeps, so its log's usage, summed over every request it
    answered, equals the receipts' sums (a retried try would show here as tokens never billed)."""
    served = [json.loads(line) for line in model_log.splitlines() if line.startswith("{") and '"usage"' in line]
    assert served and all(line["status"] == 200 for line in served)
    receipts = [json.loads(line) for name in SCRIPTED for path in sorted((store / name).glob("*/agent/buzz/receipts.jsonl"))
                for line in path.read_text().splitlines()]
    assert len(receipts) == len(SUITE) * ATTEMPTS * len(SCRIPTED)
    assert sum(r["input_tokens"] for r in receipts) == sum(line["usage"]["prompt_tokens"] for line in served)
    assert sum(r["output_tokens"] for r in receipts) == sum(line["usage"]["completion_tokens"] for line in served)
    assert all(r["endpoint"].startswith("scripted/") and r["input_tokens"] > 0 for r in receipts)


def check_with_harbor(store: Path, results: Path) -> None:
    """Each Harbor release's own code (tests/support/harbor_checker.py, in that release's venv)
    over every trial bundle the operator wrote and over each sweep's `buzzctl sweep export
    --harbor` for that release: every result.json and config.json validates, Harbor's viewer lists
    and opens every trial, Harbor's resume keeps every committed trial with nothing left to run,
    the JobStats Harbor computes from the trials equal the export's, (0.26+) every trial's
    reward_valid is the one the operator wrote, and every trial's team trajectory passes Harbor's
    validator and is served with one trajectory per seat (docs/trajectory.md)."""
    for release in harbor_releases():
        targets = [t for name in CONDITION_FILES for t in (
            ("sweep", store / name), ("job", export_job(f"file://{store}", name, results / name / f"job-{release}", release)))]  # fmt: skip
        reports = harbor_check(*targets, release=release)
        assert problems(reports) == [], json.dumps(reports, indent=2)[-6000:]
        for report in reports:
            committed = sorted(p.parent.name for p in Path(report["dir"]).glob("*/result.json"))
            assert len(committed) == len(SUITE) * ATTEMPTS, report["dir"]
            assert report["trials"] == report["resume_kept"] == committed, report
            assert set(committed) <= set(report["viewer_listed"]) and report["resume_remaining"] == 0, report
            # the team trajectory of every trial validates, is served, and has one trajectory per seat
            for name in committed:
                receipts = (Path(report["dir"]) / name / "agent" / "buzz" / "receipts.jsonl").read_text().splitlines()
                seats = [json.loads(line)["agent_id"] for line in receipts]
                assert report["trajectories"].get(name) == seats, (report["dir"], name, report["trajectories"].get(name))


def _write(tmp_path: Path, body: dict[str, Any]) -> str:
    path = tmp_path / f"{body['metadata']['name']}.json"
    path.write_text(json.dumps(body))
    return str(path)


def kubectl_json_quiet(namespace: str, sweep: str) -> None:
    import subprocess

    subprocess.run(["kubectl", "-n", namespace, "delete", "buzzsweep", sweep, "--ignore-not-found",
                    "--timeout=120s"], capture_output=True)
