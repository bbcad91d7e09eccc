"""The model API keys a trial's seats run with, read from the user's own Secret
(spec.endpoints.secretRef) when a step needs them — when the seats are launched, and when
the bundle is scanned for them — once a drive (kube/secret_reads.py: the scan looks for the keys
the seats were launched with), and never written anywhere else.

They used to be copied into every try's tenant Secret: one more copy of a long-lived provider
key per try, readable by whoever may read Secrets in the trial's namespace, left behind by a
failed teardown. They reach the agents as before: in the environment of the exec that starts
each seat, sent over the exec's stdin (trial/drive/pod_exec.py), never in a pod spec.
"""

from __future__ import annotations

import logging

from kubernetes_asyncio.client.exceptions import ApiException

from buzz_operator.scoring.failures import StepFailure
from buzz_operator.trial.drive.context import Redacted, TrialContext

log = logging.getLogger(__name__)
FIELD = "spec.endpoints.secretRef"


def wanted_names(ctx: TrialContext) -> set[str]:
    """The api_key_env names of the endpoints this trial's seats use."""
    return {ctx.endpoints[seat.endpoint].api_key_env for seat in ctx.seats}


async def read_api_keys(ctx: TrialContext, *, missing_ok: bool = False) -> Redacted:
    """`{api_key_env: key}` from the user's Secret, as this drive read it. A Secret that cannot be read fails the
    step as infra (the sweep validated it before this trial was planned, so it was deleted or
    its RBAC changed since); with `missing_ok` (the bundle's secret scan) the step goes on
    without the keys — the scan's patterns still run — rather than lose the bundle."""
    if ctx.api_key_secret is None:
        return Redacted({})
    try:
        stored = await ctx.secret_reads(ctx.kube, ctx.namespace, ctx.api_key_secret)
    except ApiException as exc:
        message = f"reading Secret {ctx.api_key_secret} ({FIELD}): HTTP {exc.status}"
        if missing_ok and exc.status in (403, 404):
            log.warning("trial %s: %s; the secret scan looks for the trial's other secrets only", ctx.name, message)
            return Redacted({})
        raise StepFailure("ApiServerUnavailable", message) from exc
    return Redacted({name: stored[name] for name in sorted(wanted_names(ctx)) if name in stored})
