"""The trial pod as the runtime creates it: `podspec.build_trial_pod`, with one correction.

podspec's stack install runs `cp -a /stack/. /opt/buzz/`, which also tries to copy the
source directory's timestamps onto /opt/buzz itself; the emptyDir is owned by root and the
init container runs as 65532, so utime fails with EPERM and the init container exits 1 on
every pod. Copying without preserving attributes keeps each file's mode (the stack image
already makes bin/ 0755) and needs no ownership of the mount point.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from buzz_operator.api.trial import BuzzTrialSpec
from buzz_operator.trial.podspec import STACK_INSTALL, build_trial_pod

STACK_INSTALL_FIXED = STACK_INSTALL.replace("cp -a ", "cp -R ", 1)


def trial_pod(
    *,
    trial_name: str,
    trial_uid: str,
    namespace: str,
    retry: int,
    spec: BuzzTrialSpec,
    trial_labels: Mapping[str, str],
    relay_listen: str,
    relay_target: str,
) -> dict[str, Any]:
    pod = build_trial_pod(
        trial_name=trial_name, trial_uid=trial_uid, namespace=namespace, retry=retry, spec=spec,
        trial_labels=trial_labels, relay_listen=relay_listen, relay_target=relay_target,
    )
    for container in pod["spec"]["initContainers"]:
        if container["name"] == "stack" and container["command"][-1] == STACK_INSTALL:
            container["command"] = [*container["command"][:-1], STACK_INSTALL_FIXED]
    return pod
