"""buzzctl plan (docs/statistics.md#planning): from assumed rates and from a pilot sweep read from
the store alone; bad input exits 1 naming the option."""

from __future__ import annotations

import json

import pytest
from buzz_operator.cli.main import app
from buzz_operator.results.power import Design, beta_rates, tasks_needed
from typer.testing import CliRunner


def test_assumed_rates_give_a_row_per_attempts_count(runner: CliRunner) -> None:
    result = runner.invoke(app, ["plan", "--pass-rate", "0.5", "--spread", "0.2", "-d", "0.15", "-o", "json"])
    assert result.exit_code == 0, result.output
    document = json.loads(result.output)
    assert [n["attempts"] for n in document["needs"]] == [1, 2, 3, 5, 10]
    rates = beta_rates(0.5, 0.2)
    assert [n["tasks"] for n in document["needs"]] == [tasks_needed(rates, 0.15, k, Design()).tasks
                                                       for k in (1, 2, 3, 5, 10)]
    assert all(n["trials_per_condition"] == n["tasks"] * n["attempts"] for n in document["needs"])
    assert document["rates"] == {"source": "assumed", "sweep": None, "tasks": None, "mean": pytest.approx(0.5, abs=1e-3),
                                 "spread": pytest.approx(0.2, abs=0.005)}
    assert document["design"]["fewest_untied_tasks"] == 6 and document["size"] is None


def test_a_size_is_judged_both_ways(runner: CliRunner) -> None:
    result = runner.invoke(app, ["plan", "--pass-rate", "0.5", "--tasks", "10", "--attempts", "5", "-o", "json"])
    assert result.exit_code == 0, result.output
    size = json.loads(result.output)["size"]
    assert size["power"] is None and size["detectable"]["better"] == -size["detectable"]["worse"] > 0
    table = runner.invoke(app, ["plan", "--pass-rate", "0.5", "--tasks", "10", "--attempts", "5", "-d", "0.2"])
    assert table.exit_code == 0 and "10 tasks × 5 attempts detect a difference of at least +0." in table.output
    assert "power for +0.200:" in table.output


def test_a_pilot_sweep_gives_its_tasks_rates(runner: CliRunner, store: str) -> None:
    # mixed's scored trials: hello-file 2 of 3, reply-to-thread 0 of 2, user-mention 0 of 1
    result = runner.invoke(app, ["plan", "--pilot", "mixed", "--store", store, "-d", "0.3", "-k", "3", "-o", "json"])
    assert result.exit_code == 0, result.output
    document = json.loads(result.output)
    assert document["rates"] == {"source": "pilot", "sweep": "mixed", "tasks": 3, "mean": pytest.approx(2 / 9, abs=1e-6),
                                 "spread": pytest.approx((((4 / 9) ** 2 + 2 * (2 / 9) ** 2) / 3) ** 0.5, abs=1e-6)}
    [need] = document["needs"]
    assert need["tasks"] == tasks_needed((2 / 3, 0.0, 0.0), 0.3, 3, Design()).tasks and need["beyond_suite"]
    table = runner.invoke(app, ["plan", "--pilot", "mixed", "--store", store, "-d", "0.3", "-k", "3"])
    assert "pilot sweep mixed (3 tasks)" in table.output and "more tasks than the pilot's suite has (3)" in table.output
    # with --attempts, the pilot's own suite is the size judged unless --tasks says otherwise
    assert document["size"]["tasks"] == 3 and document["size"]["attempts"] == 3
    assert "3 tasks × 3 attempts detect a difference of at least" in table.output


@pytest.mark.parametrize(("args", "named"), [
    (["-d", "0.1"], "--pass-rate or --pilot"),
    (["--pass-rate", "0.5", "--pilot", "x", "-d", "0.1"], "--pilot and --pass-rate"),
    (["--pass-rate", "0.5"], "--difference"),
    (["--pass-rate", "0.5", "-d", "0.1", "--alpha", "1.5"], "--alpha"),
    (["--pass-rate", "0.95", "-d", "0.1"], "--difference"),
    (["--pass-rate", "0.5", "--spread", "0.6", "-d", "0.1"], "--spread"),
    (["--pass-rate", "0.5", "-d", "0.1", "-k", "0"], "--attempts"),
])  # fmt: skip
def test_bad_input_exits_1_naming_the_option(runner: CliRunner, args: list[str], named: str) -> None:
    result = runner.invoke(app, ["plan", *args])
    assert result.exit_code == 1 and named in result.output, result.output
