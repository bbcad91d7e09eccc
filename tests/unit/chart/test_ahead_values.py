"""The chart's prepull.concurrency and warmPods reach the operator as BUZZ_PREPULL_CONCURRENCY and
BUZZ_WARM_PODS (docs/registry.md#images-pulled-ahead, docs/warm-pods.md); a sweep's own
spec.warmPods wins; a value out of range stops the operator, or helm, naming it."""

from __future__ import annotations

import pytest
from buzz_operator.sweep.settings import OperatorSettings

from tests.unit.chart.chartlib import render
from tests.unit.chart.test_kueue_values import operator_env


def test_the_defaults_and_a_value_are_passed_on() -> None:
    env = operator_env(render())
    assert (env["BUZZ_PREPULL_CONCURRENCY"], env["BUZZ_WARM_PODS"]) == ("2", "0")
    env = operator_env(render(values={"prepull": {"concurrency": 0}, "warmPods": 3}))
    settings = OperatorSettings.from_env(env)
    assert (settings.prepull_concurrency, settings.warm_pods) == (0, 3)
    assert OperatorSettings.from_env({}).prepull_concurrency == 2


@pytest.mark.parametrize(("name", "bad"), [("BUZZ_PREPULL_CONCURRENCY", "-1"), ("BUZZ_PREPULL_CONCURRENCY", "17"),
                                           ("BUZZ_WARM_PODS", "two"), ("BUZZ_WARM_PODS", "99")])
def test_a_bad_value_stops_the_operator_naming_the_variable(name: str, bad: str) -> None:
    with pytest.raises(ValueError, match=name):
        OperatorSettings.from_env({name: bad})


def test_helm_refuses_a_value_out_of_range() -> None:
    with pytest.raises(Exception, match="warmPods"):
        render(values={"warmPods": 40})
