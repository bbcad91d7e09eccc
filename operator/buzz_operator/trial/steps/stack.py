"""What stack a try's agents run: the digests the pod's stack init container wrote, read back
from the task container (pod/stack_install.py writes and parses them).

Not a step: launch records them, and bundling reads them again when launch failed after the
install.
"""

from __future__ import annotations

from buzz_operator.api.stack import StackDigests
from buzz_operator.pod.stack_install import READ_MANIFEST, ManifestError, parse_manifest
from buzz_operator.scoring.failures import StepFailure
from buzz_operator.trial.drive.context import TrialContext
from buzz_operator.trial.drive.pod_exec import sh


async def installed_stack(ctx: TrialContext, pod: str) -> StackDigests:
    """What this try's agents will run, whatever the image's tag points to by now."""
    listed = await sh(ctx, pod, READ_MANIFEST)
    if not listed.ok:
        raise StepFailure("StackInstallFailed", f"reading the stack's digests: exit {listed.exit_code}")
    return digests_of(listed.text())


def digests_of(manifest: str) -> StackDigests:
    """The digests of the manifest's text, or the failure that names what is wrong with it."""
    try:
        return parse_manifest(manifest)
    except ManifestError as exc:
        raise StepFailure("StackInstallFailed", str(exc)[:300]) from exc
