"""The operator's own composition of a trial's config.json and result.json
(trial/steps/bundle.py: `_job_config`, `_config`, `_result`), fed with a sweep the operator's
planning code planned (sweep.planner, sweep.trialspec, sweep.lock) and its config.json read back
from a FileStore, then read by Harbor's own code — for every way a trial ends that changes what
result.json says. The sweep_builder-made sweeps of test_harbor_reads.py mirror this path; this
runs the path itself, short of a pod."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from buzz_operator.api import validate_sweep_spec
from buzz_operator.api.stack import StackDigests, StackLayout, StackSource, stack_record
from buzz_operator.api.trial import BuzzTrialStatus, FailureClass, Outcome, PhaseTimes
from buzz_operator.condition import EndpointConfig, ExperimentManifest, plan_seats
from buzz_operator.dataset.task import load_task
from buzz_operator.ledger import collect_accounting
from buzz_operator.pod.stack_install import manifest_digest
from buzz_operator.storage import FileStore
from buzz_operator.storage.layout import sweep_config_key
from buzz_operator.sweep.lock import sweep_config, sweep_lock
from buzz_operator.sweep.planner import plan_trials
from buzz_operator.sweep.trialspec import build_trial_spec
from buzz_operator.trial.steps import bundle as bundle_step

from tests.support.harbor_venv import harbor_check, problems

REPO = Path(__file__).resolve().parents[2]
TASKS = [load_task(REPO / "tasks" / name) for name in ("hello-file", "reply-to-thread")]
MANIFEST = ExperimentManifest.load(REPO / "manifests" / "standin-toplevel.yaml")
ENDPOINTS = EndpointConfig.load(REPO / "manifests" / "endpoints" / "standin.json")
SPEC = {"condition": {"configMapRef": {"name": "standin-toplevel"}}, "dataset": {"builtin": {}},
        "attempts": 3, "timeoutMultiplier": 1.5, "parallelism": 2,
        "relay": {"url": "ws://localhost:3600", "serviceRef": {"name": "buzz-dev-relay", "port": 3600},
                  "ownerKeySecretRef": {"name": "buzz-dev-relay", "key": "owner-key"},
                  "postgresDsnSecretRef": {"name": "buzz-dev-relay", "key": "postgres-dsn"}}}  # fmt: skip
T0 = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)
TIMES = PhaseTimes(pending=T0, provisioning=T0, launching=T0, running=T0, collecting=T0, grading=T0, bundling=T0)
# attempt → how the trial ended: (outcome, failure class, reason, rewards)
ENDINGS: dict[int, tuple[Outcome, FailureClass | None, str | None, dict[str, float]]] = {
    1: (Outcome.OK, None, None, {"reward": 1.0}),
    2: (Outcome.TIMEOUT, FailureClass.OUTCOME, "AgentTimeout", {"reward": 0.0}),
    3: (Outcome.ERROR, FailureClass.OUTCOME, "VerifierTimeout", {}),
}


def _status(attempt: int) -> BuzzTrialStatus:
    outcome, failure_class, reason, rewards = ENDINGS[attempt]
    return BuzzTrialStatus(
        phase_times=TIMES, trial_id=f"t-{attempt}", channel_id="c", completion_message_id="e4", outcome=outcome,
        failure_class=failure_class, reason=reason, message=reason, rewards=rewards, reward=rewards.get("reward"),
    )  # fmt: skip


def _context(store: FileStore, planned: Any, spec: Any, task: Any, index: int) -> SimpleNamespace:
    # the TrialContext fields the bundle step's composition reads; the rest is the pod's
    return SimpleNamespace(
        name=planned.name, uid=f"00000000-0000-4000-8000-{index:012d}", spec=spec,
        manifest=MANIFEST, endpoints=ENDPOINTS, task=task, store=store, store_url=store.url,
        seats=plan_seats(MANIFEST), run_id=spec.sweep_name,
    )  # fmt: skip


STACK = StackSource(image="docker.io/buzz/stack:dev", layout=StackLayout.FOLDER)
_BINARIES = {"buzz-acp": "a" * 64, "buzz": "b" * 64}
DIGESTS = StackDigests(digest=manifest_digest(_BINARIES), binaries=_BINARIES)


@pytest.mark.parametrize("dataset_written", [True, False], ids=["sweep-config", "earlier-store"])
def test_harbor_reads_what_the_operator_composes(dataset_written: bool, harbor_release: str, tmp_path: Path) -> None:
    sweep, store = "toplevel", FileStore(tmp_path / "store")
    spec = validate_sweep_spec(SPEC)
    lock = sweep_lock(manifest=MANIFEST, dataset="builtin", tasks=TASKS,
                      task_images={t.name: t.image_ref("r", "builtin") for t in TASKS}, stack=STACK,
                      stack_digests=DIGESTS, operator_image="o")  # fmt: skip
    if dataset_written:
        config = sweep_config(sweep, "ns", SPEC, lock)
    else:  # a config.json of the build before Harbor's JobConfig: the trials stand on their own facts
        config = {"job_name": sweep, "n_attempts": 3, "n_concurrent_trials": 2, "timeout_multiplier": 1.0,
                  "datasets": [], "tasks": [], "agents": []}  # fmt: skip
    asyncio.run(store.put(sweep_config_key(sweep), json.dumps(config).encode()))
    by_name = {t.name: t for t in TASKS}
    no_rewards = []  # the verifier timeouts (attempt 3)
    for index, planned in enumerate(plan_trials(sweep, "uid-1", MANIFEST.sha256, sorted(by_name), 3)):
        task = by_name[planned.task]
        trial_spec = build_trial_spec(planned, task=task, manifest=MANIFEST, condition_hash=MANIFEST.sha256,
                                      sweep=spec, dataset="builtin", default_stack=STACK,
                                      default_operator_image="o")  # fmt: skip
        ctx = _context(store, planned, trial_spec, task, index)
        if not ENDINGS[planned.attempt][3]:
            no_rewards.append(planned.name)
        trial_dir = tmp_path / "store" / sweep / planned.name
        trial_dir.mkdir(parents=True)
        accounting = collect_accounting(trial_dir, ctx.seats, MANIFEST.prices)
        job = asyncio.run(bundle_step._job_config(ctx))  # type: ignore[arg-type]
        trial_config = bundle_step._config(ctx, job)  # type: ignore[arg-type]
        # the stack record result.json carries in agent_result.metadata (Harbor's free-form dict)
        result = bundle_step._result(ctx, _status(planned.attempt), accounting, {}, trial_config, T0,  # type: ignore[arg-type]
                                        stack_record(STACK, DIGESTS))
        (trial_dir / "config.json").write_text(json.dumps(trial_config, indent=2, sort_keys=True))
        (trial_dir / "result.json").write_text(json.dumps(result, indent=4))
        if dataset_written:
            assert result["agent_info"]["model_info"]["provider"] == "standin"
            assert trial_config["timeout_multiplier"] == 1.5 and result["source"] == "builtin"
    [report] = harbor_check(("sweep", tmp_path / "store" / sweep), release=harbor_release)
    if not dataset_written:
        # Harbor reads the trials; with no agent or task planned it cannot resume into them
        assert [p for p in report["problems"] if not p.startswith("resume:")] == [], report
        return
    assert problems([report]) == [], json.dumps(report, indent=2)
    assert len(report["trials"]) == len(report["resume_kept"]) == 6 and report["resume_remaining"] == 0
    if "failure_causes" in report:  # 0.25 files each by the policy of Harbor's name for it
        assert set(report["failure_causes"].values()) == {"agent_exhausted_budget", "verifier_failed"}
    else:  # 0.26+: both are the team's outcome, graded with a valid reward, whatever the name
        assert {tuple(flags) for flags in report["policies"].values()} == {(False, True, True)}
        # the verifier timeout left no rewards: Harbor has nothing to count, the project a 0
        assert sorted(n for n, valid in report["reward_valid"].items() if not valid) == sorted(no_rewards)
