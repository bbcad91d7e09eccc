"""Harbor's own code (harbor 0.25.0, in its own virtualenv: hack/harbor.sh) reads what the project
writes: sweeps built with the project's bundle-writing code (tests/unit/results/sweep_builder.py —
ledger, sweep.lock, storage) and their `buzzctl sweep export`. Every trial's result.json and
config.json validate, Harbor's viewer lists and opens every committed trial, Harbor's resume
keeps every committed trial and plans the rest, and the JobStats Harbor computes from the trials
equal the export's (tests/support/harbor_checker.py). No cluster: seconds once the venv exists.

The e2e tier asks the same of bundles the operator wrote (tests/e2e/test_demo_path.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from buzz_operator.cli.main import app
from typer.testing import CliRunner

from tests.support.harbor_venv import harbor_check, problems
from tests.unit.results.sweep_builder import MIXED, TrialPlan, build_sweep

# single 0/1 rewards, so Harbor's pass@k is defined (k = 2, 4); each failure a project reason
BINARY = [
    TrialPlan("hello-file", 1, reward=1.0),
    TrialPlan("hello-file", 2, reward=0.0),
    TrialPlan("hello-file", 3, reward=1.0),
    TrialPlan("hello-file", 4, reward=None, exception=("VerifierTimeout", "tests/test.sh did not finish in 60s")),
    TrialPlan("user-mention", 1, reward=1.0),
    TrialPlan("user-mention", 2, reward=None, exception=("RelayUnavailable", "relay answered error:"),
              no_agent_result=True),
    TrialPlan("user-mention", 3, reward=None, exception=("AgentsNotReady", "agents did not subscribe"),
              no_agent_result=True),
    TrialPlan("user-mention", 4, reward=0.0, exception=("AgentTimeoutError", "no DONE: before the deadline")),
    TrialPlan("reply-to-thread", 1, reward=None, exception=("StorageUnavailable", "bucket unreachable"),
              no_agent_result=True),
    TrialPlan("reply-to-thread", 2, reward=1.0),
    TrialPlan("reply-to-thread", 3, reward=1.0),
    TrialPlan("reply-to-thread", 4, committed=False),
]  # fmt: skip
SWEEPS = {
    "mixed": (MIXED, {"timeoutMultiplier": 2.0, "attempts": 3, "parallelism": 2}),
    "binary": (BINARY, {"attempts": 4}),
}


@pytest.fixture(autouse=True)
def no_cluster(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "missing-kubeconfig"))
    monkeypatch.delenv("BUZZCTL_STORE", raising=False)


def export(store: str, sweep: str, target: Path) -> Path:
    done = CliRunner().invoke(app, ["sweep", "export", sweep, str(target), "--store", store])
    assert done.exit_code == 0, done.stderr
    return target


@pytest.mark.parametrize("sweep", sorted(SWEEPS))
def test_harbor_reads_the_store_and_the_export(sweep: str, tmp_path: Path) -> None:
    plans, spec = SWEEPS[sweep]
    store = build_sweep(tmp_path / "store", sweep, plans, spec=spec)
    job = export(store, sweep, tmp_path / "jobs" / sweep)
    reports = harbor_check(("job", job), ("sweep", tmp_path / "store" / sweep))
    assert problems(reports) == [], json.dumps(reports, indent=2)
    committed = sorted(p.name for p in plans if p.committed)
    attempts = spec["attempts"]
    planned = len({p.task for p in plans}) * attempts
    for report in reports:
        assert report["trials"] == report["resume_kept"] == committed
        assert set(committed) <= set(report["viewer_listed"])
        assert report["resume_remaining"] == planned - len(committed)
    if sweep == "binary":
        # Harbor files each reason by the policy of the name it was mapped to
        causes = reports[0]["failure_causes"]
        assert causes == {"hello-file-4": "verifier_failed", "user-mention-2": "sandbox_failed",
                          "user-mention-3": "sandbox_failed", "user-mention-4": "agent_exhausted_budget",
                          "reply-to-thread-1": "unclassified"}  # fmt: skip
        stats = json.loads((job / "result.json").read_text())["stats"]
        [evals] = stats["evals"].values()
        assert set(evals["pass_at_k"]) == {"2"}  # the fewest trials of a task: 3 committed


def test_the_checker_bites(tmp_path: Path) -> None:
    """A checker that passes everything proves nothing: a stats figure changed, a trial config
    without its task and a registry-looking dataset are each reported."""
    store = build_sweep(tmp_path / "store", "binary", BINARY, spec={"attempts": 4})
    job = export(store, "binary", tmp_path / "jobs" / "binary")
    result = json.loads((job / "result.json").read_text())
    [evals] = result["stats"]["evals"].values()
    evals["metrics"] = [{"mean": 0.5}]
    (job / "result.json").write_text(json.dumps(result))
    config = json.loads((job / "hello-file-1" / "config.json").read_text())
    del config["task"]
    (job / "hello-file-1" / "config.json").write_text(json.dumps(config))
    job_config = json.loads((job / "config.json").read_text())
    job_config["datasets"] = [{"name": "builtin"}]
    (job / "config.json").write_text(json.dumps(job_config))
    found = "\n".join(problems(harbor_check(("job", job))))
    assert "hello-file-1: 1 validation error for TrialConfig" in found
    assert "datasets ['builtin'] read as Harbor registry datasets" in found
    assert "resume:" in found  # Harbor would look "builtin" up in its registry
