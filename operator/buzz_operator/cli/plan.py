"""buzzctl plan — how many tasks × attempts a comparison of two conditions needs before it is
paid for, and the smallest difference a size can detect (results/power.py, docs/statistics.md#planning)."""

from __future__ import annotations

import asyncio
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from buzz_operator.cli.exits import fail
from buzz_operator.cli.options import NamespaceOption
from buzz_operator.cli.output import Format, OutputOption, emit
from buzz_operator.cli.stores import StoreOption
from buzz_operator.cli.sweep_results import load_results_table
from buzz_operator.results.condition_stats import ConditionStats, task_counts
from buzz_operator.results.plan import Rates, plan_document
from buzz_operator.results.power import (
    DEFAULT_SPREAD,
    Design,
    PlanError,
    beta_rates,
    default_spread,
    pilot_rates,
)


async def _pilot(sweep: str, store: str | None, namespace: str) -> Rates:
    loaded = await load_results_table(sweep, store, namespace)
    rows = loaded.table.rows
    if len(rows) != 1:
        fail(f"--pilot: sweep {sweep} holds {len(rows)} condition rows; a pilot is one condition's sweep")
    counts = task_counts(ConditionStats.of(rows[0].trials).scored)
    try:
        rates = pilot_rates([(c.n, c.passed) for c in counts.values()])
    except PlanError as error:
        fail(f"{error} ({sweep})")
    return Rates(rates, "pilot", sweep, len(counts))


def plan(
    difference: Annotated[float | None, typer.Option(
        "--difference", "-d", help="The difference in pass rate to detect (candidate − baseline; "
                                   "negative: the candidate is worse).")] = None,
    pilot: Annotated[str | None, typer.Option(
        "--pilot", help="A sweep of the baseline condition whose per-task pass rates the plan takes.")] = None,
    pass_rate: Annotated[float | None, typer.Option(
        "--pass-rate", help="Without a pilot: the baseline's assumed mean pass rate over tasks.")] = None,
    spread: Annotated[float | None, typer.Option(
        "--spread", help="Without a pilot: the SD of the tasks' pass rates around it "
                         f"[default: {DEFAULT_SPREAD}, less near 0 or 1].", show_default=False)] = None,
    effect_spread: Annotated[float, typer.Option(
        "--effect-spread", help="The SD of the difference from task to task.")] = 0.0,
    alpha: Annotated[float, typer.Option("--alpha", help="Two-sided significance level.")] = 0.05,
    power: Annotated[float, typer.Option("--power", help="Chance of detecting the difference.")] = 0.8,
    tasks: Annotated[int | None, typer.Option(
        "--tasks", help="With --attempts: judge this size (its power and smallest detectable difference); "
                        "with --pilot, the pilot's tasks unless given.")] = None,
    attempts: Annotated[int | None, typer.Option(
        "--attempts", "-k", help="Attempts per task (else a row for each of 1, 2, 3, 5, 10).")] = None,
    output: OutputOption = Format.TABLE,
    store: StoreOption = None,
    namespace: NamespaceOption = "default",
) -> None:
    """Plan a paired comparison (same tasks, two conditions) before paying for it: the tasks ×
    attempts that detect --difference at --power and --alpha, clustered by task as `buzzctl
    compare` tests it; with --tasks and --attempts, the smallest difference that size detects."""
    if pilot is not None and pass_rate is not None:
        fail("--pilot and --pass-rate: give one source of the baseline's pass rates, not both")
    try:
        if pilot is not None:
            rates = asyncio.run(_pilot(pilot, store, namespace))
            if tasks is None and attempts is not None:
                tasks = rates.suite_tasks  # the size of the pilot's suite at the attempts asked
        elif pass_rate is not None:
            if spread is None and 0 <= pass_rate <= 1:
                spread = default_spread(pass_rate)
            rates = Rates(beta_rates(pass_rate, DEFAULT_SPREAD if spread is None else spread), "assumed")
        else:
            fail("--pass-rate or --pilot: the plan needs the baseline's pass rates")
        document = plan_document(rates, Design(alpha, power, effect_spread), difference=difference, tasks=tasks,
                                 attempts=attempts)
    except PlanError as error:
        fail(str(error))
    emit(document, output, table=lambda console: render(console, document))


def render(console: Console, document: dict[str, Any]) -> None:
    design, rates = document["design"], document["rates"]
    source = (f"pilot sweep {rates['sweep']} ({rates['tasks']} tasks)" if rates["source"] == "pilot"
              else "assumed")
    console.print(f"baseline pass rates: {source}, mean {rates['mean']:.3f}, spread {rates['spread']:.3f}; "
                  f"two-sided α {design['alpha']}, power {design['power']}, effect spread {design['effect_spread']}",
                  highlight=False)
    if document["needs"]:
        table = Table(title=f"to detect a difference of {document['difference']:+.3f}", title_justify="left")
        for column in ("attempts", "tasks", "trials per condition", "power", "tasks not tied"):
            table.add_column(column, justify="right")
        for need in document["needs"]:
            out_of_reach = need["tasks"] is None
            table.add_row(
                str(need["attempts"]),
                "out of reach" if out_of_reach else f"{need['tasks']}{' *' if need['beyond_suite'] else ''}",
                "-" if out_of_reach else str(need["trials_per_condition"]),
                "-" if out_of_reach else f"{need['power']:.2f}", f"{need['untied']:.0%}")
        console.print(table)
        if any(n["beyond_suite"] for n in document["needs"]):
            console.print(f"* more tasks than the pilot's suite has ({rates['tasks']})", highlight=False)
    if size := document["size"]:
        found = size["detectable"]

        def shown(value: float | None) -> str:
            return "none the rates leave room for" if value is None else f"{value:+.3f}"

        line = (f"{size['tasks']} tasks × {size['attempts']} attempts detect a difference of at least "
                f"{shown(found['better'])} (better) or {shown(found['worse'])} (worse)")
        if size["power"] is not None:
            line += f"; power for {document['difference']:+.3f}: {size['power']:.2f}"
        console.print(line, highlight=False)
