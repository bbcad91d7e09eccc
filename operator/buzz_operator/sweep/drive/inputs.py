"""The first policy of a tick: the sweep's spec validated and everything it names read — the
condition, the endpoints, the object store, the dataset. A refusal marks the sweep invalid
naming the spec field; so does a condition changed under a sweep that already ran with it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from buzz_operator.api.sweep import BuzzSweepSpec
from buzz_operator.condition.manifest import ExperimentManifest
from buzz_operator.dataset.task import Task
from buzz_operator.inputs.errors import InputError
from buzz_operator.inputs.fetch import datasets, resolve
from buzz_operator.storage import ObjectStore
from buzz_operator.sweep.drive.tick import Tick
from buzz_operator.sweep.invalid import validation_message
from buzz_operator.sweep.lifecycle import condition_drift
from buzz_operator.sweep.settings import with_runtime_class


@dataclass(frozen=True)
class SweepInputs:
    spec: BuzzSweepSpec
    manifest: ExperimentManifest
    store: ObjectStore
    dataset: str
    tasks: list[Task]
    origins: dict[str, dict[str, Any]]


async def read_inputs(tick: Tick) -> SweepInputs:
    """The sweep's inputs, or Stop with the sweep marked invalid."""
    try:
        spec = BuzzSweepSpec.model_validate(tick.body.get("spec") or {})
    except ValidationError as error:
        raise tick.invalid(validation_message(error)) from None
    try:
        condition = await resolve.load_condition(tick.kube, tick.namespace, spec)
        await resolve.load_endpoints(tick.kube, tick.namespace, spec, condition.manifest)
        store = await resolve.open_sweep_store(tick.kube, tick.namespace, spec)
        dataset, tasks, origins = await datasets.load_source(tick.kube, tick.namespace, spec, store)
    except InputError as error:
        raise tick.invalid(str(error)) from None
    if drift := condition_drift(tick.previous.condition_hash, condition.manifest.sha256):
        raise tick.invalid(f"spec.condition: {drift}")
    # the operator's default RuntimeClass applied here, so the preflight's canary and every trial
    # pod run under the runtime the sweep will have (docs/isolation.md#gvisor)
    return SweepInputs(with_runtime_class(spec, tick.settings), condition.manifest, store, dataset, tasks, origins)
