"""Trials admitted through a real Kueue (hack/kueue.sh: v0.17.0's manager built from its Go module,
its CRDs, webhooks scoped to namespaces labelled buzz-operator.dev/kueue=enabled).

Two sweeps in two LocalQueues share one ClusterQueue whose quota is two trial pods. Each sweep's own
parallelism would run three trials, so six are created at once and Kueue holds four back. Watched
from outside while the operator runs: never more than two trial pods past Kueue's gate at once,
the held trials' status.waiting says Kueue holds them, in Kueue's words, with their LocalQueue,
ClusterQueue and place; both sweeps finish with every trial scored. Kueue is installed for this
module (hack/kueue.sh up, idempotent) and left running after it: its webhooks and manager touch
only namespaces labelled for it, so no other test meets them, and test sessions share this
cluster — a `down` at the end of one would pull Kueue from under another session's test.
`make kueue-down` (or cluster-down) removes it.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from buzz_operator.api.common import GROUP, TRIALS, VERSION
from buzz_operator.api.labels import COMPONENT, KUEUE_ADMISSION_GATE, PREFLIGHT, TRIAL_POD
from buzz_operator.cli.sweep_watch import snapshot
from buzz_operator.kube.client import Kube
from kopf.testing import KopfRunner
from kubernetes_asyncio import watch

from tests.support.cluster import hack, kubectl, kubectl_json

KUEUE_API = "kueue.x-k8s.io/v1beta2"
NAMESPACE_LABEL = "buzz-operator.dev/kueue=enabled"
QUOTA_PODS = 2
SWEEPS = ("qa", "qb")
ATTEMPTS = 3


@pytest.fixture(scope="module")
def kueue(kubeconfig: str) -> None:
    """Kueue up for this module (idempotent: builds and caches it on a fresh machine)."""
    hack("kueue.sh", "up")


@pytest.fixture
def make_queues(kueue: None, namespace: str) -> Iterator[Any]:
    """make_queues(pods, *local_queues): a ResourceFlavor, a ClusterQueue with room for `pods` trial
    pods, and LocalQueues feeding it in the test's namespace (labelled for Kueue); removed after."""
    made: list[tuple[str, str]] = []

    def make(pods: int, *local_queues: str) -> dict[str, str]:
        suffix = uuid.uuid4().hex[:6]
        flavor, cq = f"buzz-flavor-{suffix}", f"buzz-shared-{suffix}"
        kubectl("label", "--overwrite", "namespace", namespace, NAMESPACE_LABEL)
        # cpu, memory and ephemeral storage are covered generously (Kueue refuses a Workload asking
        # for a resource its ClusterQueue does not cover); `pods` is the quota that binds
        quota = {"cpu": "64", "memory": "256Gi", "ephemeral-storage": "1Ti", "pods": str(pods)}
        objects = [
            {"apiVersion": KUEUE_API, "kind": "ResourceFlavor", "metadata": {"name": flavor}},
            {"apiVersion": KUEUE_API, "kind": "ClusterQueue", "metadata": {"name": cq},
             "spec": {"namespaceSelector": {}, "queueingStrategy": "BestEffortFIFO",
                      "resourceGroups": [{"coveredResources": list(quota),
                                          "flavors": [{"name": flavor, "resources": [
                                              {"name": k, "nominalQuota": v} for k, v in quota.items()]}]}]}},
            *({"apiVersion": KUEUE_API, "kind": "LocalQueue", "metadata": {"name": lq, "namespace": namespace},
               "spec": {"clusterQueue": cq}} for lq in local_queues),
        ]
        kubectl("apply", "-f", "-", stdin=json.dumps({"apiVersion": "v1", "kind": "List", "items": objects}))
        made.append((flavor, cq))
        return {"flavor": flavor, "clusterQueue": cq}

    yield make
    # while Kueue still runs, so it releases its finalizers and the namespace can go
    subprocess.run(["kubectl", "-n", namespace, "delete", "pods,workloads", "--all", "--timeout=90s"],
                   capture_output=True)
    kubectl("-n", namespace, "delete", "localqueues", "--all", "--ignore-not-found", "--wait=false")
    for flavor, cq in made:
        kubectl("delete", "clusterqueue", cq, "--ignore-not-found", "--wait=false")
        kubectl("delete", "resourceflavor", flavor, "--ignore-not-found", "--wait=false")


@dataclass
class Seen:
    """What the watchers saw while the sweeps ran."""

    pods: dict[str, dict[str, Any]] = field(default_factory=dict)
    max_admitted: int = 0  # past Kueue's gate, not finished, not being deleted
    max_admitted_or_terminating: int = 0
    gated: set[str] = field(default_factory=set)  # pods seen carrying Kueue's gate
    waiting: list[tuple[str, dict[str, Any]]] = field(default_factory=list)  # (trial, status.waiting)

    def count(self) -> None:
        live = [p for p in self.pods.values()
                if not any(g.get("name") == KUEUE_ADMISSION_GATE for g in p["spec"].get("schedulingGates") or [])
                and (p.get("status") or {}).get("phase") not in ("Succeeded", "Failed")]
        self.max_admitted = max(self.max_admitted, len([p for p in live if not p["metadata"].get("deletionTimestamp")]))
        self.max_admitted_or_terminating = max(self.max_admitted_or_terminating, len(live))


async def _watch(kube: Kube, call: Any, *args: Any, on_event: Any) -> None:
    """A watch that reopens (server timeouts, 410) until cancelled."""
    while True:
        async with watch.Watch() as stream:
            try:
                async for event in stream.stream(call, *args, timeout_seconds=60):
                    on_event(event["type"], event["raw_object"])
            except Exception:  # a closed or expired watch: open the next one
                await asyncio.sleep(0.5)




def complete(namespace: str, name: str) -> dict[str, Any] | None:
    sweep = kubectl_json("-n", namespace, "get", "buzzsweep", name)
    done = next((c for c in (sweep.get("status") or {}).get("conditions", []) if c["type"] == "Complete"), None)
    return sweep if done and done["status"] == "True" else None


async def test_two_sweeps_share_a_cluster_queue_for_two_trials(  # type: ignore[no-untyped-def]
    kube: Kube, namespace, crds, sweep_secrets, make_sweep, make_queues, tmp_path: Path, capsys
) -> None:
    queues = make_queues(QUOTA_PODS, *(f"team-{s}" for s in SWEEPS))
    seen = Seen()

    def on_pod(kind: str, pod: dict[str, Any]) -> None:
        name = pod["metadata"]["name"]
        pod_labels = pod["metadata"].get("labels") or {}
        # the preflight canary carries the trial pod's policy labels but no queue (it is not a
        # trial, and Kueue leaves it alone): counted, it made a third "admitted" pod while the
        # other sweep's preflight ran beside two admitted trials
        if pod_labels.get(COMPONENT) != TRIAL_POD or PREFLIGHT in pod_labels:
            return
        if kind == "DELETED":
            seen.pods.pop(name, None)
        else:
            seen.pods[name] = pod
            if any(g.get("name") == KUEUE_ADMISSION_GATE for g in pod["spec"].get("schedulingGates") or []):
                seen.gated.add(name)
        seen.count()

    def on_trial(kind: str, trial: dict[str, Any]) -> None:
        if kind != "DELETED" and (waiting := (trial.get("status") or {}).get("waiting")):
            seen.waiting.append((trial["metadata"]["name"], waiting))

    watchers = [
        asyncio.create_task(_watch(kube, kube.core.list_namespaced_pod, namespace, on_event=on_pod)),
        asyncio.create_task(_watch(kube, kube.custom.list_namespaced_custom_object, GROUP, VERSION, namespace,
                                   TRIALS, on_event=on_trial)),
    ]
    store = tmp_path / "store"
    started = time.monotonic()
    try:
        with KopfRunner(["run", "--standalone", "-n", namespace, "-m", "buzz_operator.handlers"], timeout=60) as runner:
            for sweep in SWEEPS:
                # parallelism 3: the operator's own caps would run all three of a sweep's trials at
                # once; Kueue's quota is what holds them to two between both sweeps
                body = make_sweep(sweep, store_url=f"file://{store}", tasks=["hello-file"], attempts=ATTEMPTS,
                                  parallelism=ATTEMPTS, cpuRequestFraction=0.1, queueName=f"team-{sweep}",
                                  queueWaitSeconds=900)
                kubectl("-n", namespace, "apply", "-f", "-", stdin=json.dumps(body))
            deadline = time.monotonic() + 900
            done: dict[str, dict[str, Any]] = {}
            watched: str | None = None  # a line of `buzzctl sweep watch` naming Kueue as the holder
            while len(done) < len(SWEEPS) and time.monotonic() < deadline:
                for sweep in SWEEPS:
                    if sweep not in done and (finished := complete(namespace, sweep)):
                        done[sweep] = finished
                    if watched is None:
                        screen = await snapshot(kube, namespace, sweep)
                        watched = next((line for line in screen.waiting if ": kueue: " in line), None)
                await asyncio.sleep(2)
        assert runner.exception is None, runner.output
    finally:
        for task in watchers:
            task.cancel()
        await asyncio.gather(*watchers, return_exceptions=True)
    ran_s = time.monotonic() - started
    assert len(done) == len(SWEEPS), f"sweeps not complete: {sorted(set(SWEEPS) - set(done))}"
    for sweep in done.values():
        status = sweep["status"]
        assert (status["total"], status["succeeded"], status["meanReward"]) == (ATTEMPTS, ATTEMPTS, 1.0), status

    trials = kubectl_json("-n", namespace, "get", "buzztrials")["items"]
    assert {t["spec"]["queueName"] for t in trials} == {f"team-{s}" for s in SWEEPS}
    assert all(not (t.get("status") or {}).get("waiting") for t in trials), "a finished trial still says it waits"
    # every trial pod went through Kueue: Kueue's webhook gated each one
    assert len(seen.gated) == len(trials), (seen.gated, [t["metadata"]["name"] for t in trials])

    assert 1 <= seen.max_admitted <= QUOTA_PODS, seen.max_admitted
    kueue_waits = [(trial, w) for trial, w in seen.waiting if w.get("source") == "kueue"]
    assert kueue_waits, f"no trial showed Kueue holding it: {seen.waiting[:5]}"
    quota = [(t, w) for t, w in kueue_waits if "insufficient unused quota for pods" in w.get("message", "")]
    assert quota, f"Kueue's own reason was not shown: {kueue_waits[:5]}"
    _, example = quota[0]
    assert example["reason"] == "QueuedInKueue" and example["clusterQueue"] == queues["clusterQueue"], example
    assert example["queue"] in {f"team-{s}" for s in SWEEPS} and example.get("position", 0) >= 1, example
    assert watched is not None and "QueuedInKueue (LocalQueue team-" in watched, watched
    with capsys.disabled():
        reasons = sorted({(w["source"], w["reason"]) for _, w in seen.waiting})
        print(f"\n[kueue] {len(trials)} trials in {ran_s:.0f}s; max trial pods admitted at once "
              f"{seen.max_admitted} (with terminating ones {seen.max_admitted_or_terminating}); "
              f"{len({t for t, _ in kueue_waits})} trials held by Kueue; reasons seen {reasons}; "
              f"e.g. {example['queue']} #{example.get('position')}: {example['message']}; sweep watch: {watched}")


def test_a_pod_kueue_never_admits_fails_as_infra_at_the_bound(  # type: ignore[no-untyped-def]
    namespace, crds, sweep_secrets, make_sweep, make_queues, tmp_path: Path
) -> None:
    """A ClusterQueue with no room: the trial's pod waits queueWaitSeconds, then the try fails as
    QueueWaitExceeded — infra, outcome launch, Kueue's reason in the message — and the task was
    never posted, so nothing is charged to the agents."""
    queues = make_queues(0, "team-full")
    body = make_sweep("qfull", store_url=f"file://{tmp_path / 'store'}", tasks=["hello-file"], cpuRequestFraction=0.1,
                      queueName="team-full", queueWaitSeconds=15, retry={"maxRetries": 0})
    with KopfRunner(["run", "--standalone", "-n", namespace, "-m", "buzz_operator.handlers"], timeout=60) as runner:
        kubectl("-n", namespace, "apply", "-f", "-", stdin=json.dumps(body))
        deadline, trial = time.monotonic() + 300, None
        while time.monotonic() < deadline:
            trials = kubectl_json("-n", namespace, "get", "buzztrials")["items"]
            trial = trials[0] if trials else None
            if trial and (trial.get("status") or {}).get("phase") == "Failed":
                break
            time.sleep(2)
    assert runner.exception is None, runner.output
    assert trial is not None
    status = trial["status"]
    assert (status.get("phase"), status.get("reason"), status.get("failureClass"), status.get("outcome")) == (
        "Failed", "QueueWaitExceeded", "infra", "launch"), status
    message = status.get("message") or ""
    assert f"LocalQueue team-full (ClusterQueue {queues['clusterQueue']})" in message, message
    assert "spec.queueWaitSeconds" in message and "QueuedInKueue" in message, message
    assert not status.get("taskEventId") and not status.get("waiting"), status


def test_kueue_is_scoped_to_labelled_namespaces(kueue: None, namespace: str) -> None:
    """A pod in a namespace without the label is neither gated nor given a Workload, even with the
    queue label: Kueue's webhooks and its manager only look at labelled namespaces."""
    pod = {"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": "plain", "labels": {"kueue.x-k8s.io/queue-name": "team-x"}},
           "spec": {"restartPolicy": "Never", "automountServiceAccountToken": False,
                    "containers": [{"name": "c", "image": "docker.io/buzz/operator:dev", "imagePullPolicy": "Never",
                                    "command": ["true"]}]}}
    kubectl("-n", namespace, "apply", "-f", "-", stdin=json.dumps(pod))
    created = kubectl_json("-n", namespace, "get", "pod", "plain")
    assert not created["spec"].get("schedulingGates"), created["spec"].get("schedulingGates")
    assert "kueue.x-k8s.io/managed" not in (created["metadata"].get("finalizers") or [])
    subprocess.run(["kubectl", "-n", namespace, "delete", "pod", "plain", "--wait=false"], capture_output=True)
