"""Headroom (docs/resources.md#headroom): spec.resources turned into a trial's requests and
limits, the operator's default multiple, what lock.json records and how a change is refused."""

from __future__ import annotations

import pytest
from buzz_operator.api import validate_sweep_spec
from buzz_operator.api.sweep import Headroom
from buzz_operator.condition import ExperimentManifest
from buzz_operator.dataset import builtin_dataset_path, load_task
from buzz_operator.pod.trial_pod import task_resources
from buzz_operator.sweep.lock import lock_drift
from buzz_operator.sweep.settings import OperatorSettings
from buzz_operator.sweep.trialspec import trial_resources

from tests.support.sweep_ticks import SPEC

ROOT = builtin_dataset_path().parent
TASK = load_task(builtin_dataset_path() / "hello-file")  # 1 CPU, 1024 MiB
MANIFEST = ExperimentManifest.load(ROOT / "manifests" / "standin-oracle.yaml")


def _box(headroom: Headroom | None = None, *, cpu_fraction: float = 1.0, default: float = 1.0) -> dict:  # type: ignore[type-arg]
    return task_resources(trial_resources(TASK, MANIFEST, cpu_fraction, headroom=headroom,
                                          default_limit_multiple=default))


def test_the_default_box_is_task_tomls_as_request_and_limit() -> None:
    box = _box()
    assert box["requests"] == box["limits"] == {"cpu": "1", "memory": "1024Mi", "ephemeral-storage": "1024Mi"}


def test_a_multiple_raises_the_limits_and_keeps_the_requests() -> None:
    box = _box(Headroom(limit_multiple=3))
    assert box["requests"] == {"cpu": "1", "memory": "1024Mi", "ephemeral-storage": "1024Mi"}
    assert box["limits"] == {"cpu": "3", "memory": "3072Mi", "ephemeral-storage": "1024Mi"}
    assert _box(default=2.5)["limits"]["memory"] == "2560Mi"  # the operator's default when the sweep names none
    assert _box(Headroom(limit_multiple=1.5), default=3)["limits"]["cpu"] == "1500m"  # the sweep's wins


def test_unlimited_leaves_cpu_and_memory_unbounded_and_a_fraction_lowers_both_requests() -> None:
    box = _box(Headroom(unlimited=True, request_fraction=0.5))
    assert box["limits"] == {"ephemeral-storage": "1024Mi"}
    assert box["requests"] == {"cpu": "500m", "memory": "512Mi", "ephemeral-storage": "1024Mi"}
    assert _box(cpu_fraction=0.25)["requests"]["memory"] == "1024Mi"  # cpuRequestFraction: CPU only


def test_lock_json_records_the_room_and_a_change_is_drift() -> None:
    three = validate_sweep_spec({**SPEC, "resources": {"limitMultiple": 3}})
    assert three.headroom() == {"limitMultiple": 3.0, "cpuRequestFraction": 1.0, "memoryRequestFraction": 1.0}
    assert validate_sweep_spec(SPEC).headroom(2.0)["limitMultiple"] == 2.0
    assert validate_sweep_spec({**SPEC, "resources": {"unlimited": True}}).headroom()["limitMultiple"] is None
    base = {"version": 2, "conditionHash": "h", "dataset": "d"}
    assert lock_drift(base, {**base, "resources": three.headroom(1.0)}) == (
        "resources changed (limits 1×, requests 1 CPU / 1 memory → limits 3×, requests 1 CPU / 1 memory)")
    # a lock written before headroom was recorded had the default box
    assert lock_drift(base, {**base, "resources": validate_sweep_spec(SPEC).headroom()}) is None


@pytest.mark.parametrize(("value", "fine"), [("", 1.0), ("3", 3.0), (" 1.5 ", 1.5)])
def test_the_chart_default_reaches_the_operator(value: str, fine: float) -> None:
    assert OperatorSettings.from_env({"BUZZ_LIMIT_MULTIPLE": value}).limit_multiple == fine


@pytest.mark.parametrize("value", ["0.5", "3x", "101", "nan"])
def test_a_bad_chart_default_stops_the_operator_naming_it(value: str) -> None:
    with pytest.raises(ValueError, match="BUZZ_LIMIT_MULTIPLE"):
        OperatorSettings.from_env({"BUZZ_LIMIT_MULTIPLE": value})
