"""Where a trial pod's wait is told: status.waiting of its BuzzTrial, the one field this writes."""

from __future__ import annotations

from buzz_operator.api.common import TRIALS
from buzz_operator.api.trial import PodWaiting
from buzz_operator.kube import resources
from buzz_operator.kube.client import Kube
from buzz_operator.kube.pods import Report


def trial_status_reporter(kube: Kube, namespace: str, trial: str) -> Report:
    """A Report that writes status.waiting of the BuzzTrial (a merge patch of that field only),
    and clears it when the wait ends."""
    async def report(waiting: PodWaiting | None) -> None:
        await resources.patch_status(kube, TRIALS, namespace, trial,
                                     {"waiting": None if waiting is None else waiting.to_api()})
    return report
