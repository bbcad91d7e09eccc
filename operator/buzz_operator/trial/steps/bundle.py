"""Bundling (docs/corridor.md#timingjson, docs/bundle.md#agent-bundle): everything the try left in
its pod is gathered into the Harbor layout, accounted and secret-scanned by the ledger, and
uploaded with result.json last; a try abandoned on infra keeps its bundle under retries/<n>/.

Bundling reads only from the pod and the relay, so after an operator restart it simply runs
again; an upload that already committed is left as it is (result.json is never rewritten).
"""

from __future__ import annotations

import contextlib
import json
import tempfile
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from kubernetes_asyncio.client.exceptions import ApiException

from buzz_operator.api.stack import StackDigests, stack_record
from buzz_operator.api.trial import BuzzTrialStatus, FailureClass, Outcome
from buzz_operator.condition import redact_endpoints
from buzz_operator.condition.paths import REMOTE_LOGS, REMOTE_PROMPTS
from buzz_operator.kube import tar
from buzz_operator.ledger import (
    PhaseTiming,
    SecretScan,
    TrialException,
    agent_metadata,
    agent_result,
    box_metadata,
    build_trial_result,
    collect_accounting,
    render_trial_result,
    trial_timing,
    write_bundle,
)
from buzz_operator.ledger.bundle import SUMMARY_FILE
from buzz_operator.ledger.harbor_config import task_id as harbor_task_id
from buzz_operator.ledger.harbor_config import trial_config
from buzz_operator.ledger.harbor_result import orchestrator_model_info
from buzz_operator.ledger.trajectory import write_trajectory
from buzz_operator.pod import artifacts as task_artifacts
from buzz_operator.pod.shell import EVIDENCE_ERROR, STATE_DIR
from buzz_operator.relay.evidence import transcript_from_evidence
from buzz_operator.relay.tenant import actor_secrets
from buzz_operator.relay.tenant_models import TenantSecrets
from buzz_operator.scoring.failures import StepFailure
from buzz_operator.storage import errors as storage_errors
from buzz_operator.storage.bundle import (
    bundle_store,
    upload_bundle,
    upload_failed_try,
    write_quarantine_pointer,
)
from buzz_operator.storage.keys import join_key
from buzz_operator.storage.layout import (
    AGENT_DIR,
    VERIFIER_DIR,
    agent_key,
    retry_prefix,
    sweep_config_key,
    trial_prefix,
    trial_result_key,
)
from buzz_operator.storage.prefixed import PrefixedStore
from buzz_operator.storage.store import ObjectStore
from buzz_operator.trial.drive.context import TrialContext
from buzz_operator.trial.drive.model_keys import read_api_keys
from buzz_operator.trial.drive.pod_exec import download_many, parse_facts
from buzz_operator.trial.secret_findings import findings_of, needs_quarantine
from buzz_operator.trial.state import Bundled
from buzz_operator.trial.steps.stack import installed_stack
from buzz_operator.trial.steps.tenant import read_tenant_secrets, scripted_actors, tenant_of

EVIDENCE = "buzz-evidence.json"


VERIFIER_OUTPUT = "/logs/verifier"
ARTIFACTS = "/logs/artifacts"
# everything a try leaves in its pod, read in one exec (one tar) rather than one each
GATHERED = (REMOTE_LOGS, REMOTE_PROMPTS, ARTIFACTS, STATE_DIR, VERIFIER_OUTPUT, task_artifacts.STAGE_DIR)


async def _best_effort(ctx: TrialContext, pod: str) -> dict[str, dict[str, bytes]]:
    # A lost pod must not cost the bundle: write what can still be read.
    try:
        return await download_many(ctx, pod, GATHERED)
    except (StepFailure, TimeoutError):
        return {source: {} for source in GATHERED}


async def _forwarder_log(ctx: TrialContext, pod: str) -> bytes:
    try:
        text = await ctx.kube.core.read_namespaced_pod_log(pod, ctx.namespace, container="forwarder")
    except ApiException:
        return b""
    return str(text).encode()


async def _gather(ctx: TrialContext, pod: str, agent_dir: Path, verifier_dir: Path) -> dict[str, Any]:
    found = await _best_effort(ctx, pod)
    tar.write_tree({k: v for k, v in found[REMOTE_LOGS].items() if "/" not in k}, agent_dir)
    tar.write_tree({k: v for k, v in found[REMOTE_PROMPTS].items() if "/" not in k}, agent_dir)
    if forwarder := await _forwarder_log(ctx, pod):
        (agent_dir / "relay-forwarder.log").write_bytes(forwarder)
    artifacts = found[ARTIFACTS]
    if EVIDENCE in artifacts:
        (agent_dir / EVIDENCE).write_bytes(artifacts[EVIDENCE])
        transcript = transcript_from_evidence(json.loads(artifacts[EVIDENCE]))
        (agent_dir / "transcript.json").write_text(json.dumps(transcript, indent=2, sort_keys=True) + "\n")
    state = found[STATE_DIR]
    if EVIDENCE_ERROR in state:
        (agent_dir / EVIDENCE_ERROR).write_bytes(state[EVIDENCE_ERROR])
    tar.write_tree(found[VERIFIER_OUTPUT], verifier_dir)
    # task.toml's artifacts where Harbor puts them: <trial>/artifacts/, with its manifest.json
    if entries := ctx.task.config.artifact_entries():
        tar.write_tree(task_artifacts.place(entries, found[task_artifacts.STAGE_DIR]), agent_dir.parent.parent / task_artifacts.ARTIFACTS_DIR)
    return parse_facts(state)


def _exception(status: BuzzTrialStatus, now: datetime) -> TrialException | None:
    """result.json ``exception_info``, its ``policy_override`` the trial's class (docs/harbor.md#error-policy).

    A timed-out team is Harbor's ``AgentTimeoutError``, as the seed wrote it. Only when the
    timeout is the team's: an infra or broken trial whose reason names a timeout (the pod never
    scheduled, a step hung) keeps its own reason, or it would read — to Harbor and to the
    project's own readers — as a team that ran out of time, and be scored."""
    team_timeout = status.outcome is Outcome.TIMEOUT and status.failure_class in (None, FailureClass.OUTCOME)
    if team_timeout:
        return TrialException("AgentTimeoutError", "the agents did not post DONE: before the deadline", "", now,
                              failure_class=FailureClass.OUTCOME)
    if status.failure_class is None or status.reason is None:
        return None
    # Harbor's name where one fits, the project's reason kept beside it (docs/harbor.md)
    return TrialException.for_reason(status.reason, status.message or status.reason, now, status.failure_class)


async def _job_config(ctx: TrialContext) -> dict[str, Any] | None:
    """The sweep's config.json (a Harbor JobConfig, written before the first trial): the trial's
    config.json is derived from it so that Harbor's resume finds it among the planned trials."""
    try:
        document = json.loads(await ctx.store.get(sweep_config_key(ctx.spec.sweep_name)))
    except (storage_errors.ObjectNotFound, ValueError):
        return None
    except storage_errors.StorageError as exc:
        raise StepFailure("StorageUnavailable", str(exc)[:300]) from exc
    return document if isinstance(document, dict) else None


def _config(ctx: TrialContext, job: dict[str, Any] | None) -> dict[str, Any]:
    return trial_config(job, task=ctx.spec.task, trial_name=ctx.name, sweep=ctx.spec.sweep_name,
                        condition=ctx.manifest.condition, condition_hash=ctx.manifest.sha256,
                        spec=ctx.spec.to_api())


def _stamp(value: datetime | None) -> float | None:
    return value.timestamp() if value is not None else None


async def _stack(ctx: TrialContext, status: BuzzTrialStatus, pod: str) -> dict[str, Any]:
    """The try's stack record: the digests read at launch, else (a launch that failed after the
    install) read from the pod now, else none — its pod never installed a stack."""
    digests: StackDigests | None = status.stack
    if digests is None:
        try:
            digests = await installed_stack(ctx, pod)
        except (StepFailure, TimeoutError):
            digests = None
    return stack_record(ctx.spec.stack_source, digests)


def _result(ctx: TrialContext, status: BuzzTrialStatus, accounting: Any, facts: dict[str, Any],
            config: dict[str, Any], now: datetime, stack: dict[str, Any]) -> dict[str, Any]:
    times = status.phase_times
    metadata = agent_metadata(
        accounting=accounting, completion_message_id=status.completion_message_id or "",
        completion_message=str(facts.get("completion_message", "")),
        stopped_without_done=bool(facts.get("stopped_without_done", False)),
        buzz_evidence_exported=bool(facts.get("buzz_evidence_exported", False)),
        agent_active_seconds=_active(facts), usage_settle_seconds=float(facts.get("usage_settle_seconds", 0.0)),
        container_trust_store=str(facts.get("container_trust_store", "failed")),
        container_verifier_deps=str(facts.get("container_verifier_deps", "unavailable")),
        agent_max_rounds={s.seat_id: ctx.manifest.roster_class(s.class_id).budget.max_calls or 0 for s in ctx.seats},
        solo_roster=len(ctx.seats) == 1,
        agent_platform_prompt={s.seat_id: s.include_platform_prompt for s in ctx.seats},
        manifest_sha256=ctx.manifest.sha256, condition=ctx.manifest.condition,
        buzz_channel_id=status.channel_id or "", run_id=ctx.run_id, trial_id=status.trial_id or "",
        stack=stack,
    ) | _box(ctx, status)
    return build_trial_result(
        trial_uuid=ctx.uid, task_name=ctx.task.harbor_name, trial_name=ctx.name,
        trial_uri=_url(ctx, trial_prefix(ctx.spec.sweep_name, ctx.name)),
        task_id=harbor_task_id(config["task"], ctx.task.name), source=config["task"].get("source"), task_checksum=ctx.spec.task_digest,
        config=config,
        model_info=orchestrator_model_info(ctx.manifest.roster, {n: e.provider for n, e in ctx.endpoints.items()}),
        agent_result=agent_result(accounting, metadata),
        rewards=dict(status.rewards) if status.reward is not None else None,
        exception=_exception(status, now), started_at=times.provisioning or times.pending, finished_at=now,
        environment_setup=PhaseTiming(times.launching, times.running),
        agent_execution=PhaseTiming(times.running, times.collecting),
        verifier=PhaseTiming(times.grading, times.bundling),
    )


def _box(ctx: TrialContext, status: BuzzTrialStatus) -> dict[str, Any]:
    """What the box gave the try and did to it (docs/resources.md): in result.json's agent
    metadata and the bundle's summary alike."""
    return box_metadata(ctx.spec.resources.headroom(),
                        status.resource_usage.to_api() if status.resource_usage is not None else None,
                        [failed.reason for failed in status.failed_tries],
                        status.pod_start.to_api() if status.pod_start is not None else None)


def _active(facts: dict[str, Any]) -> float | None:
    start, end = facts.get("active_started"), facts.get("active_finished")
    return float(end) - float(start) if isinstance(start, int | float) and isinstance(end, int | float) else None


async def _known_secrets(ctx: TrialContext, status: BuzzTrialStatus) -> list[str]:
    """What the secret scan looks for. The try's seat keys come from its Kubernetes Secret when
    it exists — so a try abandoned because the relay or Postgres is down still keeps its
    evidence — and from the relay's tenant record otherwise; with neither, no bundle is written
    (the failure says why) rather than one that was never scanned."""
    found = [key for key in (await read_api_keys(ctx, missing_ok=True)).values() if key]
    if status.trial_id:
        try:
            secrets = await read_tenant_secrets(ctx, status)
        except StepFailure:
            _, secrets = await tenant_of(ctx, status.retries)
        found += secrets.secret_strings()
    # the scripted actors' keys never reach the pod, so a bundle holding one is a leak by the operator
    found += TenantSecrets(actors=actor_secrets(ctx.relay.owner_secret_hex, scripted_actors(ctx))).secret_strings()
    return found


async def _assemble(
    ctx: TrialContext, status: BuzzTrialStatus, pod: str, root: Path, now: datetime
) -> SecretScan | None:
    """The whole bundle of one try (docs/bundle.md#agent-bundle), written under `root` (result.json included); its secret
    scan, None when the bundle could not be written (so it was not scanned)."""
    agent_dir, verifier_dir = root / AGENT_DIR, root / VERIFIER_DIR
    agent_dir.mkdir(parents=True)
    verifier_dir.mkdir(parents=True)
    facts = await _gather(ctx, pod, agent_dir, verifier_dir)
    stack = await _stack(ctx, status, pod)
    accounting = collect_accounting(agent_dir, ctx.seats, ctx.manifest.prices)
    started = _stamp(status.phase_times.provisioning) or now.timestamp()
    timing = trial_timing(
        runtime_started=started, bundle_started=now.timestamp(),
        active_started=facts.get("active_started"),
        active_finished=facts.get("active_finished") if facts.get("active_started") is not None else None,
        usage_settle_seconds=float(facts.get("usage_settle_seconds", 0.0)),
    )
    # Harbor's viewer reads agent/trajectory.json: beside the agent bundle, and scanned with it
    trajectory = write_trajectory(agent_dir, trial_name=ctx.name, trial_id=status.trial_id or "",
                                  manifest=ctx.manifest, seats=ctx.seats, accounting=accounting,
                                  stack_version=str((stack or {}).get("digest") or "unknown"))  # fmt: skip
    beside = {f"../{trajectory.name}": trajectory} if trajectory is not None else {}
    # the task's artifacts are the trial's too: scanned with the bundle (docs/bundle.md#secret-scan)
    beside |= {f"../../{path.relative_to(root).as_posix()}": path
               for path in sorted((root / task_artifacts.ARTIFACTS_DIR).rglob("*")) if path.is_file()}
    report = write_bundle(
        agent_dir, manifest=ctx.manifest, trial_id=status.trial_id or "", channel_id=status.channel_id or "",
        seats=ctx.seats, accounting=accounting, endpoints_redacted=redact_endpoints(ctx.endpoints),
        stack=stack, known_secrets=await _known_secrets(ctx, status), timing=timing, box=_box(ctx, status),
        scanned_beside=beside,
    )
    config = _config(ctx, await _job_config(ctx))
    (root / "config.json").write_text(json.dumps(config, indent=2, sort_keys=True) + "\n")
    result = _result(ctx, status, accounting, facts, config, now, stack)
    scan = report.secret_scan if report.ok else None
    if (quarantine := _quarantine(ctx, scan)) is not None:
        result["trial_uri"] = _url(ctx, join_key(quarantine, trial_prefix(ctx.spec.sweep_name, ctx.name)))
    (root / "result.json").write_text(render_trial_result(result))
    return scan


def _url(ctx: TrialContext, key: str) -> str:
    return f"{ctx.store_url.rstrip('/')}/{key}"


def _quarantine(ctx: TrialContext, scan: SecretScan | None) -> str | None:
    """The prefix a bundle with these findings goes under, or None (clean, or no quarantine)."""
    return ctx.quarantine_prefix if ctx.quarantine_prefix and needs_quarantine(scan) else None


def _home(ctx: TrialContext, quarantine: str | None) -> ObjectStore:
    return ctx.store if quarantine is None else PrefixedStore(ctx.store, quarantine)


async def bundle(ctx: TrialContext, status: BuzzTrialStatus) -> Bundled:
    if (recorded := await _committed_fact(ctx)) is not None:
        return recorded
    pod = status.pod or ctx.pod(status.retries)
    with tempfile.TemporaryDirectory(dir=ctx.workdir) as scratch:
        root = Path(scratch)
        scan = await _assemble(ctx, status, pod, root, datetime.now(UTC))
        quarantine = _quarantine(ctx, scan)
        findings = findings_of(scan, quarantined=quarantine is not None)
        try:
            # uploaded whole either way: a leaked key is reported and moved, never a bundle lost
            await upload_bundle(_home(ctx, quarantine), ctx.spec.sweep_name, ctx.name, root)
        except storage_errors.AlreadyCommitted:
            pass  # a previous run of this step committed it; result.json is never rewritten
        except storage_errors.StorageError as exc:
            raise StepFailure("StorageUnavailable", str(exc)[:300]) from exc
        if quarantine is not None:
            try:  # after the commit, and again after a restart: readers follow it to the bundle
                await write_quarantine_pointer(ctx.store, ctx.spec.sweep_name, ctx.name, quarantine,
                                               {"count": findings.count, "kinds": findings.kinds})
            except storage_errors.StorageError as exc:
                raise StepFailure("StorageUnavailable", str(exc)[:300]) from exc
    home = trial_prefix(ctx.spec.sweep_name, ctx.name)
    return Bundled(bundle_url=_url(ctx, join_key(quarantine or "", home)), secrets=findings)


async def _committed_home(ctx: TrialContext) -> tuple[ObjectStore, bytes] | None:
    """(the store holding it, result.json) when this trial's bundle is already committed."""
    key = trial_result_key(ctx.spec.sweep_name, ctx.name)
    try:
        # a quarantined bundle is committed where its pointer says (storage/bundle.py)
        home = await bundle_store(ctx.store, ctx.spec.sweep_name, ctx.name)
        return home, await home.get(key)
    except storage_errors.ObjectNotFound:
        return None
    except storage_errors.StorageError as exc:
        raise StepFailure("StorageUnavailable", str(exc)[:300]) from exc


def _home_url(ctx: TrialContext, home: ObjectStore) -> str:
    prefix = home.prefix if isinstance(home, PrefixedStore) else ""
    return _url(ctx, join_key(prefix, trial_prefix(ctx.spec.sweep_name, ctx.name)))


async def committed_result(ctx: TrialContext) -> tuple[str, dict[str, Any]] | None:
    """(bundle URL, result.json) when this trial's bundle is already committed in storage."""
    if (found := await _committed_home(ctx)) is None:
        return None
    home, raw = found
    return _home_url(ctx, home), json.loads(raw)


async def _committed_fact(ctx: TrialContext) -> Bundled | None:
    """The fact of a bundle an earlier run of this step committed, read back from storage: the
    operator stopped before recording it — perhaps after the teardown that follows the bundle
    (the finish rides on the Released write, trial/state.write_can_wait), so the pod it was
    gathered from may be gone and must not be read again (docs/corridor.md#writes-that-wait)."""
    if (found := await _committed_home(ctx)) is None:
        return None
    home, _ = found
    try:
        summary = json.loads(await home.get(agent_key(ctx.spec.sweep_name, ctx.name, SUMMARY_FILE)))
    except storage_errors.ObjectNotFound:
        summary = {}
    except storage_errors.StorageError as exc:
        raise StepFailure("StorageUnavailable", str(exc)[:300]) from exc
    # a bundle that could not be written records bundle_error and no scan: it was never scanned
    scan = SecretScan.from_json(summary["secret_scan"]) if isinstance(summary.get("secret_scan"), dict) else None
    return Bundled(bundle_url=_home_url(ctx, home),
                   secrets=findings_of(scan, quarantined=isinstance(home, PrefixedStore)))


async def keep_try(ctx: TrialContext, status: BuzzTrialStatus, failure: StepFailure) -> str:
    """Evidence of a try that failed on infra, kept before the try is released: a try that spent
    tokens keeps its receipts even though the trial goes on (or ends) without it. Its result.json
    carries the failure as exception_info.

    A try another follows goes under retries/<n>/ (n = try index + 1). The last try — its retries
    ran out — is the trial's own bundle, committed at the trial's prefix as Harbor keeps a trial
    whose retries ran out: the results count it as the box's failure, never as a trial still to
    come (docs/bundle.md#retries)."""
    record = status.model_copy(update={"failure_class": FailureClass.INFRA, "reason": failure.reason,
                                       "message": failure.message or failure.reason})
    pod = status.pod or ctx.pod(status.retries)
    last = status.retries >= ctx.spec.retry.max_retries
    sweep, number = ctx.spec.sweep_name, status.retries + 1
    with tempfile.TemporaryDirectory(dir=ctx.workdir) as scratch:
        root = Path(scratch)
        # an abandoned try's findings go under the quarantine too; the attempt's bundleURL says where
        scan = await _assemble(ctx, record, pod, root, datetime.now(UTC))
        quarantine = _quarantine(ctx, scan)
        home = _home(ctx, quarantine)
        # AlreadyCommitted: kept by an earlier run of this handler before a restart
        with contextlib.suppress(storage_errors.AlreadyCommitted):
            if last:
                await upload_bundle(home, sweep, ctx.name, root)
            else:
                await upload_failed_try(home, sweep, ctx.name, number, root)
        if last and quarantine is not None:  # readers follow the pointer to the trial's bundle
            findings = findings_of(scan, quarantined=True)
            await write_quarantine_pointer(ctx.store, sweep, ctx.name, quarantine,
                                           {"count": findings.count, "kinds": findings.kinds})
    where = trial_prefix(sweep, ctx.name) if last else retry_prefix(sweep, ctx.name, number)
    return _url(ctx, join_key(quarantine or "", where))
