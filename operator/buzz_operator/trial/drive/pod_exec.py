"""Small exec helpers shared by the corridor steps: run a script in the task container and
turn stream failures into the failure reasons of failures.py; keep runtime facts in the pod."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any

from kubernetes_asyncio.client.exceptions import ApiException

from buzz_operator.kube import exec as kexec
from buzz_operator.kube import objects, tar
from buzz_operator.kube.exec import ExecResult
from buzz_operator.pod.shell import STATE_DIR
from buzz_operator.pod.state import pod_state
from buzz_operator.scoring.failures import StepFailure
from buzz_operator.trial.drive.context import TrialContext

TASK_CONTAINER = "task"
SHORT_S = 60.0


async def sh(
    ctx: TrialContext,
    pod: str,
    script: str,
    *,
    env: Mapping[str, str] | None = None,
    stdin: bytes | None = None,
    timeout_s: float = SHORT_S,
) -> ExecResult:
    try:
        return await kexec.run(ctx.kube, ctx.namespace, pod, TASK_CONTAINER, script, env=env, stdin=stdin,
                               timeout_s=timeout_s)
    except kexec.ExecError as exc:
        raise await stream_broken(ctx, pod, exc) from exc
    except ApiException as exc:
        reason = "PodDeleted" if exc.status == 404 else "ApiServerUnavailable"
        raise StepFailure(reason, f"exec into {pod}: HTTP {exc.status}") from exc


# How a container can die under an exec that pod_state names; anything else is a broken stream.
DIED = frozenset({"OOMKilled", "ContainerCrashed"})


async def follow(ctx: TrialContext, pod: str, script: str) -> AsyncIterator[bytes]:
    """`script`'s stdout as it is written (kube.exec.follow), stream failures named as `sh` names them."""
    try:
        async for chunk in kexec.follow(ctx.kube, ctx.namespace, pod, TASK_CONTAINER, script):
            yield chunk
    except kexec.ExecError as exc:
        raise await stream_broken(ctx, pod, exc) from exc
    except ApiException as exc:
        reason = "PodDeleted" if exc.status == 404 else "ApiServerUnavailable"
        raise StepFailure(reason, f"exec into {pod}: HTTP {exc.status}") from exc


async def stream_broken(ctx: TrialContext, pod: str, error: Exception) -> StepFailure:
    """Name what broke an exec stream: a stream usually breaks because its pod went away, and
    "the pod was deleted" or "evicted" tells the user more than "the stream broke"."""
    message = str(error)[:300]
    try:
        found = await objects.read_pod(ctx.kube, ctx.namespace, pod)
    except Exception:  # the API server may be what failed; the stream's own error stands
        return StepFailure("ExecStreamBroken", message)
    if found is None or (found.get("metadata") or {}).get("deletionTimestamp"):
        return StepFailure("PodDeleted", f"pod {pod} was deleted: {message}"[:300])
    status = found.get("status") or {}
    if status.get("reason") == "Evicted":
        return StepFailure("PodEvicted", f"pod {pod} was evicted: {status.get('message', '')}"[:300])
    state = pod_state(found)
    if state.reason in DIED:  # the task container died under the exec: say how
        return StepFailure(state.reason, f"pod {pod}: {state.message}"[:300])
    return StepFailure("ExecStreamBroken", message)


async def upload_files(ctx: TrialContext, pod: str, destination: str, files: Mapping[str, Any]) -> None:
    try:
        await tar.upload(ctx.kube, ctx.namespace, pod, TASK_CONTAINER, destination, tar.pack(files),
                         timeout_s=SHORT_S)
    except (tar.TarError, kexec.ExecError) as exc:
        raise await stream_broken(ctx, pod, exc) from exc


async def upload_then(ctx: TrialContext, pod: str, destination: str, files: Mapping[str, Any], script: str, *,
                      timeout_s: float, env: Mapping[str, str] | None = None) -> ExecResult:
    """`files` unpacked into `destination`, then `script` (with `env`), in one exec: a step that
    copies something in to run it pays one exec round trip, not two (bench/trial.py). A failed
    unpack fails the step as upload_files does."""
    result = await sh(ctx, pod, tar.unpack_script(destination, then_exit=True) + script, env=env,
                      stdin=tar.pack(files), timeout_s=timeout_s)
    if result.exit_code == tar.UNPACK_FAILED_EXIT:
        error = tar.TarError(f"upload to {destination} failed: {result.stderr[-500:]!r}")
        raise await stream_broken(ctx, pod, error) from error
    return result


async def download(ctx: TrialContext, pod: str, source: str, *, timeout_s: float = 120.0) -> dict[str, bytes]:
    try:
        return await tar.download(ctx.kube, ctx.namespace, pod, TASK_CONTAINER, source, timeout_s=timeout_s)
    except (tar.TarError, kexec.ExecError) as exc:
        raise await stream_broken(ctx, pod, exc) from exc


async def download_many(ctx: TrialContext, pod: str, sources: Sequence[str], *,
                        timeout_s: float = 120.0) -> dict[str, dict[str, bytes]]:
    """Several directories in one exec (bundling reads five): by source, its files."""
    try:
        return await tar.download_many(ctx.kube, ctx.namespace, pod, TASK_CONTAINER, sources, timeout_s=timeout_s)
    except (tar.TarError, kexec.ExecError) as exc:
        raise await stream_broken(ctx, pod, exc) from exc


def fact_files(facts: Mapping[str, Any]) -> dict[str, bytes]:
    """Runtime facts as the files `record` writes, by name under STATE_DIR."""
    return {f"{k}.json": json.dumps(v).encode() for k, v in facts.items()}


def parse_facts(files: Mapping[str, bytes]) -> dict[str, Any]:
    """The facts among STATE_DIR's files (what `record` wrote, and the scripts that record)."""
    out: dict[str, Any] = {}
    for name, data in files.items():
        if name.endswith(".json"):
            try:
                out[name[: -len(".json")]] = json.loads(data)
            except ValueError:
                continue
    return out


async def record(ctx: TrialContext, pod: str, facts: Mapping[str, Any]) -> None:
    """Keep runtime facts (dispositions, timestamps) in the pod's state dir, one JSON file each:
    they belong to this try exactly as long as its pod does, and the bundle step reads them."""
    await upload_files(ctx, pod, STATE_DIR, fact_files(facts))
