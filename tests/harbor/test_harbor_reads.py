"""Harbor's own code (each release the tier covers, in a virtualenv of its own: hack/harbor.sh)
reads what the project writes: sweeps built with the project's bundle-writing code
(tests/unit/results/sweep_builder.py — ledger, sweep.lock, storage) and their `buzzctl sweep
export --harbor`. Every trial's result.json and config.json validate, Harbor's viewer lists and
opens every committed trial, Harbor's resume keeps every committed trial and plans the rest, the
JobStats Harbor computes from the trials equal the export's, and (0.26+) every trial's
reward_valid is the project's (tests/support/harbor_checker.py). No cluster: seconds once the
venvs exist.

The e2e tier asks the same of bundles the operator wrote (tests/e2e/test_demo_path.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from buzz_operator.api.trial import FailureClass
from buzz_operator.ledger.harbor_errors import harbor_exception_type
from buzz_operator.ledger.harbor_policy import HARBOR_POLICIES, UNKNOWN_POLICY
from buzz_operator.scoring.failures import classify_reason

from tests.support.harbor_venv import export_job, harbor_check, harbor_policy_table, harbor_releases, problems
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


@pytest.mark.parametrize("sweep", sorted(SWEEPS))
def test_harbor_reads_the_store_and_the_export(sweep: str, harbor_release: str, tmp_path: Path) -> None:
    plans, spec = SWEEPS[sweep]
    store = build_sweep(tmp_path / "store", sweep, plans, spec=spec)
    job = export_job(store, sweep, tmp_path / "jobs" / sweep, harbor_release)
    reports = harbor_check(("job", job), ("sweep", tmp_path / "store" / sweep), release=harbor_release)
    assert problems(reports) == [], json.dumps(reports, indent=2)
    committed = sorted(p.name for p in plans if p.committed)
    attempts = spec["attempts"]
    planned = len({p.task for p in plans}) * attempts
    for report in reports:
        assert report["trials"] == report["resume_kept"] == committed
        assert set(committed) <= set(report["viewer_listed"])
        assert report["resume_remaining"] == planned - len(committed)
        # every trial's team trajectory validates, is served, and holds one trajectory per seat
        assert report["trajectories"] == {name: ["lead-1", "worker-1"] for name in committed}
    if "policies" in reports[0]:
        # 0.26+: every exception the operator wrote reads as its class, whatever Harbor's name
        # for it; a reward stands exactly where the project scores it
        by_name = {p.name: p for p in plans}
        for name, flags in reports[0]["policies"].items():
            assert flags == _flags(by_name[name]), (name, flags)
        for name, valid in reports[0]["reward_valid"].items():
            assert valid == (by_name[name].reward is not None and _flags(by_name[name])[2]), (name, valid)
    elif sweep == "binary":
        # 0.25 files each reason by the policy of the name it was mapped to
        causes = reports[0]["failure_causes"]
        assert causes == {"hello-file-4": "verifier_failed", "user-mention-2": "sandbox_failed",
                          "user-mention-3": "sandbox_failed", "user-mention-4": "agent_exhausted_budget",
                          "reply-to-thread-1": "unclassified"}  # fmt: skip
        stats = json.loads((job / "result.json").read_text())["stats"]
        [evals] = stats["evals"].values()
        assert set(evals["pass_at_k"]) == {"2"}  # the fewest trials of a task: 3 committed


_FLAGS = {FailureClass.INFRA: [True, False, False], FailureClass.OUTCOME: [False, True, True],
          FailureClass.BROKEN: [False, True, False]}  # fmt: skip


def _flags(plan: TrialPlan) -> list[bool]:
    """(retry, grade, valid reward) of the plan's exception: its project class, or Harbor's own
    table for a name of another harness (the seed's RuntimeLaunchError)."""
    if plan.exception is None:
        return _FLAGS[FailureClass.OUTCOME]
    if plan.exception[0] == "AgentTimeoutError":
        return _FLAGS[FailureClass.OUTCOME]
    try:
        return _FLAGS[classify_reason(plan.exception[0])]
    except ValueError:
        policy = HARBOR_POLICIES.get(harbor_exception_type(plan.exception[0]), UNKNOWN_POLICY)
        return [policy.should_retry, policy.should_grade, policy.has_valid_reward]


def test_the_policy_table_is_harbors() -> None:
    """The project's copy of Harbor's table (for documents without an override) is each release's
    that has one (0.26+); 0.25 has a failure-cause table instead, which no export reads."""
    tables = {release: harbor_policy_table(release) for release in harbor_releases()}
    ours = {name: [p.should_retry, p.should_grade, p.has_valid_reward] for name, p in HARBOR_POLICIES.items()}
    assert tables["0.25.0"] is None
    assert [r for r, table in tables.items() if table is not None] == [r for r in tables if r != "0.25.0"]
    for table in tables.values():
        assert table is None or table == ours


def test_the_exports_of_two_releases_differ_where_their_counting_does(tmp_path: Path) -> None:
    """0.25 counts every trial, 0.26 only valid rewards: one export cannot hold both, so each says
    whose figures it carries."""
    store = build_sweep(tmp_path / "store", "binary", BINARY, spec={"attempts": 4})
    old, new = (json.loads((export_job(store, "binary", tmp_path / r, r) / "result.json").read_text())
                for r in ("0.25.0", "0.26.0"))  # fmt: skip
    assert (old["buzz_harbor_release"], new["buzz_harbor_release"]) == ("0.25", "0.26")
    [old_eval], [new_eval] = old["stats"]["evals"].values(), new["stats"]["evals"].values()
    # 11 committed, 7 with rewards (5 pass): 0.25 counts the other 4 (3 infra, a verifier
    # timeout) as 0 in its mean, 0.26 leaves them out
    assert (old_eval["n_trials"], new_eval["n_trials"]) == (7, 7)
    assert old_eval["metrics"] == [{"mean": 5 / 11}] and new_eval["metrics"] == [{"mean": 5 / 7}]


def test_the_checker_bites(tmp_path: Path) -> None:
    """A checker that passes everything proves nothing: a stats figure changed, a trial config
    without its task and a registry-looking dataset are each reported, and (0.26) a reward_valid
    the operator wrote that Harbor does not compute."""
    store = build_sweep(tmp_path / "store", "binary", BINARY, spec={"attempts": 4})
    job = export_job(store, "binary", tmp_path / "jobs" / "binary", "0.26.0")
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
    trajectory = json.loads((job / "hello-file-2" / "agent" / "trajectory.json").read_text())
    trajectory["subagent_trajectories"][1]["trajectory_id"] = "lead-1"  # two seats under one id
    (job / "hello-file-2" / "agent" / "trajectory.json").write_text(json.dumps(trajectory))
    result = json.loads((job / "user-mention-2" / "result.json").read_text())
    result["reward_valid"] = True
    (job / "user-mention-2" / "result.json").write_text(json.dumps(result))
    found = "\n".join(problems(harbor_check(("job", job), release="0.26.0")))
    assert "user-mention-2: result.json says reward_valid True, Harbor computes False" in found
    assert "hello-file-2: agent/trajectory.json: " in found and "is not unique" in found
    assert "hello-file-1: 1 validation error for TrialConfig" in found
    assert "datasets ['builtin'] read as Harbor registry datasets" in found
    assert "resume:" in found  # Harbor would look "builtin" up in its registry
