"""The trial pod's lifecycle without the rest of the corridor, for bench/kwok.py (run inside the
observed operator, bench/observed_operator.py --pod-path).

A kopf daemon on BuzzTrials, registered as the operator's own trial daemon is (so kopf keeps the
same per-trial memory, daemon task and finalizer), does for each trial what the corridor does to
its pod, with the operator's own code: the pod built by pod.trial_pod.build_trial_pod from the
trial's spec and labels (forwarder included, its target the relay Service's ClusterIP read per
pod as the launch step reads it), created by kube.objects.create_pod, waited for by
kube.pods.wait_running with the trial's status reporter (as trial/steps/launch.py waits), then
the trial's terminal status written in one patch, the pod deleted as teardown deletes it, and
the trial settled as the daemon settles it (handlers._settle: labelled, kopf's finalizer off).
What it leaves out is everything that needs a running container: provisioning on the relay, the
execs, the run, collect, grade and the bundle — kwok's pods have no process to exec into.

Two things differ from a real trial pod, both so the pod can land on kwok's fake nodes only: a
toleration of their taint and a nodeSelector of their label (hack/kwok.sh).

It also keeps a watch-lag probe: a ConfigMap the benchmark stamps with its clock once a second,
watched in this process's event loop (the one kopf and every daemon share), so the lag includes
the apiserver's delivery and this loop's backlog. Each sighting is a "lag" record in the stats.
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from collections.abc import Callable
from typing import Any

import kopf
from buzz_operator import handlers
from buzz_operator.api.trial import BuzzTrialSpec, BuzzTrialStatus
from buzz_operator.kube import objects, resources
from buzz_operator.kube.pods import wait_running
from buzz_operator.pod.trial_pod import build_trial_pod, forwarder_listen_address
from buzz_operator.sweep.drive import warm as warm_drive
from buzz_operator.trial.drive.waiting import trial_status_reporter
from buzz_operator.trial.steps.launch import create_or_claim
from kubernetes_asyncio import watch
from kubernetes_asyncio.client.exceptions import ApiException

log = logging.getLogger("bench.pod_path")
RELAY_URL = "ws://localhost:3600"  # bench/cluster.py's sweep: a loopback URL carried by the forwarder
RELAY_SERVICE, RELAY_PORT = "relay", 3600
KWOK_SELECTOR = {"type": "kwok"}
KWOK_TOLERATION = {"key": "kwok.x-k8s.io/node", "operator": "Exists", "effect": "NoSchedule"}
PROBE = "watch-lag-probe"
PROBE_STAMP = "bench.buzz.dev/stamp"
TERMINAL = ("Succeeded", "Failed")

Record = Callable[[dict[str, Any]], None]
# how long each trial holds its pod Running before it ends (bench/kwok.py --hold): 0 ends at once;
# a trial that runs a while lets the sweep's ticks come while its pod is up, as a real one does
HOLD_S = float(os.environ.get("BUZZ_BENCH_POD_HOLD_S", "0"))


def on_fake_nodes(pod: dict[str, Any]) -> dict[str, Any]:
    """The pod, placed on kwok's nodes only (the one change to the operator's pod)."""
    spec = pod["spec"]
    spec["nodeSelector"] = {**(spec.get("nodeSelector") or {}), **KWOK_SELECTOR}
    spec["tolerations"] = [*(spec.get("tolerations") or []), KWOK_TOLERATION]
    return pod


# the terminal status the corridor's last write would carry (its figures are not what is measured)
SUCCEEDED = {"phase": "Succeeded", "outcome": "ok", "reward": 1.0, "costUSD": {"floor": 0.01, "ceiling": 0.02},
             "conditions": [{"type": "Released", "status": "True", "reason": "Released", "message": "torn down",
                             "lastTransitionTime": "2026-01-01T00:00:00Z"}]}


def register(registry: kopf.OperatorRegistry, group: str, version: str, plural: str, record: Record) -> None:
    """The stand-in trial daemon, into `registry` (as handlers.drive_trial is into kopf's default);
    the sweep's warm pods are placed on the fake nodes as its trials' pods are."""
    warm_drive.PLACE = on_fake_nodes

    @kopf.daemon(group, version, plural, cancellation_timeout=2.0, registry=registry, id="drive_trial_pod")
    async def drive_trial_pod(body: kopf.Body, memo: kopf.Memo, **_: Any) -> None:
        if (body.get("status") or {}).get("phase") in TERMINAL:
            return
        name, namespace, uid = body.metadata.name, body.metadata.namespace, body.metadata.uid
        spec = BuzzTrialSpec.model_validate(dict(body.spec))
        target = await objects.service_target(memo.kube, namespace, RELAY_SERVICE, RELAY_PORT)
        pod = on_fake_nodes(build_trial_pod(
            trial_name=name, trial_uid=uid, namespace=namespace, retry=0, spec=spec,
            trial_labels=dict(body.metadata.labels or {}), relay_listen=forwarder_listen_address(RELAY_URL),
            relay_target=target))
        began = time.time()
        warm = await create_or_claim(memo.kube, namespace, pod, name, uid)
        created = time.time()
        state = await wait_running(memo.kube, namespace, pod["metadata"]["name"],
                                   timeout_s=spec.deadlines.schedule_seconds,
                                   report=trial_status_reporter(memo.kube, namespace, name))
        running = time.time()
        if not state.ready:
            raise kopf.PermanentError(f"pod {pod['metadata']['name']}: {state.reason}: {state.message}")
        await asyncio.sleep(HOLD_S)  # the trial's run, as long as kwok.py --hold says
        await resources.patch_status(memo.kube, plural, namespace, name, SUCCEEDED)
        await objects.delete_pod(memo.kube, namespace, pod["metadata"]["name"], grace_seconds=0)
        await handlers._settle(memo, body, BuzzTrialStatus.model_validate(SUCCEEDED))
        record({"kind": "pod", "t": time.time(), "trial": name, "create_ms": (created - began) * 1000,
                "running_ms": (running - created) * 1000, "deleted_ms": (time.time() - running) * 1000, "warm": warm})


async def probe_lag(kube: Any, namespace: str, record: Record) -> None:
    """Watch the probe ConfigMap for as long as the operator runs; each stamp seen is a record."""
    seen: set[str] = set()
    while True:
        stream = watch.Watch()
        try:
            async for event in stream.stream(kube.core.list_namespaced_config_map, namespace,
                                             field_selector=f"metadata.name={PROBE}", timeout_seconds=60):
                if event["type"] != "MODIFIED":  # a listing's ADDED may carry a stamp of long ago
                    continue
                meta = event["object"].metadata
                stamp = (meta.annotations or {}).get(PROBE_STAMP)
                if stamp and stamp not in seen:
                    seen.add(stamp)
                    record({"kind": "lag", "t": time.time(), "ms": (time.time() - float(stamp)) * 1000})
        except ApiException as error:  # a namespace going away ends the probe, nothing else
            if error.status == 404:
                return
            log.warning("watch-lag probe: %s", error)
            await asyncio.sleep(1.0)
        finally:
            await stream.close()
