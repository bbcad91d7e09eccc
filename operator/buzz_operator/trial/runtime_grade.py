"""Collecting and grading (docs/corridor.md#collect, docs/failures.md#verifier-health): logs out and accounted, evidence exported and
written into the container, verifier dependencies installed after the agents stopped, then the
task's tests/test.sh run under the verifier timeout and its reward read back."""

from __future__ import annotations

import math
import tempfile
from pathlib import Path

from websockets.exceptions import ConnectionClosed, InvalidHandshake

from buzz_operator.api.trial import BuzzTrialStatus, FailureClass
from buzz_operator.condition.paths import REMOTE_EVIDENCE, REMOTE_LOGS
from buzz_operator.kube import tar
from buzz_operator.ledger import collect_accounting, read_rewards
from buzz_operator.ledger.verdict import verifier_output_broken
from buzz_operator.relay.client import RelayError, RelayUnavailable
from buzz_operator.relay.evidence import dumps_evidence, export_evidence
from buzz_operator.relay.tenant_models import ProvisioningError
from buzz_operator.trial import runtime_phase
from buzz_operator.trial.failures import StepFailure, classify_reason
from buzz_operator.trial.runtime_context import TrialContext
from buzz_operator.trial.runtime_io import download, record, sh, upload_files
from buzz_operator.trial.runtime_launch import read_tenant_secrets, tenant_of
from buzz_operator.trial.runtime_shell import INSTALL_VERIFIER_DEPS, STATE_DIR, run_verifier
from buzz_operator.trial.state import Collected, Graded, Spend

VERIFIER_DEPS_DEADLINE_S = 300.0  # docs/corridor.md#collect
TESTS_DIR = "/tests"
VERIFIER_DIR = "/logs/verifier"
EVIDENCE_ERROR = "buzz-evidence-error.txt"


class SpentFailure(StepFailure):
    """A failed step that still measured what the try spent (so it is billed)."""

    def __init__(self, reason: str, message: str, spend: Spend) -> None:
        super().__init__(reason, message)
        self.spend = spend


async def account(ctx: TrialContext, pod: str) -> Spend:
    logs = await download(ctx, pod, REMOTE_LOGS)
    with tempfile.TemporaryDirectory(dir=ctx.workdir) as scratch:
        tar.write_tree(logs, Path(scratch))
        accounting = collect_accounting(Path(scratch), ctx.seats, ctx.manifest.prices)
    return Spend(
        tokens_input=accounting.input_tokens, tokens_output=accounting.output_tokens,
        cost_floor=accounting.cost_usd, cost_ceiling=accounting.cost_usd_including_handoff_bound,
    )


async def _export(ctx: TrialContext, status: BuzzTrialStatus, pod: str) -> str | None:
    """Evidence into the container; the error text when it could not be exported."""
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
    directory, _, name = REMOTE_EVIDENCE.rpartition("/")
    await upload_files(ctx, pod, directory, {name: dumps_evidence(evidence).encode()})
    return None


async def collect(ctx: TrialContext, status: BuzzTrialStatus) -> Collected:
    pod = status.pod or ctx.pod(status.retries)
    await runtime_phase.enter_grading(ctx, pod)  # the agents' egress ends here (docs/egress.md)
    spend = await account(ctx, pod)
    error = await _export(ctx, status, pod)
    await record(ctx, pod, {"buzz_evidence_exported": error is None})
    if error is not None:
        await upload_files(ctx, pod, STATE_DIR, {EVIDENCE_ERROR: error.encode()})
        if ctx.task.buzz.requires_evidence:
            raise SpentFailure("EvidenceExportFailed", "failed to export buzz-evidence.json; the trial has no "
                                                       "verifiable relay state and must not be scored", spend)
    try:
        deps = (await sh(ctx, pod, INSTALL_VERIFIER_DEPS, timeout_s=VERIFIER_DEPS_DEADLINE_S)).last_line()
    except TimeoutError:
        deps = "unavailable"
    await record(ctx, pod, {"container_verifier_deps": deps or "unavailable"})
    return Collected(spend=spend)


def _numeric(rewards: dict[str, object]) -> dict[str, float]:
    out: dict[str, float] = {}
    for key, value in rewards.items():
        if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value):
            out[key] = float(value)
    return out


async def grade(ctx: TrialContext, status: BuzzTrialStatus) -> Graded:
    pod = status.pod or ctx.pod(status.retries)
    await upload_files(ctx, pod, TESTS_DIR, _tests_files(ctx.task.tests_dir))
    seconds = ctx.spec.deadlines.verifier_seconds
    try:
        ran = await sh(ctx, pod, run_verifier(seconds, ctx.task.config.verifier.env), timeout_s=seconds + 30)
    except TimeoutError as exc:
        raise StepFailure("VerifierTimeout", f"tests/test.sh did not finish in {seconds}s") from exc
    if ran.last_line() in ("exit 124", "exit 137"):
        raise StepFailure("VerifierTimeout", f"tests/test.sh did not finish in {seconds}s")
    files = await download(ctx, pod, VERIFIER_DIR)
    if verifier_output_broken(files.get("test-stdout.txt", b"").decode("utf-8", errors="replace")):
        raise StepFailure("VerifierBroken", "verifier output carries a health marker (docs/failures.md#verifier-health)")
    with tempfile.TemporaryDirectory(dir=ctx.workdir) as scratch:
        tar.write_tree(files, Path(scratch))
        try:
            rewards = _numeric(read_rewards(Path(scratch)))
        except Exception as exc:  # Harbor's reward errors, each named in the message
            reason = "RewardMissing" if "no reward file" in str(exc) else "RewardInvalid"
            raise StepFailure(reason, f"{type(exc).__name__}: {exc}"[:300]) from exc
    if "reward" not in rewards:
        raise StepFailure("RewardInvalid", "the verifier wrote no numeric `reward`")
    return Graded(reward=rewards["reward"], rewards=rewards)


def _tests_files(tests_dir: Path) -> dict[str, bytes | tuple[bytes, int]]:
    files: dict[str, bytes | tuple[bytes, int]] = {}
    for path in sorted(tests_dir.rglob("*")):
        if path.is_file():
            mode = 0o755 if path.stat().st_mode & 0o111 or path.suffix == ".sh" else 0o644
            files[path.relative_to(tests_dir).as_posix()] = (path.read_bytes(), mode)
    return files
