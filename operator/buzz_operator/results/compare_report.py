"""The statistics and the comparison as HTML sections of the report page (report.py): per
condition with intervals, per behaviour (verifier dimension), and per pair the difference with
its interval and p-value, wins/losses/ties, cost, the per-dimension differences and the two
inline SVG plots (plots.py). Pure: documents in, HTML text out."""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from typing import Any

from .plots import CostPoint, forest_rows, forest_svg, scatter_svg


def _e(value: object) -> str:
    return html.escape(str(value), quote=True)


def _interval(figure: Mapping[str, float] | None, signed: bool = False) -> str:
    if figure is None:
        return "-"
    s = "+" if signed else ""
    return f"{figure['estimate']:{s}.3f} [{figure['low']:{s}.3f}, {figure['high']:{s}.3f}]"


def _money(value: float | None) -> str:
    return "-" if value is None else f"{value:.4f}"


def _range(bounds: Mapping[str, float | None]) -> str:
    return f"{_money(bounds['floor'])} – {_money(bounds['ceiling'])}"


def statistics_table(labelled: Sequence[tuple[str, Mapping[str, Any]]], table_id: str = "statistics") -> str:
    """One row per (label, statistics block): the figures of condition_stats.py."""
    head = (
        "<tr><th class=l>condition</th><th>scored</th><th>tasks</th><th>excluded (broken/infra)</th>"
        "<th>pass rate [95 %]</th><th class=l>pass@k [95 %]</th><th class=l>pass^k [95 %]</th>"
        "<th>$/trial (floor – ceiling)</th>"
        "<th>$/solved task (floor – ceiling)</th><th>ktok/trial</th></tr>"
    )
    body = []
    for label, st in labelled:
        pass_k = "<br>".join(
            f"@{k} {_interval(v)}" for k, v in sorted(st["pass_at_k"].items(), key=lambda kv: int(kv[0]))
        )
        pass_all_k = "<br>".join(
            f"^{k} {_interval(v)}" for k, v in sorted(st["pass_hat_k"].items(), key=lambda kv: int(kv[0]))
        )
        tokens = st["tokens_per_trial"]
        body.append(
            f"<tr><td class=l>{_e(label)}</td><td>{st['scored']}</td><td>{st['tasks']}</td>"
            f"<td>{st['excluded']['broken']} / {st['excluded']['infra']}</td><td>{_interval(st['pass_rate'])}</td>"
            f"<td class=l>{pass_k or '-'}</td><td class=l>{pass_all_k or '-'}</td>"
            f"<td>{_range(st['cost_usd']['per_trial'])}</td>"
            f"<td>{_range(st['cost_usd']['per_solved_task'])}</td>"
            f"<td>{'-' if tokens is None else f'{tokens / 1000:.1f}'}</td></tr>"
        )
    return f"<table id={_e(table_id)}>{head}{''.join(body)}</table>"


def behaviour_table(labelled: Sequence[tuple[str, Mapping[str, Any]]], table_id: str = "behaviours") -> str:
    """One row per verifier dimension, one column per condition: rate [interval] (tasks)."""
    keys = sorted({k for _, st in labelled for k in st["dimensions"]})
    if not keys:
        return "<p>No verifier dimensions: these tasks grade a single reward.</p>"
    head = (
        "<tr><th class=l>dimension</th>" + "".join(f"<th>{_e(label)}</th>" for label, _ in labelled) + "</tr>"
    )
    body = []
    for key in keys:
        cells = []
        for _, st in labelled:
            d = st["dimensions"].get(key)
            cells.append("<td>-</td>" if d is None else f"<td>{_interval(d)} ({d['tasks']})</td>")
        body.append(f"<tr><td class=l><code>{_e(key)}</code></td>{''.join(cells)}</tr>")
    return f"<table id={_e(table_id)}>{head}{''.join(body)}</table>"


def _per_task(pair: Mapping[str, Any]) -> str:
    head = "<tr><th class=l>task</th><th>baseline passed/n</th><th>candidate passed/n</th><th>difference</th><th class=l>verdict</th></tr>"
    body = "".join(
        f"<tr><td class=l>{_e(t['task'])}</td><td>{t['baseline']['passed']}/{t['baseline']['n']}</td>"
        f"<td>{t['candidate']['passed']}/{t['candidate']['n']}</td><td>{t['difference']:+.3f}</td>"
        f"<td class=l>{_e(t['verdict'])}</td></tr>"
        for t in pair["per_task"]
    )
    return f"<table class=per-task>{head}{body}</table>"


def _dimensions(pair: Mapping[str, Any]) -> str:
    head = (
        "<tr><th class=l>dimension</th><th>tasks</th><th>baseline</th><th>candidate</th>"
        "<th>difference [95 %]</th><th>p</th><th>won/lost/tied</th></tr>"
    )
    body = "".join(
        f"<tr><td class=l><code>{_e(d['dimension'])}</code></td><td>{d['tasks']}</td><td>{d['baseline']:.3f}</td>"
        f"<td>{d['candidate']:.3f}</td><td>{_interval(d['difference'], signed=True)}</td><td>{d['p_value']:.3g}</td>"
        f"<td>{d['wins']}/{d['losses']}/{d['ties']}</td></tr>"
        for d in pair["dimensions"]
    )
    return f"<table class=dimension-differences>{head}{body}</table>"


def pair_section(pair: Mapping[str, Any], index: int) -> str:
    p, cost = pair["pass_rate"], pair["cost_usd"]
    warnings = "".join(f"<li class=flags>{_e(w)}</li>" for w in pair["warnings"])
    unpaired = pair["unpaired"]
    left_out = (
        f"<p>Not paired: only in {_e(pair['baseline'])}: {_e(', '.join(unpaired['baseline_only']) or '-')}; "
        f"only in {_e(pair['candidate'])}: {_e(', '.join(unpaired['candidate_only']) or '-')}</p>"
        if unpaired["baseline_only"] or unpaired["candidate_only"]
        else ""
    )
    title = f"{pair['candidate']} − {pair['baseline']}"
    return (
        f"<section class=pair id=pair-{index}><h3>{_e(pair['candidate'])} vs {_e(pair['baseline'])}</h3>"
        f"{'<ul class=notes>' + warnings + '</ul>' if warnings else ''}"
        f"<p class=headline>Over {p['tasks']} paired task(s) the pass rate goes from {p['baseline']:.3f} to "
        f"{p['candidate']:.3f}: difference <b>{_interval(p['difference'], signed=True)}</b>, "
        f"p = {p['p_value']:.4g} ({_e(p['test'])}); tasks won/lost/tied: {p['wins']}/{p['losses']}/{p['ties']}. "
        f"Cost per trial {_money(cost['per_trial']['floor']['baseline'])} → "
        f"{_money(cost['per_trial']['floor']['candidate'])} USD (floor), per solved task "
        f"{_money(cost['per_solved_task']['floor']['baseline'])} → "
        f"{_money(cost['per_solved_task']['floor']['candidate'])} USD.</p>{left_out}"
        f"<div class=plot>{forest_svg(forest_rows(pair), f'{title}: differences, 95 % intervals', f'forest-{index}')}</div>"
        f"<h4>Per behaviour (verifier dimension), worst first</h4>{_dimensions(pair)}"
        f"<h4>Per task</h4>{_per_task(pair)}</section>"
    )


def front_table(front: Sequence[Mapping[str, Any]]) -> str:
    """The front as a table: each condition's pass rate and metered cost per trial, whether it
    is on the front by the floor and by the ceiling, and what dominates it (front.py)."""
    head = ("<tr><th class=l>condition</th><th>pass rate [95 %]</th><th>$/trial (floor – ceiling)</th>"
            "<th>on the front (floor / ceiling)</th><th class=l>dominated by</th></tr>")
    body = []
    for f in front:
        on = f["on_front"]
        dominated = ", ".join(f["dominated_by"]) or "-"
        if f["within_interval"]:
            dominated += " (within its interval)"
        body.append(
            f"<tr><td class=l>{_e(f['sweep'])}</td><td>{_interval(f['pass_rate'])}</td>"
            f"<td>{_range(f['cost_usd_per_trial'])}</td>"
            f"<td>{'yes' if on['floor'] else 'no'} / {'yes' if on['ceiling'] else 'no'}</td>"
            f"<td class=l>{_e(dominated)}</td></tr>")
    return f"<table id=front>{head}{''.join(body)}</table>"


def comparison_section(document: Mapping[str, Any]) -> str:
    """The comparison document (compare.py) as the page's comparison section."""
    labelled = [(s["sweep"], s["statistics"]) for s in document["sweeps"]]
    points = [
        CostPoint(f["sweep"], f["cost_usd_per_trial"]["floor"], **f["pass_rate"],
                  ceiling=f["cost_usd_per_trial"]["ceiling"], on_front=f["on_front"]["floor"])
        for f in document["front"]
    ]
    r = document["resampling"]
    return (
        "<section id=comparison><h2>Comparison</h2>"
        f"<p class=sub>Baseline {_e(document['baseline'])}; {round(r['level'] * 100)} % intervals from a "
        f"{_e(r['method'])} ({r['resamples']} resamples, seed {r['seed']}); see docs/statistics.md.</p>"
        f"<h3>Per condition</h3>{statistics_table(labelled, 'comparison-statistics')}"
        f"<h3>The cost–accuracy front</h3>"
        f"<div class=plot>{scatter_svg(points, 'Cost per trial vs pass rate (95 % interval): the front')}</div>"
        f"{front_table(document['front'])}"
        f"<h3>Per behaviour</h3>{behaviour_table(labelled, 'comparison-behaviours')}"
        + "".join(pair_section(pair, i) for i, pair in enumerate(document["comparisons"], 1))
        + "</section>"
    )
