"""spec.regrade: the verifier of a finished trial run again on the evidence its bundle recorded —
in a grading pod of the task image (never in the operator: verifiers are task code), with the
very verifier procedure the grade step uses (trial/steps/verifier.py). The committed bundle is never rewritten; the new verifier
output goes to regrades/<generation>/, and the trial's reward becomes the regraded one.

Only tasks graded on Buzz evidence ([buzz] native + requires_evidence) can be regraded: the
others' verifiers read the container the agents worked in, which is gone.
"""

from __future__ import annotations

import json
import tempfile
from datetime import UTC, datetime
from pathlib import Path

from kubernetes_asyncio.client.exceptions import ApiException

from buzz_operator.api.trial import BuzzTrialStatus, FailureClass, RegradeRecord, RegradeResult
from buzz_operator.condition.paths import REMOTE_EVIDENCE
from buzz_operator.kube import objects, tar
from buzz_operator.kube.pods import wait_running
from buzz_operator.pod.trial_pod import build_grading_pod, grading_network, grading_pod_name
from buzz_operator.scoring.failures import StepFailure, classify_reason
from buzz_operator.storage import ObjectNotFound, ObjectStore, StorageError
from buzz_operator.storage.bundle import bundle_store
from buzz_operator.storage.keys import join_key
from buzz_operator.storage.layout import AGENT_DIR, VERIFIER_DIR, regrade_prefix, trial_prefix
from buzz_operator.storage.prefixed import PrefixedStore
from buzz_operator.trial.drive.context import TrialContext
from buzz_operator.trial.drive.pod_exec import upload_files
from buzz_operator.trial.steps import verifier

EVIDENCE_FILE = "buzz-evidence.json"


def regradable(ctx: TrialContext) -> bool:
    buzz = ctx.task.buzz
    return bool(buzz.native and buzz.requires_evidence)


def _record(status: BuzzTrialStatus, generation: int, result: RegradeResult, *, reason: str | None = None,
            message: str | None = None, url: str | None = None) -> RegradeRecord:
    return RegradeRecord(generation=generation, result=result, previous_reward=status.reward, reason=reason,
                         message=message, bundle_url=url, finished_at=datetime.now(UTC))


async def _evidence(ctx: TrialContext, home: ObjectStore) -> bytes | None:
    key = join_key(trial_prefix(ctx.spec.sweep_name, ctx.name), AGENT_DIR, EVIDENCE_FILE)
    try:
        return await home.get(key)
    except ObjectNotFound:
        return None
    except StorageError as exc:
        raise StepFailure("StorageUnavailable", str(exc)[:300]) from exc


async def _grade_in_pod(ctx: TrialContext, status: BuzzTrialStatus, generation: int, evidence: bytes
                        ) -> tuple[BuzzTrialStatus, dict[str, bytes]]:
    pod = grading_pod_name(ctx.name, generation)
    body = build_grading_pod(trial_name=ctx.name, trial_uid=ctx.uid, namespace=ctx.namespace,
                             generation=generation, spec=ctx.spec, trial_labels=ctx.labels,
                             network=grading_network(ctx.task.config))
    try:
        await objects.create_pod(ctx.kube, ctx.namespace, body)
    except ApiException as exc:
        raise StepFailure("ApiServerUnavailable", f"creating grading pod {pod}: HTTP {exc.status}") from exc
    try:
        try:
            state = await wait_running(ctx.kube, ctx.namespace, pod, timeout_s=ctx.spec.deadlines.schedule_seconds)
        except TimeoutError as exc:
            raise StepFailure("ScheduleTimeout", f"grading pod {pod} not running") from exc
        if not state.ready:
            raise StepFailure(state.reason or "PodLost", state.message[:300])
        directory, name = REMOTE_EVIDENCE.rsplit("/", 1)
        await upload_files(ctx, pod, directory, {name: evidence})
        graded, files = await verifier.verify(ctx, pod)
    finally:
        await objects.delete_pod(ctx.kube, ctx.namespace, pod, grace_seconds=0)
    return status.model_copy(update={"reward": graded.reward, "rewards": dict(graded.rewards)}), files


async def regrade(ctx: TrialContext, status: BuzzTrialStatus, generation: int) -> BuzzTrialStatus:
    """The trial's status after regrading at `generation` (its `regrade` record says how it went).

    Raises StepFailure for infra trouble (storage, API server, a lost pod): nothing is recorded,
    and the caller retries; a verifier that fails or breaks is recorded as `failed`, the reward
    left as it was."""
    if not regradable(ctx):
        return status.model_copy(update={"regrade": _record(
            status, generation, RegradeResult.NOT_REGRADABLE, reason="VerifierNeedsContainer",
            message=f"task {ctx.task.name} is graded on the container's state, which is gone")})
    try:
        # a quarantined bundle is regraded where it is, and its regrade stays beside it
        home = await bundle_store(ctx.store, ctx.spec.sweep_name, ctx.name)
        evidence = await _evidence(ctx, home)
        if evidence is None:
            return status.model_copy(update={"regrade": _record(
                status, generation, RegradeResult.NOT_REGRADABLE, reason="NoRecordedEvidence",
                message="the bundle holds no buzz-evidence.json")})
        regraded, files = await _grade_in_pod(ctx, status, generation, evidence)
        prefix = regrade_prefix(ctx.spec.sweep_name, ctx.name, generation)
        with tempfile.TemporaryDirectory(dir=ctx.workdir) as scratch:
            root = Path(scratch)
            tar.write_tree(files, root / VERIFIER_DIR)
            (root / "regrade.json").write_text(json.dumps({
                "generation": generation, "previous_reward": status.reward, "reward": regraded.reward,
                "rewards": regraded.rewards, "regraded_at": datetime.now(UTC).isoformat(),
            }, indent=2, sort_keys=True) + "\n")
            await home.put_dir(prefix, root)
    except StorageError as error:
        raise StepFailure("StorageUnavailable", str(error)[:300]) from error
    except StepFailure as failure:
        if classify_reason(failure.reason) is FailureClass.INFRA:
            raise  # the cluster or the store, not the verifier: the caller tries again later
        return status.model_copy(update={"regrade": _record(
            status, generation, RegradeResult.FAILED, reason=failure.reason, message=failure.message[:300])})
    url = f"{ctx.store_url.rstrip('/')}/{join_key(home.prefix, prefix) if isinstance(home, PrefixedStore) else prefix}"
    return regraded.model_copy(update={"regrade": _record(status, generation, RegradeResult.REGRADED, url=url)})
