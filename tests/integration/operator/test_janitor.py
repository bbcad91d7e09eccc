"""The janitor against the real apiserver, dev relay and Postgres: a trial pod and a per-try
Secret whose BuzzTrial is gone are deleted, an object of a live trial is kept, and a relay
channel of a planned trial that no longer exists is archived while a live try's stays open."""

from __future__ import annotations

from typing import Any

import asyncpg
from buzz_operator.api import labels
from buzz_operator.api.common import GROUP, VERSION
from buzz_operator.api.sweep import BuzzSweepSpec
from buzz_operator.api.trial_names import relay_trial_id
from buzz_operator.condition import ExperimentManifest, plan_seats
from buzz_operator.inputs.fetch.datasets import load_tasks
from buzz_operator.janitor.drive import reaper
from buzz_operator.kube import objects, resources
from buzz_operator.kube.client import Kube
from buzz_operator.kube.resources import SWEEPS
from buzz_operator.relay.tenant import provision
from buzz_operator.relay.tenant_models import TenantRequest
from buzz_operator.sweep.planner import plan_trials
from buzz_operator.sweep.settings import DEFAULT_STACK
from buzz_operator.sweep.trialspec import build_trial_spec, trial_object
from kubernetes_asyncio.client import CustomObjectsApi

from .conftest import ROOT

KEEPALIVE_POD = ["sh", "-c", "sleep 3600"]


def _pod(name: str, trial: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "labels": {labels.TRIAL: trial, labels.MANAGED_BY: labels.MANAGER}},
            "spec": {"restartPolicy": "Never", "terminationGracePeriodSeconds": 0, "automountServiceAccountToken": False,
                     "containers": [{"name": "c", "image": "docker.io/buzz/debian-py:bookworm",
                                     "imagePullPolicy": "Never", "command": KEEPALIVE_POD}]}}


async def _archived(pg_dsn: str, run_id: str) -> dict[str, bool]:
    conn = await asyncpg.connect(pg_dsn)
    try:
        rows = await conn.fetch("SELECT trial_id, archived_at FROM benchmark.trial_manifest WHERE run_id = $1", run_id)
    finally:
        await conn.close()
    return {r["trial_id"]: r["archived_at"] is not None for r in rows}


async def test_janitor_reaps_orphans_and_keeps_live_objects(  # type: ignore[no-untyped-def]
    kube: Kube, namespace, crds, sweep_secrets, cluster_relay, make_sweep, tmp_path
) -> None:
    body = make_sweep("jan", store_url=f"file://{tmp_path}", tasks=["hello-file", "user-mention"], suspend=True)
    sweep = await kube.custom.create_namespaced_custom_object(GROUP, VERSION, namespace, "buzzsweeps", body)
    uid = sweep["metadata"]["uid"]
    manifest = ExperimentManifest.load(ROOT / "manifests" / "standin-oracle.yaml")
    await kube.custom.patch_namespaced_custom_object_status(
        GROUP, VERSION, namespace, "buzzsweeps", "jan", {"status": {"conditionHash": manifest.sha256}},
        _content_type="application/merge-patch+json")
    planned = plan_trials("jan", uid, manifest.sha256, ["hello-file", "user-mention"], 1)
    live, gone = planned[0].name, planned[1].name
    spec = BuzzSweepSpec.model_validate(body["spec"])
    dataset, tasks = await load_tasks(kube, namespace, spec, None)  # type: ignore[arg-type]  # builtin: no store
    trial_spec = build_trial_spec(planned[0], task=next(t for t in tasks if t.name == planned[0].task),
                                  manifest=manifest, condition_hash=manifest.sha256, sweep=spec, dataset=dataset,
                                  default_stack=DEFAULT_STACK,
                                  default_operator_image="docker.io/buzz/operator:dev")
    # created without an operator running: it stays Pending, a live trial the janitor must respect
    await kube.custom.create_namespaced_custom_object(GROUP, VERSION, namespace, "buzztrials", trial_object(
        planned[0], trial_spec, namespace=namespace, sweep_uid=uid))
    seats = plan_seats(manifest)
    for name in (live, gone):
        await provision(cluster_relay.target, TenantRequest(
            run_id="jan", trial_id=relay_trial_id(uid, name, 0), manifest_sha256=manifest.sha256, seats=seats))
    await objects.create_pod(kube, namespace, _pod("orphan-pod", gone))
    await objects.create_pod(kube, namespace, _pod("kept-pod", live))
    await objects.create_secret(kube, namespace, objects.secret_body(
        "orphan-seats", {"k": "v"}, labels={labels.TRIAL: gone, labels.MANAGED_BY: labels.MANAGER}, owner=None))

    sweep = await kube.custom.get_namespaced_custom_object(GROUP, VERSION, namespace, "buzzsweeps", "jan")
    reaped = await reaper.tick(kube, sweep)

    assert reaped.pods == ["orphan-pod"] and reaped.secrets == ["orphan-seats"], reaped
    assert await objects.read_pod(kube, namespace, "kept-pod") is not None
    archived = await _archived(cluster_relay.target.pg_dsn, "jan")
    assert archived == {relay_trial_id(uid, live, 0): False, relay_trial_id(uid, gone, 0): True}, archived
    assert len(reaped.channels) == 1
    # a second tick finds nothing left to do
    again = await reaper.tick(kube, sweep)
    assert (again.pods, again.secrets, again.channels) == ([], [], [])
    print("\njanitor: reaped 1/1 orphan pod, 1/1 orphan Secret, 1/1 orphan channel; kept 1 live pod, 1 live channel")


async def test_objects_are_read_a_page_at_a_time(kube: Kube, namespace, crds, make_sweep, tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    # the janitor reads a namespace's trials this way; sweeps stand in (no operator runs here)
    for i in range(5):
        await kube.custom.create_namespaced_custom_object(GROUP, VERSION, namespace, "buzzsweeps", make_sweep(
            f"page-{i}", store_url=f"file://{tmp_path}", tasks=["hello-file"], suspend=True))
    calls: list[dict[str, Any]] = []
    real = CustomObjectsApi.list_namespaced_custom_object

    async def counted(self: CustomObjectsApi, *args: Any, **kwargs: Any) -> Any:
        calls.append(kwargs)  # each request, then the real one: Kube.custom is a new API object per use
        return await real(self, *args, **kwargs)

    monkeypatch.setattr(CustomObjectsApi, "list_namespaced_custom_object", counted)
    names = [obj["metadata"]["name"] async for obj in resources.iter_objects(kube, SWEEPS, namespace, page=2)]
    monkeypatch.undo()
    assert sorted(names) == [f"page-{i}" for i in range(5)]
    assert [c["limit"] for c in calls] == [2, 2, 2]  # three pages of at most two
    assert "_continue" not in calls[0] and all(c["_continue"] for c in calls[1:])
