"""Warm pods, one tick's share (docs/warm-pods.md): after admission, the pods of the next trials
are made (sweep/warm.py says how many and whose) and the stale ones deleted. A warm pod is the
trial pod its trial's launch would make (pod/trial_pod.py, first try), owned by the sweep until
that launch claims it (trial/steps/launch.py). It holds no secret. Returns how many warm pods
the sweep has after the tick."""

from __future__ import annotations

import logging
from collections.abc import Callable, Container
from typing import Any

from kubernetes_asyncio.client.exceptions import ApiException

from buzz_operator.api import labels
from buzz_operator.api.naming import label_value
from buzz_operator.kube import objects
from buzz_operator.kube.client import Kube
from buzz_operator.pod.trial_pod import build_trial_pod, forwarder_listen_address
from buzz_operator.pod.warm_pod import as_warm, is_warm
from buzz_operator.sweep.admission import BUDGET_EXHAUSTED, SUSPENDED, AdmissionDecision
from buzz_operator.sweep.drive.admit import trial_spec_of
from buzz_operator.sweep.drive.inputs import SweepInputs
from buzz_operator.sweep.drive.plan import Plan
from buzz_operator.sweep.drive.tick import Tick
from buzz_operator.sweep.planner import PlannedTrial
from buzz_operator.sweep.warm import (
    given_back,
    room_for_new,
    stale_warm,
    sweep_pods,
    warm_target,
    warm_trials,
)
from buzz_operator.trial.drive.setup import relay_service

log = logging.getLogger(__name__)
# What the trials' own pod builder adds to a pod before it is made: nothing in the operator;
# bench/pod_path.py places pods on kwok's fake nodes, its trials' and their warm pods alike.
PLACE: Callable[[dict[str, Any]], dict[str, Any]] = lambda pod: pod  # noqa: E731


def surplus_of(read: SweepInputs, tick: Tick) -> int:
    return read.spec.warm_pods if read.spec.warm_pods is not None else tick.settings.warm_pods


async def warm_pod_body(tick: Tick, read: SweepInputs, trial: PlannedTrial) -> dict[str, Any]:
    """The pod the trial's first try would make, made warm (owned by the sweep)."""
    spec = trial_spec_of(tick, read, trial)
    listen = target = None
    if (service := relay_service(read.spec)) is not None:
        target = await objects.service_target(tick.kube, tick.namespace, service.name, service.port)
        listen = forwarder_listen_address(read.spec.relay.url)
    # the trial's uid is not known yet: the pod is built with the sweep's, then owned by the sweep
    pod = build_trial_pod(trial_name=trial.name, trial_uid=tick.uid, namespace=tick.namespace, retry=0, spec=spec,
                          trial_labels=trial.labels, relay_listen=listen, relay_target=target)
    return as_warm(PLACE(pod), sweep=tick.name, sweep_uid=tick.uid)


async def _sweep_pods(kube: Kube, namespace: str, sweep: str) -> list[dict[str, Any]]:
    """The sweep's trial pods, warm ones included (one list by the sweep label)."""
    listed = kube.api.sanitize_for_serialization(await kube.core.list_namespaced_pod(
        namespace, label_selector=f"{labels.SWEEP}={label_value(sweep)},{labels.TRIAL}"))
    return list(listed.get("items") or [])


def _warm_of(pods: list[dict[str, Any]]) -> dict[str, str]:
    return {item["metadata"]["name"]: (item["metadata"].get("labels") or {}).get(labels.TRIAL, "")
            for item in pods if is_warm(item) and not item["metadata"].get("deletionTimestamp")}


async def keep_warm(tick: Tick, read: SweepInputs, planned: Plan, decision: AdmissionDecision) -> int:
    """Warm pods for the next trials; the stale ones deleted. How many the sweep has now."""
    surplus = surplus_of(read, tick)
    listed = await _sweep_pods(tick.kube, tick.namespace, tick.name) if surplus or tick.previous.images else []
    pods = _warm_of(listed)
    if not surplus and not pods:
        return 0
    admitted = len(decision.admit)
    live = [t for t in tick.watched if t.active]
    own = sum(1 for t in live if t.sweep == tick.name and t.namespace == tick.namespace) + admitted
    held = decision.waiting_reason in (SUSPENDED, BUDGET_EXHAUSTED)
    target = warm_target(surplus=surplus, waiting=planned.missing.count - admitted, parallelism=read.spec.parallelism,
                         own_active=own, operator_cap=tick.settings.operator_cap,
                         operator_active=len(live) + admitted, held=held)
    wanted = warm_trials(planned.missing.first[admitted:], target)
    # looked up a pod's trial at a time: a set of the sweep's names was 10 MB at 100,000 trials
    existing = _Either(tick.mine.names(), {t.name for t in decision.admit})
    finished = tick.mine.finished()
    for name in stale_warm(pods, wanted={t.name for t in wanted}, existing=existing, finished=finished):
        await objects.delete_pod(tick.kube, tick.namespace, name, grace_seconds=0)
        pods.pop(name, None)
    seen = sweep_pods(listed, existing)
    for name in given_back(seen):
        await objects.delete_pod(tick.kube, tick.namespace, name, grace_seconds=0)
        pods.pop(name, None)
    room = room_for_new(len(wanted), own, seen) - sum(1 for t in wanted if t.name in pods.values())
    for trial in wanted:
        if trial.name in pods.values():
            continue
        if room <= 0:
            break
        room -= 1
        try:
            await objects.create_pod(tick.kube, tick.namespace, await warm_pod_body(tick, read, trial))
        except (ApiException, ValueError) as error:  # refused (quota, admission) or no relay Service yet
            log.info("sweep %s/%s: no warm pod for %s (%s); it starts cold", tick.namespace, tick.name, trial.name,
                     getattr(error, "status", error))
            break
        pods[trial.name] = trial.name
    return len(pods)


class _Either:
    """In one container or the other."""

    def __init__(self, first: Container[str], second: Container[str]) -> None:
        self.first, self.second = first, second

    def __contains__(self, name: object) -> bool:
        return name in self.first or name in self.second
