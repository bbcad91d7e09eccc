"""The trial pod's egress phases (docs/egress.md): from the agents phase to the grading phase.

A trial pod is created `bench.buzz.dev/phase=agents`, which the chart's agents-phase NetworkPolicy
selects (relay, model endpoints, DNS). Once the run has stopped the seats, and before anything of
the verifier runs in the pod (its dependencies are installed in the collect step), the pod is
relabelled `phase=grading` with the network the task allows its verifier
(`bench.buzz.dev/network`, trial_pod.grading_network), and the grading policies select it instead:
nothing for `no-network`, the declared package mirrors and DNS for `allowlist`, and those plus the
internet for `public`. The policies select disjoint values of the label, so a pod never has both
phases' egress at once (NetworkPolicies add up).

`enter_grading` first makes sure no stack process is left (the run step stopped them; a run that
failed may not have) and reads the seats' logs in the same exec, then patches the labels and reads them back, so the switch is known to be
in the API before the verifier starts; the CNI applies it a moment later. Idempotent: a resumed
collect finds the pod already relabelled and patches nothing.
"""

from __future__ import annotations

from collections.abc import Mapping

from kubernetes_asyncio.client.exceptions import ApiException

from buzz_operator.condition.paths import REMOTE_LOGS
from buzz_operator.kube import objects, tar
from buzz_operator.kube.client import Kube
from buzz_operator.pod.shell import STOP_ENV, STOP_FAILED_EXIT, STOP_THEN_TAR_LOGS
from buzz_operator.pod.trial_pod import grading_labels, grading_network
from buzz_operator.scoring.failures import StepFailure
from buzz_operator.trial.drive.context import TrialContext
from buzz_operator.trial.drive.pod_exec import sh, stream_broken

LOGS_S = 120.0  # as pod_exec.download


class RelabelError(RuntimeError):
    """The pod's labels did not read back as set (or the pod is gone)."""


def _differs(found: Mapping[str, str], wanted: Mapping[str, str]) -> dict[str, str | None]:
    return {key: found.get(key) for key, value in wanted.items() if found.get(key) != value}


async def relabel(kube: Kube, namespace: str, pod: str, wanted: Mapping[str, str]) -> dict[str, str]:
    """Make the pod carry `wanted` and read it back (the PATCH's answer); the pod's labels. Patches nothing when
    they are already there. Raises RelabelError when the read-back labels differ or the pod is
    gone, ApiException when the API refuses the patch (403 without `patch` on pods)."""
    found = await objects.read_pod(kube, namespace, pod)
    if found is None:
        raise RelabelError(f"pod {pod} is gone")
    if _differs(found["metadata"].get("labels") or {}, wanted):
        # the PATCH answers with the pod as stored, after any mutating webhook: that is the
        # read-back, without a second GET
        found = await objects.patch_pod_labels(kube, namespace, pod, wanted)
    now = dict(found["metadata"].get("labels") or {})
    if differs := _differs(now, wanted):
        raise RelabelError(f"pod {pod} reads back {differs} after the patch, not {dict(wanted)}")
    return now


async def enter_grading(ctx: TrialContext, pod: str) -> dict[str, bytes]:
    """Agents stopped and their logs read in one exec, then the pod relabelled for grading (see
    the module's docstring); the seats' logs, by path under REMOTE_LOGS."""
    stopped = await sh(ctx, pod, STOP_THEN_TAR_LOGS, env=STOP_ENV, timeout_s=LOGS_S)
    said = stopped.stderr.decode("utf-8", "replace").strip().splitlines()
    if stopped.exit_code == STOP_FAILED_EXIT:
        raise StepFailure("InternalError", f"agent processes survive before grading: {said[-1:]}"[:300])
    if not stopped.ok:
        error = tar.TarError(f"download of {REMOTE_LOGS} failed ({stopped.exit_code}): {said[-3:]!r}")
        raise await stream_broken(ctx, pod, error) from error
    network = grading_network(ctx.task.config)
    try:
        await relabel(ctx.kube, ctx.namespace, pod, grading_labels(network))
    except RelabelError as exc:
        raise StepFailure("PodDeleted" if "is gone" in str(exc) else "InternalError", str(exc)[:300]) from exc
    except ApiException as exc:
        reason = "PodDeleted" if exc.status == 404 else "ApiServerUnavailable"
        raise StepFailure(reason, f"relabelling pod {pod} for grading: HTTP {exc.status} "
                                  f"(the operator needs patch on pods)"[:300]) from exc
    return tar.unpack(stopped.stdout) if stopped.stdout else {}
