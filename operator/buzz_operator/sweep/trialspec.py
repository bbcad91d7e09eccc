"""A planned trial's BuzzTrial object, with everything fixed at planning time resolved.

Images, resources and deadlines are decided once, here, from the task directory, the
condition and the sweep spec; the trial then runs from its own spec alone, so editing a
ConfigMap or the dataset mid-sweep cannot change trials already planned.
"""

from __future__ import annotations

import math
from typing import Any

from buzz_operator.api.common import API_VERSION
from buzz_operator.api.labels import CREATED_AT_GENERATION, FINALIZER
from buzz_operator.api.ownership import owner_reference
from buzz_operator.api.stack import StackSource
from buzz_operator.api.sweep import BuzzSweepSpec, Headroom
from buzz_operator.api.trial import BuzzTrialSpec, TrialResources
from buzz_operator.condition.manifest import ExperimentManifest
from buzz_operator.dataset.task import Task
from buzz_operator.sweep.compose_spec import task_compose, task_environment, task_working_dir
from buzz_operator.sweep.planner import PlannedTrial
from buzz_operator.trial.deadlines import step_deadlines


def trial_resources(task: Task, manifest: ExperimentManifest, cpu_request_fraction: float = 1.0, *,
                    headroom: Headroom | None = None, default_limit_multiple: float = 1.0) -> TrialResources:
    """task.toml's request, each part replaced by the condition's override when set (docs/condition.md#budgets),
    with the sweep's headroom around it (docs/resources.md#headroom): the limits a multiple of it
    (the operator's default multiple when the sweep names none) or none, the requests a share of
    it (resources.requestFraction for CPU and memory, or the older cpuRequestFraction for CPU).
    A part task.toml leaves unset is the operator's default (dataset/config.py OPERATOR_DEFAULT_*),
    where Harbor would request nothing."""
    task_cpus, task_memory_mb, task_storage_mb = task.config.environment.resources()
    overrides = manifest.environment
    cpus = overrides.override_cpus or task_cpus
    memory_mb = overrides.override_memory_mb or task_memory_mb
    room = headroom or Headroom()
    cpu_fraction = room.request_fraction if room.request_fraction is not None else cpu_request_fraction
    memory_fraction = room.request_fraction if room.request_fraction is not None else 1.0
    return TrialResources(
        cpus=cpus,
        memory_mb=memory_mb,
        storage_mb=overrides.override_storage_mb or task_storage_mb,
        cpu_request=cpus * cpu_fraction if cpu_fraction < 1 else None,
        memory_request_mb=max(1, math.ceil(memory_mb * memory_fraction)) if memory_fraction < 1 else None,
        limit_multiple=room.limit_multiple or default_limit_multiple,
        unlimited=room.unlimited,
    )


def roster_endpoints(manifest: ExperimentManifest) -> list[str]:
    """Endpoints the roster calls, sorted and without repeats (per-endpoint caps key on them)."""
    return sorted({entry.endpoint for entry in manifest.roster})


def build_trial_spec(
    planned: PlannedTrial,
    *,
    task: Task,
    manifest: ExperimentManifest,
    condition_hash: str,
    sweep: BuzzSweepSpec,
    dataset: str,
    default_stack: StackSource,
    default_operator_image: str,
    default_queue_name: str | None = None,
    default_limit_multiple: float = 1.0,
) -> BuzzTrialSpec:
    if task.name != planned.task:
        raise ValueError(f"task {task.name!r} does not match the planned trial's task {planned.task!r}")
    config = task.config
    # the queue is the sweep's or the operator's default (chart value kueue.defaultQueueName);
    # without either the pod carries no Kueue label and nothing about it changes
    queue_name = sweep.queue_name or default_queue_name
    deadlines = step_deadlines(
        agent_timeout_sec=config.agent.timeout_sec,
        verifier_timeout_sec=config.verifier.timeout_sec,
        build_timeout_sec=config.environment.build_timeout_sec,
        manifest_timeout_seconds=manifest.trial_budget.timeout_seconds,
        multiplier=sweep.timeout_multiplier,
        pod_start_seconds=sweep.pod_start_seconds,
        setup_seconds=sweep.setup_seconds,
    )
    if queue_name is not None and sweep.queue_wait_seconds is not None:
        deadlines = deadlines.model_copy(update={"queue_seconds": sweep.queue_wait_seconds})
    return BuzzTrialSpec(
        sweep_name=planned.sweep,
        task=task.name,
        task_digest=task.digest,
        attempt=planned.attempt,
        condition_hash=condition_hash,
        image=task.image_ref(sweep.task_image_registry, dataset),
        stack=sweep.stack_source(default_stack),
        operator_image=sweep.operator_image or default_operator_image,
        image_pull_policy=sweep.image_pull_policy,
        image_pull_secrets=sweep.image_pull_secrets,
        runtime_class_name=sweep.runtime_class_name,
        queue_name=queue_name,
        endpoints=roster_endpoints(manifest),
        resources=trial_resources(task, manifest, sweep.cpu_request_fraction, headroom=sweep.resources,
                                  default_limit_multiple=default_limit_multiple),
        task_env=task_environment(task),
        working_dir=task_working_dir(task),
        compose=task_compose(task, sweep.task_image_registry, dataset),
        deadlines=deadlines,
        retry=sweep.retry,
    )


def trial_object(
    planned: PlannedTrial, spec: BuzzTrialSpec, *, namespace: str, sweep_uid: str, generation: int | None = None
) -> dict[str, Any]:
    """The BuzzTrial to create (status is written by the trial's own handler)."""
    annotations = {CREATED_AT_GENERATION: str(generation)} if generation is not None else {}
    return {
        "apiVersion": API_VERSION,
        "kind": "BuzzTrial",
        "metadata": {
            "name": planned.name,
            "namespace": namespace,
            "labels": dict(planned.labels),
            **({"annotations": annotations} if annotations else {}),
            "ownerReferences": [owner_reference("BuzzSweep", planned.sweep, sweep_uid)],
            # kopf's own, put on at creation: kopf finds it there and writes nothing to add it
            "finalizers": [FINALIZER],
        },
        "spec": spec.to_api(),
    }
