"""The results table for people: the seed's comparison table (docs/failures.md#summaries) as a rich table, its caveats,
the unfinished trials and, with --failures, the zero-scoring trials with their bundles."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.console import Console
from rich.table import Table

from buzz_operator.results import ResultsTable, caveats


def _pass_k(row: dict[str, Any]) -> str:
    return (
        " ".join(f"@{k}={v:.2f}" for k, v in sorted(row["pass_at_k"].items(), key=lambda kv: int(kv[0])))
        or "-"
    )


def _pass_all_k(row: dict[str, Any]) -> str:
    """pass^k at the largest k, over its interval (docs/statistics.md#the-estimands): the
    reliability figure, one k so the table stays as narrow as the seed's."""
    figures = row["statistics"]["pass_hat_k"]
    if not figures:
        return "-"
    k = max(figures, key=int)
    return f"^{k}={figures[k]['estimate']:.2f}\n{_interval(figures[k])}"


def render(console: Console, results: ResultsTable, document: dict[str, Any]) -> None:
    table = Table(title=f"sweep {results.sweep} — per condition", title_justify="left")
    for column, justify in (
        ("condition", "left"), ("hash", "left"), ("stack", "left"), ("ag", "right"), ("n", "right"), ("pass", "right"),
        ("pass@k", "left"), ("pass^k", "left"), ("$/trial", "right"), ("$ total", "right"), ("ktok", "right"),
        ("sec", "right"), ("flags", "left"),
    ):  # fmt: skip
        table.add_column(column, justify=justify)  # type: ignore[arg-type]
    for row in document["conditions"]:
        per, total = row["cost_usd"]["per_trial"], row["cost_usd"]["total"]
        table.add_row(
            row["condition"][:26],
            row["hash"],
            row["stack"] or "-",
            str(row["agents"]),
            str(row["n"]),
            # the interval under the figure, so the table is no wider than the seed's
            f"{row['pass_rate']:.3f}\n{_interval(row['statistics']['pass_rate'])}",
            _pass_k(row),
            _pass_all_k(row),
            _range(per["floor"], per["ceiling"], 4),
            _range(total["floor"], total["ceiling"], 2),
            f"{row['tokens']['per_trial'] / 1000:.1f}",
            f"{row['agent_seconds_per_trial']:.1f}",
            ", ".join(row["flags"]) or "-",
        )
    if not document["conditions"]:
        console.print(f"sweep {results.sweep}: no committed trials yet")
    else:
        console.print(table)
        render_box(console, results.sweep, document["conditions"])
    for note in caveats(results.rows):
        console.print(note, style="yellow", highlight=False)
    if results.unfinished:
        console.print(
            f"{len(results.unfinished)} trial(s) not committed yet (no result.json)", highlight=False
        )
    if results.skipped:
        console.print(f"{len(results.skipped)} trial dir(s) skipped: not Buzz trials", highlight=False)
    if "failures" in document:
        render_failures(console, document["failures"])


def _interval(figure: dict[str, float] | None) -> str:
    """The pass rate's 95 % interval (docs/statistics.md); '' when nothing was scored."""
    return "" if figure is None else f"[{figure['low']:.2f}, {figure['high']:.2f}]"


def render_box(console: Console, sweep: str, rows: Sequence[dict[str, Any]]) -> None:
    """What the box did to each condition's trials, every committed trial counted, scored or not
    (docs/resources.md#infra-noise): its own table, so the seed's stays as wide as the seed's."""
    table = Table(title=f"sweep {sweep} — the box", title_justify="left")
    for column in ("condition", "hash", "stack", "trials", "infra", "pressure", "retried", "failed tries"):
        table.add_column(column, justify="left" if column in ("condition", "hash", "stack") else "right")
    for row in rows:
        box = row["statistics"]["box"]
        table.add_row(row["condition"][:26], row["hash"], row["stack"] or "-", str(box["trials"]),
                      _rate(box["infra_rate"]), _rate(box["pressure_rate"]), _rate(box["retried_rate"]),
                      str(box["failed_tries"]))
    console.print(table)


def _rate(figure: dict[str, float] | None) -> str:
    """A box rate over its interval, as the pass rate is shown; '-' with no committed trial."""
    return "-" if figure is None else f"{figure['estimate']:.2f}\n{_interval(figure)}"


def _range(floor: float, ceiling: float, digits: int) -> str:
    if round(floor, digits) == round(ceiling, digits):
        return f"{floor:.{digits}f}"
    return f"{floor:.{digits}f}–{ceiling:.{digits}f}"


def render_failures(console: Console, failures: Sequence[dict[str, Any]]) -> None:
    if not failures:
        console.print("no zero-scoring trials")
        return
    table = Table(title="zero-scoring trials", title_justify="left")
    for column in ("condition", "task", "attempt", "outcome", "reason", "bundle"):
        table.add_column(column, overflow="fold")
    for f in failures:
        table.add_row(
            f["condition"], f["task"], str(f["attempt"] or ""), f["outcome"], f["reason"], f["bundle"]
        )
    console.print(table)
