"""Collecting (docs/corridor.md#collect): the pod switched to the grading phase with the logs
read in the same exec and accounted, evidence exported and written into the container, and the verifier's dependencies
installed after the agents stopped."""

from __future__ import annotations

import tempfile
from pathlib import Path

from websockets.exceptions import ConnectionClosed, InvalidHandshake

from buzz_operator.api.trial import BuzzTrialStatus, FailureClass, ResourceUsage
from buzz_operator.condition.paths import REMOTE_EVIDENCE
from buzz_operator.kube import tar
from buzz_operator.ledger import collect_accounting
from buzz_operator.pod import cgroup
from buzz_operator.pod.artifacts import stage_script
from buzz_operator.pod.shell import (
    AGENTS_END,
    EVIDENCE_ERROR,
    INSTALL_VERIFIER_DEPS,
    STATE_DIR,
    VERIFIER_DEPS_WORDS,
    recording,
)
from buzz_operator.relay.client import RelayError, RelayUnavailable
from buzz_operator.relay.evidence import dumps_evidence, export_evidence
from buzz_operator.relay.tenant_models import ProvisioningError
from buzz_operator.scoring.failures import StepFailure, classify_reason
from buzz_operator.trial.drive import egress_phase
from buzz_operator.trial.drive.context import TrialContext
from buzz_operator.trial.drive.pod_exec import fact_files, record, sh, upload_files, upload_then
from buzz_operator.trial.state import Collected, Spend
from buzz_operator.trial.steps.tenant import read_tenant_secrets, tenant_of

VERIFIER_DEPS_DEADLINE_S = 300.0  # docs/corridor.md#collect


class SpentFailure(StepFailure):
    """A failed step that still measured what the try spent (so it is billed)."""

    def __init__(self, reason: str, message: str, spend: Spend) -> None:
        super().__init__(reason, message)
        self.spend = spend


def account(ctx: TrialContext, logs: dict[str, bytes]) -> Spend:
    """What the seats' logs (by path under REMOTE_LOGS) say the try spent."""
    with tempfile.TemporaryDirectory(dir=ctx.workdir) as scratch:
        tar.write_tree(logs, Path(scratch))
        accounting = collect_accounting(Path(scratch), ctx.seats, ctx.manifest.prices)
    return Spend(
        tokens_input=accounting.input_tokens, tokens_output=accounting.output_tokens,
        cost_floor=accounting.cost_usd, cost_ceiling=accounting.cost_usd_including_handoff_bound,
    )


async def _export(ctx: TrialContext, status: BuzzTrialStatus) -> bytes | str:
    """The evidence document exported from the relay, or the error text when it could not be."""
    try:
        handle, _ = await tenant_of(ctx, status.retries)
        secrets = await read_tenant_secrets(ctx, status)
        evidence = await export_evidence(
            ctx.relay, handle, secrets, task_event_id=status.task_event_id,
            completion_message_id=status.completion_message_id,
            observe_channel_names=list(ctx.task.buzz.observe_channel_names),
            scripted_messages=ctx.task.buzz.scripted_messages,
        )
    except StepFailure as exc:
        if classify_reason(exc.reason) is FailureClass.INFRA:
            raise  # relay or Postgres down (tenant lookup): an outage, retried as a step, never "broken"
        return f"{type(exc).__name__}: {exc}"[:2000]
    except (OSError, TimeoutError, ConnectionClosed, InvalidHandshake, RelayUnavailable) as exc:
        # The relay could not be reached, or answered `error:` (its Postgres is down): an outage,
        # retried as a step — not evidence that the team's run failed to leave a record.
        raise StepFailure("RelayUnavailable", f"evidence export: {type(exc).__name__}: {exc}"[:300]) from exc
    except (RelayError, ProvisioningError) as exc:
        return f"{type(exc).__name__}: {exc}"[:2000]
    return dumps_evidence(evidence).encode()


def _rooted(path: str) -> str:
    return path.lstrip("/")


async def agents_usage(ctx: TrialContext, pod: str) -> ResourceUsage | None:
    """What the task container used until the agents stopped, read before the verifier's
    dependencies add to it (docs/resources.md#telemetry); None where the cgroup cannot be read."""
    ran = await sh(ctx, pod, cgroup.read(AGENTS_END))
    reading = cgroup.parse(ran.stderr.decode("utf-8", "replace"), AGENTS_END)
    return None if reading is None else cgroup.usage(reading)


async def collect(ctx: TrialContext, status: BuzzTrialStatus) -> Collected:
    pod = status.pod or ctx.pod(status.retries)
    resources = await agents_usage(ctx, pod)
    logs = await egress_phase.enter_grading(ctx, pod)  # the agents' egress ends here (docs/egress.md)
    spend = account(ctx, logs)
    exported = await _export(ctx, status)
    error = exported if isinstance(exported, str) else None
    # the evidence (or why there is none) and the fact that says which, in one upload
    files = {f"{_rooted(STATE_DIR)}/{name}": data
             for name, data in fact_files({"buzz_evidence_exported": error is None}).items()}
    if error is None:
        files[_rooted(REMOTE_EVIDENCE)] = exported
    else:
        files[f"{_rooted(STATE_DIR)}/{EVIDENCE_ERROR}"] = error.encode()
    if error is not None and ctx.task.buzz.requires_evidence:
        await upload_files(ctx, pod, "/", files)
        raise SpentFailure("EvidenceExportFailed", "failed to export buzz-evidence.json; the trial has no "
                                                   "verifiable relay state and must not be scored", spend)
    # the upload, then the verifier's dependencies, in one exec; the script records its disposition
    script = recording("container_verifier_deps", INSTALL_VERIFIER_DEPS, VERIFIER_DEPS_WORDS)
    if entries := ctx.task.config.artifact_entries():
        # task.toml's artifacts, copied aside before the verifier runs, as Harbor copies them
        # (pod/artifacts.py); a copy that fails is recorded as failed, never the trial's failure
        script = f"( {stage_script(entries)} ) >/dev/null 2>&1\n{script}"
    try:
        await upload_then(ctx, pod, "/", files, script, timeout_s=VERIFIER_DEPS_DEADLINE_S)
    except TimeoutError:
        await record(ctx, pod, {"container_verifier_deps": "unavailable"})
    return Collected(spend=spend, resources=resources)
