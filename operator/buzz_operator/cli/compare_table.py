"""The comparison for people (``buzzctl compare``, the end of ``make demo``): each sweep's
figures with their intervals, each verifier dimension's rate per sweep, then each pair — the
difference in pass rate with its interval and p-value, wins/losses/ties by task, the cost
difference — and the per-dimension differences, worst first."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rich import box
from rich.console import Console
from rich.table import Table


def interval(figure: Mapping[str, float] | None, signed: bool = False) -> str:
    if figure is None:
        return "-"
    sign = "+" if signed else ""
    return f"{figure['estimate']:{sign}.2f} [{figure['low']:{sign}.2f}, {figure['high']:{sign}.2f}]"


def money(value: float | None, digits: int = 4) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def money_range(bounds: Mapping[str, float | None]) -> str:
    floor, ceiling = money(bounds["floor"]), money(bounds["ceiling"])
    return floor if floor == ceiling else f"{floor}–{ceiling}"


def signed_money(value: float | None) -> str:
    return "-" if value is None else f"{value:+.4f}"


def sweeps_table(document: Mapping[str, Any]) -> Table:
    level = round(document["resampling"]["level"] * 100)
    table = Table(
        box=box.SIMPLE_HEAD,
        title=f"per condition ({level} % intervals, {document['resampling']['resamples']} "
        f"resamples, seed {document['resampling']['seed']})",
        title_justify="left",
    )
    for column in (
        "sweep",
        "condition",
        "stack",
        "n (tasks)",
        "excl b/i",
        "pass rate",
        "pass@k",
        "pass^k",
        "$/trial",
        "$/solved task",
        "ktok/trial",
    ):
        table.add_column(column, justify="left" if column in ("sweep", "condition", "stack") else "right")
    for s in document["sweeps"]:
        st = s["statistics"]
        top = max(st["pass_at_k"], key=int, default=None)
        tokens = st["tokens_per_trial"]
        table.add_row(
            s["sweep"],
            s["condition"][:26],
            s["stack"] or "-",
            f"{st['scored']} ({st['tasks']})",
            f"{st['excluded']['broken']}/{st['excluded']['infra']}",
            interval(st["pass_rate"]),
            f"@{top} {interval(st['pass_at_k'][top])}" if top else "-",
            f"^{top} {interval(st['pass_hat_k'][top])}" if top else "-",
            money_range(st["cost_usd"]["per_trial"]),
            money_range(st["cost_usd"]["per_solved_task"]),
            "-" if tokens is None else f"{tokens / 1000:.1f}",
        )
    return table


def behaviour_table(document: Mapping[str, Any]) -> Table:
    """One row per verifier dimension, one column per sweep: the rate across the tasks grading it."""
    table = Table(
        box=box.SIMPLE_HEAD,
        title="per behaviour (verifier dimension: rate [95 % interval], tasks)",
        title_justify="left",
    )
    table.add_column("dimension")
    for s in document["sweeps"]:
        table.add_column(s["sweep"], justify="right")
    keys = sorted({k for s in document["sweeps"] for k in s["statistics"]["dimensions"]})
    for key in keys:
        cells = []
        for s in document["sweeps"]:
            d = s["statistics"]["dimensions"].get(key)
            cells.append("-" if d is None else f"{interval(d)} ({d['tasks']})")
        table.add_row(key, *cells)
    return table


def pair_lines(pair: Mapping[str, Any]) -> list[str]:
    p = pair["pass_rate"]
    cost = pair["cost_usd"]
    lines = [
        f"{pair['candidate']} vs {pair['baseline']} over {p['tasks']} paired task(s): pass rate "
        f"{p['baseline']:.2f} → {p['candidate']:.2f}, difference {interval(p['difference'], signed=True)}",
        f"  p = {p['p_value']:.4g} (exact sign-flip over per-task differences); tasks won/lost/tied by "
        f"{pair['candidate']}: {p['wins']}/{p['losses']}/{p['ties']}",
        f"  $/trial {signed_money(cost['per_trial']['floor']['difference'])} (ceiling "
        f"{signed_money(cost['per_trial']['ceiling']['difference'])}); $/solved task "
        f"{money(cost['per_solved_task']['floor']['baseline'])} → {money(cost['per_solved_task']['floor']['candidate'])}",
    ]
    unpaired = pair["unpaired"]
    if unpaired["baseline_only"] or unpaired["candidate_only"]:
        lines.append(
            f"  not paired: only in {pair['baseline']}: {', '.join(unpaired['baseline_only']) or '-'}; "
            f"only in {pair['candidate']}: {', '.join(unpaired['candidate_only']) or '-'}"
        )
    return lines


def dimension_table(pair: Mapping[str, Any]) -> Table:
    table = Table(
        box=box.SIMPLE_HEAD,
        title=f"per dimension: {pair['candidate']} − {pair['baseline']} (worst first)",
        title_justify="left",
    )
    for column in ("dimension", "tasks", "baseline", "candidate", "difference [95 %]", "p", "won/lost/tied"):
        table.add_column(column, justify="left" if column == "dimension" else "right")
    for d in pair["dimensions"]:
        table.add_row(
            d["dimension"],
            str(d["tasks"]),
            f"{d['baseline']:.2f}",
            f"{d['candidate']:.2f}",
            interval(d["difference"], signed=True),
            f"{d['p_value']:.3g}",
            f"{d['wins']}/{d['losses']}/{d['ties']}",
        )
    return table


def render(console: Console, document: Mapping[str, Any]) -> None:
    console.print(sweeps_table(document))
    if any(s["statistics"]["dimensions"] for s in document["sweeps"]):
        console.print(behaviour_table(document))
    for pair in document["comparisons"]:
        for warning in pair["warnings"]:
            console.print(warning, style="yellow", highlight=False)
        for line in pair_lines(pair):
            console.print(line, highlight=False)
        if pair["dimensions"]:
            console.print(dimension_table(pair))
