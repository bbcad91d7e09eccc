"""The chart's trialRuntimeClassName: empty sets nothing (the cluster's default runtime), a name
reaches the operator as BUZZ_TRIAL_RUNTIME_CLASS, which the operator applies to the sweeps that
name none (docs/isolation.md#gvisor)."""

from __future__ import annotations

from pathlib import Path

import pytest
from buzz_operator.api.sweep import BuzzSweepSpec
from buzz_operator.sweep.settings import OperatorSettings, with_runtime_class

from tests.support.corpus import load_corpus
from tests.unit.chart.chartlib import render
from tests.unit.chart.test_kueue_values import operator_env

ROOT = Path(__file__).resolve().parents[3]


def test_empty_sets_nothing_and_a_name_is_passed_on() -> None:
    assert "BUZZ_TRIAL_RUNTIME_CLASS" not in operator_env(render())
    assert operator_env(render(values={"trialRuntimeClassName": "gvisor"}))["BUZZ_TRIAL_RUNTIME_CLASS"] == "gvisor"


def test_the_default_applies_only_to_sweeps_that_name_none() -> None:
    minimal_sweep_spec = load_corpus().good_body(ROOT, store_url="file:///tmp/store")["spec"]
    settings = OperatorSettings.from_env({"BUZZ_TRIAL_RUNTIME_CLASS": "gvisor"})
    unnamed = BuzzSweepSpec.model_validate(minimal_sweep_spec)
    named = BuzzSweepSpec.model_validate({**minimal_sweep_spec, "runtimeClassName": "kata"})
    assert with_runtime_class(unnamed, settings).runtime_class_name == "gvisor"
    assert with_runtime_class(named, settings).runtime_class_name == "kata"
    assert with_runtime_class(unnamed, OperatorSettings.from_env({})).runtime_class_name is None


@pytest.mark.parametrize("bad", ["gVisor", "g visor", "-gvisor", "a" * 254])
def test_a_bad_name_stops_the_operator_naming_the_variable(bad: str) -> None:
    with pytest.raises(ValueError, match="BUZZ_TRIAL_RUNTIME_CLASS"):
        OperatorSettings.from_env({"BUZZ_TRIAL_RUNTIME_CLASS": bad})
