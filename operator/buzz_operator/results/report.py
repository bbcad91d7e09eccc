"""``buzzctl report``: one self-contained HTML page of a sweep — the summary table, each
condition's statistics with their intervals and its verifier dimensions (compare_report.py),
reward and cost per condition as plotly charts (plotly.js embedded inline, so the file opens
offline and can be mailed), the caveats, and one row per trial linking to its bundle. Of several
sweeps: the comparison first (differences, forest plot, cost vs pass rate), then each sweep.

Pure: the summary document (document.py, with trial rows) in, HTML text out.
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from typing import Any

import plotly.graph_objects as go
from plotly.offline import get_plotlyjs

from .compare_report import behaviour_table, comparison_section, statistics_table

_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:2rem;color:#1d2433}
h1{font-size:1.5rem;margin-bottom:.2rem} .sub{color:#5b6478;margin-top:0}
table{border-collapse:collapse;margin:1rem 0;font-size:.9rem}
th,td{border:1px solid #d8dce6;padding:.3rem .6rem;text-align:right}
th{background:#f2f4f8} td.l,th.l{text-align:left}
.flags{color:#b3261e;font-weight:600} .ok{color:#1e7b34} .notes li{margin:.3rem 0}
.charts{display:grid;grid-template-columns:repeat(2,minmax(0,1fr));gap:1rem} .chart{min-width:0}
.plot{margin:1rem 0} .headline{max-width:60rem} section.sweep{border-top:2px solid #d8dce6;margin-top:2rem}
"""


def _e(value: object) -> str:
    return html.escape(str(value), quote=True)


def _label(row: Mapping[str, Any]) -> str:
    # the stack too: two stacks under one condition hash are two bars, never one
    return f"{row['condition']}@{row['hash']}/{row['stack'] or '-'}"


def _figure_html(figure: go.Figure, div_id: str) -> str:
    figure.update_layout(margin={"l": 50, "r": 20, "t": 50, "b": 80}, height=380, template="plotly_white")
    return figure.to_html(
        full_html=False,
        include_plotlyjs=False,
        div_id=div_id,
        config={"displaylogo": False, "responsive": True},
    )


def reward_chart(rows: Sequence[Mapping[str, Any]], div_id: str = "reward-chart") -> str:
    labels = [_label(r) for r in rows]
    figure = go.Figure()
    figure.add_bar(name="mean reward", x=labels, y=[r["pass_rate"] for r in rows])
    ks = sorted({k for r in rows for k in r["pass_at_k"]}, key=int)
    for k in ks:
        figure.add_bar(name=f"pass@{k}", x=labels, y=[r["pass_at_k"].get(k) for r in rows])
    figure.update_layout(title="Reward per condition", barmode="group", yaxis={"range": [0, 1.05]})
    return _figure_html(figure, div_id)


def cost_chart(rows: Sequence[Mapping[str, Any]], div_id: str = "cost-chart") -> str:
    labels = [_label(r) for r in rows]
    figure = go.Figure()
    figure.add_bar(name="$/trial floor", x=labels, y=[r["cost_usd"]["per_trial"]["floor"] for r in rows])
    figure.add_bar(name="$/trial ceiling", x=labels, y=[r["cost_usd"]["per_trial"]["ceiling"] for r in rows])
    figure.update_layout(title="Cost per trial (USD, floor and ceiling)", barmode="group")
    return _figure_html(figure, div_id)


def _summary_table(rows: Sequence[Mapping[str, Any]]) -> str:
    head = (
        "<tr><th class=l>condition</th><th class=l>hash</th><th class=l>stack</th><th>agents</th><th>n</th>"
        "<th>pass</th>"
        "<th class=l>pass@k</th><th class=l>pass^k</th><th>$/trial</th><th>$ total (floor–ceiling)</th><th>ktok/trial</th>"
        "<th>sec/trial</th><th>infra</th><th>pressure</th><th>retried</th><th class=l>flags</th></tr>"
    )
    body = []
    for r in rows:
        pass_k = " ".join(
            f"@{k}={v:.2f}" for k, v in sorted(r["pass_at_k"].items(), key=lambda kv: int(kv[0]))
        )
        pass_all_k = " ".join(
            f"^{k}={v['estimate']:.2f}"
            for k, v in sorted(r["statistics"]["pass_hat_k"].items(), key=lambda kv: int(kv[0]))
        )
        total = r["cost_usd"]["total"]
        flags = ", ".join(r["flags"])
        body.append(
            f"<tr><td class=l>{_e(r['condition'])}</td><td class=l><code>{_e(r['hash'])}</code></td>"
            f"<td class=l><code>{_e(r['stack'] or '-')}</code></td>"
            f"<td>{r['agents']}</td><td>{r['n']}</td><td>{r['pass_rate']:.3f}</td><td class=l>{_e(pass_k)}</td>"
            f"<td class=l>{_e(pass_all_k or '-')}</td>"
            f"<td>{r['cost_usd']['per_trial']['floor']:.4f}</td>"
            f"<td>{total['floor']:.4f} – {total['ceiling']:.4f}</td>"
            f"<td>{r['tokens']['per_trial'] / 1000:.1f}</td><td>{r['agent_seconds_per_trial']:.1f}</td>"
            f"{_box_cells(r['statistics']['box'])}"
            f"<td class='l {'flags' if flags else 'ok'}'>{_e(flags or 'clean')}</td></tr>"
        )
    return f"<table id=summary>{head}{''.join(body)}</table>"


def _box_cells(box: Mapping[str, Any]) -> str:
    """What the box did, each rate over its 95 % interval (docs/resources.md#infra-noise)."""
    cells = []
    for name in ("infra_rate", "pressure_rate", "retried_rate"):
        figure = box.get(name)
        cells.append("<td>-</td>" if figure is None else
                     f"<td>{figure['estimate']:.2f}<br><small>[{figure['low']:.2f}, {figure['high']:.2f}]</small></td>")
    return "".join(cells)


def _trial_table(trials: Sequence[Mapping[str, Any]]) -> str:
    head = (
        "<tr><th class=l>trial</th><th class=l>condition</th><th class=l>task</th><th>attempt</th>"
        "<th>reward</th><th class=l>outcome</th><th>$ floor</th><th>tokens</th><th>sec</th>"
        "<th class=l>flags</th><th class=l>bundle</th></tr>"
    )
    body = []
    for t in sorted(trials, key=lambda t: (t["condition"], t["task"], t["attempt"] or 0, t["trial"])):
        flags = ", ".join(k for k, v in t["flags"].items() if v)
        body.append(
            f"<tr><td class=l>{_e(t['trial'])}</td><td class=l>{_e(_label(t))}</td>"
            f"<td class=l>{_e(t['task'])}</td><td>{_e(t['attempt'] or '')}</td><td>{t['reward']:.2f}</td>"
            f"<td class=l>{_e(t['outcome'])}</td><td>{t['cost_usd']['floor']:.4f}</td>"
            f"<td>{t['tokens']['input'] + t['tokens']['output']}</td><td>{t['agent_seconds']:.1f}</td>"
            f"<td class='l flags'>{_e(flags)}</td>"
            f'<td class=l><a href="{_e(t["bundle"])}">bundle</a></td></tr>'
        )
    return f"<table id=trials>{head}{''.join(body)}</table>"


def _sweep_body(document: Mapping[str, Any], caveats: Sequence[str], prefix: str = "") -> str:
    """The sections of one sweep; ``prefix`` keeps element ids apart when a page holds several."""
    rows = document["conditions"]
    trials = document.get("trial_rows") or []
    unfinished = document.get("unfinished") or []
    charts = (
        f"<div class=charts><div class=chart>{reward_chart(rows, f'{prefix}reward-chart')}</div>"
        f"<div class=chart>{cost_chart(rows, f'{prefix}cost-chart')}</div></div>"
        if rows
        else "<p>No committed trials yet: nothing to chart.</p>"
    )
    notes = "".join(f"<li>{_e(n)}</li>" for n in caveats)
    pending = (
        f"<p>{len(unfinished)} trial(s) have not committed a result yet: {_e(', '.join(unfinished))}</p>"
        if unfinished
        else ""
    )
    labelled = [(_label(r), r["statistics"]) for r in rows]
    stats = (
        f"<h2>Statistics</h2>{statistics_table(labelled, f'{prefix}statistics')}"
        f"<h3>Per behaviour (verifier dimension)</h3>{behaviour_table(labelled, f'{prefix}behaviours')}"
        if rows
        else ""
    )
    summary = _summary_table(rows).replace("<table id=summary>", f"<table id={prefix}summary>", 1)
    trial_table = _trial_table(trials).replace("<table id=trials>", f"<table id={prefix}trials>", 1)
    return (
        f"<p class=sub>{document['trials']} committed trial(s) from "
        f"<code>{_e(document['store'])}</code></p>{pending}"
        f"<h2>Per condition</h2>{summary}"
        f"{'<ul class=notes>' + notes + '</ul>' if notes else ''}"
        f"{stats}{charts}<h2>Trials</h2>{trial_table}"
    )


def _page(title: str, body: str) -> str:
    return (
        "<!DOCTYPE html><html lang=en><head><meta charset=utf-8>"
        f"<title>{_e(title)}</title><style>{_CSS}</style>"
        f"<script>{get_plotlyjs()}</script></head><body>{body}</body></html>\n"
    )


def render_report(document: Mapping[str, Any], caveats: Sequence[str] = ()) -> str:
    """The page for a summary document built with trial rows (``results_document(with_trials=True)``)."""
    sweep = _e(document["sweep"])
    return _page(f"buzz sweep {document['sweep']}", f"<h1>Sweep {sweep}</h1>{_sweep_body(document, caveats)}")


def render_comparison_report(
    documents: Sequence[Mapping[str, Any]], caveats: Sequence[Sequence[str]], comparison: Mapping[str, Any]
) -> str:
    """The page of several sweeps: the comparison (compare.py's document), then each sweep."""
    names = [str(d["sweep"]) for d in documents]
    sections = "".join(
        f"<section class=sweep id=sweep-{i}><h2>Sweep {_e(d['sweep'])}</h2>{_sweep_body(d, notes, f'sweep-{i}-')}</section>"
        for i, (d, notes) in enumerate(zip(documents, caveats, strict=True), 1)
    )
    return _page(
        f"buzz sweeps {', '.join(names)}",
        f"<h1>Sweeps {_e(' vs '.join(names))}</h1>{comparison_section(comparison)}{sections}",
    )
