"""spec.comparison judged at admission (sweep/power_check.py): the baseline sweep's summary.json
read from its own store, at most every few minutes while the baseline runs, once it has
finished. Never stops the tick: a baseline that cannot be read is a verdict that says why."""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from typing import Any

from kubernetes_asyncio.client.exceptions import ApiException
from pydantic import ValidationError

from buzz_operator.api.common import GROUP, VERSION
from buzz_operator.api.sweep import BuzzSweepSpec, PowerStatus
from buzz_operator.inputs.errors import InputError
from buzz_operator.inputs.fetch import resolve
from buzz_operator.storage import ObjectNotFound, StorageError
from buzz_operator.storage.layout import sweep_summary_key
from buzz_operator.sweep.drive.inputs import SweepInputs
from buzz_operator.sweep.drive.tick import Tick
from buzz_operator.sweep.power_check import baseline_counts, due, judge

log = logging.getLogger(__name__)
# a pilot's summary is small; a baseline of a hundred thousand trials is not read into the operator
MAX_SUMMARY_BYTES = 32 << 20


class BaselineUnreadable(Exception):
    """Why the baseline's rates cannot be had now (said in status.power.message)."""


async def _baseline(tick: Tick, name: str) -> tuple[dict[str, tuple[int, int]], bool]:
    """The baseline sweep's per-task (scored, passed) and whether it had finished."""
    try:
        body = await tick.kube.custom.get_namespaced_custom_object(GROUP, VERSION, tick.namespace, "buzzsweeps", name)
    except ApiException as error:
        if error.status == 404:
            raise BaselineUnreadable(f"baseline sweep {name} is not in namespace {tick.namespace}") from None
        raise BaselineUnreadable(f"baseline sweep {name} cannot be read (HTTP {error.status})") from None
    try:
        spec = BuzzSweepSpec.model_validate(body.get("spec") or {})
        store = await resolve.open_sweep_store(tick.kube, tick.namespace, spec)
        data = await store.get(sweep_summary_key(name))
    except ObjectNotFound:
        raise BaselineUnreadable(f"baseline sweep {name} has written no summary.json yet") from None
    except (ValidationError, InputError, StorageError) as error:
        raise BaselineUnreadable(f"baseline sweep {name}'s summary.json cannot be read: {error}"[:200]) from None
    if len(data) > MAX_SUMMARY_BYTES:
        raise BaselineUnreadable(f"baseline sweep {name}'s summary.json is {len(data) >> 20} MiB: give "
                                 "spec.comparison.passRate instead")
    try:
        summary: Mapping[str, Any] = json.loads(data)
    except ValueError as error:
        raise BaselineUnreadable(f"baseline sweep {name}'s summary.json is not JSON: {error}"[:200]) from None
    return baseline_counts(summary), bool(summary.get("finished"))


async def check_power(tick: Tick, read: SweepInputs) -> PowerStatus | None:
    """status.power for this tick: the previous verdict while it stands, else judged again."""
    comparison = read.spec.comparison
    if comparison is None:
        return None
    tasks, attempts, previous = len(read.tasks), read.spec.attempts, tick.previous.power
    if previous is not None and previous.generation == tick.generation and not due(previous, tasks, attempts, tick.now):
        return previous
    if comparison.baseline is None:
        verdict = judge(comparison, tasks, attempts, tick.now)
    else:
        try:
            counts, finished = await _baseline(tick, comparison.baseline)
        except BaselineUnreadable as error:
            log.info("sweep %s/%s: power not judged: %s", tick.namespace, tick.name, error)
            # baseline_finished False: read again after REREAD_S, as a running baseline is
            verdict = PowerStatus(tasks=tasks, attempts=attempts, checked_at=tick.now, baseline_finished=False,
                                  message=f"cannot judge: {error}")
        else:
            ours = {task.name for task in read.tasks}
            verdict = judge(comparison, tasks, attempts, tick.now, baseline_finished=finished,
                            baseline={task: n for task, n in counts.items() if task in ours})
    return verdict.model_copy(update={"generation": tick.generation})
