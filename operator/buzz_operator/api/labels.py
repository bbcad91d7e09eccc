"""Label and annotation keys the operator puts on BuzzTrials, pods and Secrets.

Labels let the operator index its children (`@kopf.index`) and the janitor find orphans
without listing by name; they are the only cross-object links besides ownerReferences.
"""

from __future__ import annotations

from buzz_operator.api.common import GROUP

SWEEP = f"{GROUP}/sweep"
TASK = f"{GROUP}/task"
ATTEMPT = f"{GROUP}/attempt"
CONDITION = f"{GROUP}/condition"
TRIAL = f"{GROUP}/trial"
RETRY = f"{GROUP}/retry"
# Annotation: the sweep generation a trial was created under; spec.rerun (set at that
# generation) never selects it again, so a trial failing the same way again is not re-run forever.
CREATED_AT_GENERATION = f"{GROUP}/created-at-generation"
# Annotation: the sweep generation whose spec.regrade asks this (finished) trial's verifier to
# run again on its recorded evidence.
REGRADE = f"{GROUP}/regrade"
# The egress phase of a trial pod (docs/egress.md): `agents` from creation while the seats run,
# `grading` once they are stopped (trial/drive/egress_phase.py relabels the pod). The chart's trial
# NetworkPolicies select disjoint values of it, so a pod gets one phase's egress at a time.
PHASE = f"{GROUP}/phase"
PHASE_AGENTS = "agents"
PHASE_GRADING = "grading"
# The network the task allows its verifier (public | allowlist | no-network), set with
# phase=grading; the grading policies open the mirrors and the internet by it.
NETWORK = f"{GROUP}/network"
# A trial terminal and torn down, which kopf no longer watches (docs/design.md#settled-trials):
# its daemon sets it with kopf's finalizer taken off; a regrade takes it off again for the while.
SETTLED = f"{GROUP}/settled"
# kopf's finalizer on BuzzTrials (settings.persistence.finalizer). The sweep creates each trial
# with it already on, so kopf does not spend a PATCH per trial adding it (bench/trial.py counts
# writes); the trial's daemon takes it off when it settles the trial.
FINALIZER = f"{GROUP}/finalizer"
# Marks the preflight canary, which otherwise carries a trial pod's policy labels.
PREFLIGHT = f"{GROUP}/preflight"
# A trial pod made ahead of its trial (docs/warm-pods.md): owned by the sweep and named as its
# trial's first try's pod, until that trial claims it and this label comes off.
WARM = f"{GROUP}/warm"
COMPONENT = "app.kubernetes.io/component"
# The component of a sweep's short-lived pods that pull an image onto a node ahead of the trials
# that need it (docs/registry.md#images-pulled-ahead).
IMAGE_PULL = "image-pull"
# Annotation on a pull pod: the image and node it pulls for (its name only hashes them).
PULL_IMAGE = f"{GROUP}/pull-image"
PULL_NODE = f"{GROUP}/pull-node"
TRIAL_POD = "trial-pod"
MANAGED_BY = "app.kubernetes.io/managed-by"
MANAGER = "buzz-operator"

# How much of the condition hash goes into the label: enough to tell conditions apart in
# one namespace, short enough to read in `kubectl get -L`.
CONDITION_LABEL_HEX = 16

# Kueue's plain-Pod integration: a pod with this label (the LocalQueue's name) is gated by
# Kueue's webhook until its Workload is admitted (docs/queueing.md). Only spec.queueName sets it.
KUEUE_QUEUE_NAME = "kueue.x-k8s.io/queue-name"
# The scheduling gate Kueue's webhook puts on such a pod, removed on admission.
KUEUE_ADMISSION_GATE = "kueue.x-k8s.io/admission"
