"""The corridor's other ends, driven by the runtime against the real pod and relay:
- a team that never posts DONE is stopped at the agent deadline, and is still collected,
  graded (reward 0) and bundled with an AgentTimeoutError result;
- a seat that crashes mid-turn is an infra failure: a fresh try (new pod, new relay trial)
  after backoff, and when retries run out the trial fails with every try on record and every
  try's pod and Secret deleted."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import asyncpg
from buzz_operator.api.common import GROUP, VERSION
from buzz_operator.api.sweep import RetryPolicy
from buzz_operator.api.trial import BuzzTrialSpec, BuzzTrialStatus, Phase
from buzz_operator.condition import ExperimentManifest
from buzz_operator.kube import objects
from buzz_operator.kube.client import Kube
from buzz_operator.trial.drive.context import TrialContext
from buzz_operator.trial.drive.driver import drive
from buzz_operator.trial.drive.setup import load_context
from buzz_operator.trial.state import TERMINAL, status_patch


async def prepare(kube: Kube, namespace: str, name: str, sweep: dict[str, Any], spec: BuzzTrialSpec,
                  workdir: Path) -> TrialContext:
    await kube.custom.create_namespaced_custom_object(GROUP, VERSION, namespace, "buzzsweeps", sweep)
    trial = await kube.custom.create_namespaced_custom_object(GROUP, VERSION, namespace, "buzztrials", {
        "apiVersion": f"{GROUP}/{VERSION}", "kind": "BuzzTrial", "metadata": {"name": name},
        "spec": spec.model_copy(update={"sweep_name": sweep["metadata"]["name"]}).to_api()})
    return await load_context(kube, trial, workdir=workdir)


def writer(kube: Kube, namespace: str, name: str):  # type: ignore[no-untyped-def]
    async def write(old: BuzzTrialStatus, new: BuzzTrialStatus) -> None:
        await kube.custom.patch_namespaced_custom_object_status(
            GROUP, VERSION, namespace, "buzztrials", name, {"status": status_patch(old, new)},
            _content_type="application/merge-patch+json")
    return write


async def test_silent_team_times_out_and_is_still_scored_and_bundled(  # type: ignore[no-untyped-def]
    kube: Kube, namespace, cluster_relay, crds, sweep_secrets, make_sweep, make_condition, make_trial_spec,
    tmp_path: Path,
) -> None:
    store = tmp_path / "store"
    condition = {"team": True, "timeout_seconds": 15}
    manifest = ExperimentManifest.load(make_condition("silent", **condition)[0])
    spec = make_trial_spec("user-mention", manifest)
    assert (spec.deadlines.agent_seconds, spec.deadlines.agent_source) == (15, "manifest")
    ctx = await prepare(kube, namespace, "s4-t1", make_sweep("s4", f"file://{store}", "user-mention", "silent",
                                                              **condition), spec, tmp_path / "work")
    final = await drive(ctx, BuzzTrialStatus(), writer(kube, namespace, "s4-t1"))

    assert final.phase in TERMINAL and final.outcome == "timeout" and final.reason == "AgentTimeout", final
    assert final.completion_message_id is None and final.task_event_id and final.reward == 0.0
    bundle = store / "s4" / "s4-t1"
    result = json.loads((bundle / "result.json").read_text())
    assert result["exception_info"]["exception_type"] == "AgentTimeoutError"
    assert result["verifier_result"]["rewards"]["reward"] == 0.0
    receipts = [json.loads(line) for line in (bundle / "agent" / "buzz" / "receipts.jsonl").read_text().splitlines()]
    assert sorted(r["agent_id"] for r in receipts) == ["lead-1", "worker-1"]
    summary = json.loads((bundle / "agent" / "buzz" / "summary.json").read_text())
    assert summary["secret_scan"]["clean"], summary["secret_scan"]


async def test_crashing_seat_is_retried_as_a_fresh_try_until_retries_run_out(  # type: ignore[no-untyped-def]
    kube: Kube, namespace, cluster_relay, crds, sweep_secrets, make_sweep, make_condition, make_trial_spec,
    tmp_path: Path,
) -> None:
    manifest = ExperimentManifest.load(make_condition("crash")[0])
    spec = make_trial_spec("user-mention", manifest).model_copy(
        update={"retry": RetryPolicy(max_retries=1, backoff_seconds=1, max_backoff_seconds=1)})
    ctx = await prepare(kube, namespace, "s5-t1", make_sweep("s5", f"file://{tmp_path}", "user-mention", "crash"),
                        spec, tmp_path / "work")
    final = await drive(ctx, BuzzTrialStatus(), writer(kube, namespace, "s5-t1"))

    assert final.phase is Phase.FAILED and final.failure_class == "infra", final
    assert final.reason == "AgentsExitedEarly" and final.retries == 1
    assert [(a.retry, a.phase, a.reason) for a in final.failed_tries] == [
        (0, Phase.RUNNING, "AgentsExitedEarly"), (1, Phase.RUNNING, "AgentsExitedEarly")]
    assert ctx.trial_id(0) != ctx.trial_id(1)
    # the abandoned try kept its evidence under retries/1/; the last, whose retries ran out, is the
    # trial's own bundle, committed as Harbor keeps such a trial (docs/bundle.md#retries)
    trial_dir = tmp_path / "s5" / "s5-t1"
    assert not (trial_dir / "retries" / "2").exists()
    assert final.bundle_url and final.bundle_url.endswith("s5/s5-t1"), final.bundle_url
    for kept, record in zip((trial_dir / "retries" / "1", trial_dir), final.failed_tries, strict=True):
        assert record.bundle_url and record.bundle_url.endswith(str(kept.relative_to(tmp_path))), record
        result = json.loads((kept / "result.json").read_text())
        # Harbor's name for the failure, the project's own reason beside it (docs/harbor.md)
        assert result["exception_info"]["exception_type"] == "NonZeroAgentExitCodeError", result["exception_info"]
        assert result["exception_info"]["buzz_reason"] == "AgentsExitedEarly", result["exception_info"]
        assert (kept / "agent" / "buzz" / "receipts.jsonl").exists()
        assert json.loads((kept / "agent" / "buzz" / "summary.json").read_text())["secret_scan"]["clean"]
    for retry in (0, 1):
        pod = await objects.read_pod(kube, namespace, ctx.pod(retry))
        assert pod is None or pod["metadata"].get("deletionTimestamp"), ctx.pod(retry)
    secrets = {s.metadata.name for s in (await kube.core.list_namespaced_secret(namespace)).items}
    assert not {ctx.secret(0), ctx.secret(1)} & secrets
    # each try had its own channel, and both were archived (the first when the second began)
    conn = await asyncpg.connect(cluster_relay.target.pg_dsn)
    try:
        rows = await conn.fetch("SELECT trial_id, archived_at FROM benchmark.trial_manifest")
    finally:
        await conn.close()
    assert sorted(r["trial_id"] for r in rows) == sorted([ctx.trial_id(0), ctx.trial_id(1)])
    assert all(r["archived_at"] is not None for r in rows)


async def test_solo_seat_ending_its_turn_without_done_stops_the_run_early(  # type: ignore[no-untyped-def]
    kube: Kube, namespace, cluster_relay, crds, sweep_secrets, make_sweep, make_condition, make_trial_spec,
    tmp_path: Path,
) -> None:
    store = tmp_path / "store"
    manifest = ExperimentManifest.load(make_condition("silent")[0])
    spec = make_trial_spec("user-mention", manifest)
    ctx = await prepare(kube, namespace, "s6-t1", make_sweep("s6", f"file://{store}", "user-mention", "silent"),
                        spec, tmp_path / "work")
    final = await drive(ctx, BuzzTrialStatus(), writer(kube, namespace, "s6-t1"))

    # the solo rule ended the run (a deadline would have made it a timeout)
    assert final.phase in TERMINAL and final.reason == "NoDone" and final.outcome == "ok", final
    assert final.completion_message_id is None and final.reward == 0.0
    result = json.loads((store / "s6" / "s6-t1" / "result.json").read_text())
    assert result["agent_result"]["metadata"]["stopped_without_done"] is True
