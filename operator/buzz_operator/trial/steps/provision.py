"""Provisioning (docs/corridor.md#launch): the try's relay tenant and its per-try Secret, after the
pods and Secrets of earlier tries are cleared.

Idempotent: provisioning returns the stored tenant and keeps an existing Secret.
"""

from __future__ import annotations

from kubernetes_asyncio.client.exceptions import ApiException

from buzz_operator.api import labels as label_keys
from buzz_operator.api.ownership import owner_reference
from buzz_operator.api.trial import BuzzTrialStatus
from buzz_operator.kube import objects
from buzz_operator.scoring.failures import StepFailure
from buzz_operator.trial.drive.context import TrialContext, secret_data
from buzz_operator.trial.state import Provisioned
from buzz_operator.trial.steps.tenant import tenant_of


async def _clear_earlier_tries(ctx: TrialContext, retry: int) -> None:
    for earlier in range(retry):
        await objects.delete_pod(ctx.kube, ctx.namespace, ctx.pod(earlier), grace_seconds=0)
        await objects.delete_secret(ctx.kube, ctx.namespace, ctx.secret(earlier))


async def provision(ctx: TrialContext, status: BuzzTrialStatus) -> Provisioned:
    retry = status.retries
    await _clear_earlier_tries(ctx, retry)
    handle, secrets = await tenant_of(ctx, retry)
    name = ctx.secret(retry)
    body = objects.secret_body(
        name, secret_data(secrets),  # seat keys only: API keys stay in the user's Secret (model_keys.py)
        labels={label_keys.TRIAL: ctx.name, label_keys.RETRY: str(retry),
                label_keys.MANAGED_BY: label_keys.MANAGER},
        owner=owner_reference("BuzzTrial", ctx.name, ctx.uid),
    )
    try:
        await objects.create_secret(ctx.kube, ctx.namespace, body)
    except ApiException as exc:
        raise StepFailure("ApiServerUnavailable", f"creating Secret {name}: HTTP {exc.status}") from exc
    return Provisioned(trial_id=handle.trial_id, tenant_secret=name, channel_id=handle.channel_id)
