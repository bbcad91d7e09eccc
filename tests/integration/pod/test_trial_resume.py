"""Resuming from recorded status, and stopping seats for real. The `hang` stand-in solves the
task but ignores SIGTERM for 30 s, so the run step's stop must escalate to SIGKILL and verify
by exec that no stack process is left. The corridor is then picked up by a fresh client and a
fresh context built from the BuzzTrial as stored in the API — what a restarted operator has —
and finishes the same try."""

from __future__ import annotations

import json
from pathlib import Path

from buzz_operator.api.common import GROUP, VERSION
from buzz_operator.api.trial import BuzzTrialStatus, Phase
from buzz_operator.condition import ExperimentManifest
from buzz_operator.condition.paths import REMOTE_BIN
from buzz_operator.kube import exec as kexec
from buzz_operator.kube import objects
from buzz_operator.kube.client import Kube, connect
from buzz_operator.trial.drive.driver import drive, step_once
from buzz_operator.trial.drive.setup import load_context
from buzz_operator.trial.state import status_patch
from buzz_operator.trial.steps import bundle as bundle_step

STACK_PROCESSES = (
    'for p in /proc/[0-9]*; do [ "${p#/proc/}" = "$$" ] && continue; '
    'grep -q "^State:[[:space:]]*Z" $p/status 2>/dev/null && continue; '
    'tr "\\0" " " < $p/cmdline 2>/dev/null | grep -F "$MATCH" | grep -v relay-forwarder; done; true'
)


async def test_hang_seat_is_killed_and_a_fresh_context_resumes(  # type: ignore[no-untyped-def]
    kube: Kube, namespace, cluster_relay, crds, sweep_secrets, make_sweep, make_condition, make_trial_spec,
    tmp_path: Path,
) -> None:
    store = tmp_path / "store"
    await kube.custom.create_namespaced_custom_object(
        GROUP, VERSION, namespace, "buzzsweeps", make_sweep("s2", f"file://{store}", "user-mention", policy="hang"))
    manifest = ExperimentManifest.load(make_condition("hang")[0])
    spec = make_trial_spec("user-mention", manifest).model_copy(update={"sweep_name": "s2"})
    trial = await kube.custom.create_namespaced_custom_object(GROUP, VERSION, namespace, "buzztrials", {
        "apiVersion": f"{GROUP}/{VERSION}", "kind": "BuzzTrial", "metadata": {"name": "s2-t1"},
        "spec": spec.to_api()})

    async def write_with(client: Kube):  # type: ignore[no-untyped-def]
        async def write(old: BuzzTrialStatus, new: BuzzTrialStatus) -> None:
            await client.custom.patch_namespaced_custom_object_status(
                GROUP, VERSION, namespace, "buzztrials", "s2-t1", {"status": status_patch(old, new)},
                _content_type="application/merge-patch+json")
        return write

    first = await load_context(kube, trial, workdir=tmp_path / "work-1")
    write = await write_with(kube)
    status = BuzzTrialStatus()
    while status.phase is not Phase.COLLECTING:
        new = await step_once(first, status)
        await write(status, new)
        status = new
    assert status.completion_message_id and status.outcome == "ok", status

    # the run step stopped the TERM-ignoring seat: nothing of the stack is left in the pod
    left = await kexec.run(kube, namespace, status.pod or "", "task", STACK_PROCESSES,
                           env={"MATCH": REMOTE_BIN}, timeout_s=30)
    assert left.ok and left.text().strip() == "", left.text()
    log = await kexec.run(kube, namespace, status.pod or "", "task", "cat /opt/buzz/logs/solo-1.stderr.log "
                          "/opt/buzz/logs/solo-1.stdout.log", timeout_s=30)
    # it saw TERM and ignored it; it never shut down on its own, so KILL ended it
    assert "received SIGTERM; ignoring it" in log.text(), log.text()[-2000:]
    assert "shutting down" not in log.text()

    # a restarted operator: new client, context and status from the API only
    async with await connect() as fresh:
        stored = await fresh.custom.get_namespaced_custom_object(GROUP, VERSION, namespace, "buzztrials", "s2-t1")
        recorded = BuzzTrialStatus.model_validate(stored["status"])
        assert recorded.phase is Phase.COLLECTING and recorded.task_event_id == status.task_event_id
        second = await load_context(fresh, stored, workdir=tmp_path / "work-2")
        final = await drive(second, recorded, await write_with(fresh))

    assert final.phase is Phase.SUCCEEDED and final.reward == 1.0, final.model_dump(exclude_none=True)
    assert final.retries == 0 and final.pod == status.pod and final.task_event_id == status.task_event_id
    assert (store / "s2" / "s2-t1" / "result.json").is_file()

    # The finish rides on the Released write: an operator stopped after the teardown and before
    # that write finds the trial Bundling, its pod deleted. Its bundle step reads the committed
    # bundle's fact back — URL and secret scan — and never gathers again from the pod. The scan
    # recorded here is made to say something a gather now could not find, to tell which it read.
    pod = await objects.read_pod(kube, namespace, final.pod or "")
    assert pod is None or pod["metadata"].get("deletionTimestamp"), "teardown deleted the pod"
    summary_path = store / "s2" / "s2-t1" / "agent" / "buzz" / "summary.json"
    summary = json.loads(summary_path.read_text())
    summary["secret_scan"]["findings"] = [{"path": "solo-1.stdout.log", "line": 3, "kind": "openai-key"}]
    summary_path.write_text(json.dumps(summary))
    committed = {p: p.read_bytes() for p in (store / "s2" / "s2-t1").rglob("*") if p.is_file()}
    async with await connect() as fresh:
        stored = await fresh.custom.get_namespaced_custom_object(GROUP, VERSION, namespace, "buzztrials", "s2-t1")
        third = await load_context(fresh, stored, workdir=tmp_path / "work-3")
        again = await bundle_step.bundle(third, final.model_copy(update={"phase": Phase.BUNDLING}))
    assert again.bundle_url == final.bundle_url
    assert again.secrets is not None and again.secrets.scanned, again.secrets
    assert (again.secrets.count, again.secrets.locations) == (1, ["solo-1.stdout.log:3 (openai-key)"])
    assert {p: p.read_bytes() for p in (store / "s2" / "s2-t1").rglob("*") if p.is_file()} == committed
