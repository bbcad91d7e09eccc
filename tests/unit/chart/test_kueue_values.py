"""The chart's kueue values: the default queue reaches the operator as BUZZ_DEFAULT_QUEUE_NAME, and
Kueue's objects are readable only when the chart is told Kueue is there (docs/queueing.md)."""

from __future__ import annotations

from typing import Any

from tests.unit.chart.chartlib import granted, render

KUEUE_GRANTS = {("kueue.x-k8s.io", "workloads", "list"), ("kueue.x-k8s.io", "localqueues", "get")}


def operator_env(docs: list[dict[str, Any]]) -> dict[str, Any]:
    deployment = next(d for d in docs if d["kind"] == "Deployment")
    return {e["name"]: e.get("value") for c in deployment["spec"]["template"]["spec"]["containers"]
            for e in c.get("env", [])}


def test_without_kueue_values_nothing_of_kueue_is_granted_or_set() -> None:
    docs = render()
    assert "BUZZ_DEFAULT_QUEUE_NAME" not in operator_env(docs)
    assert not granted(docs) & KUEUE_GRANTS


def test_a_default_queue_is_passed_on_and_implies_the_read_grants() -> None:
    docs = render(values={"kueue": {"defaultQueueName": "team-a"}})
    assert operator_env(docs)["BUZZ_DEFAULT_QUEUE_NAME"] == "team-a"
    assert granted(docs) >= KUEUE_GRANTS


def test_enabled_alone_grants_the_reads_without_a_default_queue() -> None:
    docs = render(values={"kueue": {"enabled": True}})
    assert "BUZZ_DEFAULT_QUEUE_NAME" not in operator_env(docs)
    assert granted(docs) >= KUEUE_GRANTS
