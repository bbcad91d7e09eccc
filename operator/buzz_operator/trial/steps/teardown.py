"""Teardown (docs/tenant.md#teardown): the channel archived (its events are never deleted), then
the pods and Secrets deleted — of one abandoned try when a fresh try follows, of every try when
the trial is done or deleted.

Through the tenant helper's cache like every other step, so an archive after a retry or a
restart reads the stored tenant rather than provisioning anew.
"""

from __future__ import annotations

from buzz_operator.api.trial import BuzzTrialStatus
from buzz_operator.kube import objects
from buzz_operator.trial.drive.context import TrialContext
from buzz_operator.trial.steps.tenant import archive


async def release_try(ctx: TrialContext, status: BuzzTrialStatus) -> None:
    """One try's channel archived and its pod deleted (its Secret goes with the trial)."""
    await archive(ctx, status.retries)
    await objects.delete_pod(ctx.kube, ctx.namespace, ctx.pod(status.retries), grace_seconds=0)


async def teardown(ctx: TrialContext, status: BuzzTrialStatus) -> None:
    """Archive the channel, then delete every try's pod and Secret."""
    if status.trial_id:
        await archive(ctx, status.retries)
    for retry in range(status.retries + 1):
        await objects.delete_pod(ctx.kube, ctx.namespace, ctx.pod(retry), grace_seconds=0)
        await objects.delete_secret(ctx.kube, ctx.namespace, ctx.secret(retry))
