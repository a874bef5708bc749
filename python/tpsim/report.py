"""The HTML report: one self-contained page (figures embedded) with the scenario as run, the
tables with confidence intervals, every figure, the metric definitions, the tpsim version and
the seeds -- enough for a reader to reproduce the study. All user-supplied text is escaped."""

from __future__ import annotations

import base64
import html
import json
import math
from pathlib import Path
from typing import Any, Optional

import polars as pl

from .api import build_id
from .metrics import HEADLINE_FLOW_METRICS, HEADLINE_NETWORK_METRICS, METRICS
from .plot import combine_hue, default_axes, metric_figure, save, timeseries_figure, with_flow_direction
from .results import Results, atomic_write_text


def make_figures(res: Results, figdir: Path) -> list[tuple[str, Path]]:
    """Draws the report's figures into ``figdir`` (PNG + SVG each); returns (caption, PNG)."""
    figs: list[tuple[str, Path]] = []
    flows = with_flow_direction(res.flows)
    x, hue = default_axes(flows, res.param_keys)
    flows, hue = combine_hue(flows, x, hue, res.param_keys)
    for m in HEADLINE_FLOW_METRICS:
        if m in flows.columns and flows[m].null_count() < flows.height:
            fig = metric_figure(flows, m, x, hue, connect=x in res.param_keys)
            figs.append((f"{m} against {x}" + (f", one line per {hue}" if hue else ""), save(fig, figdir / f"{m}")[0]))
    if res.param_keys:
        net, net_hue = combine_hue(res.network, x, None, res.param_keys)
        for m in HEADLINE_NETWORK_METRICS:
            # Only what the scenario produces: no routing figures for static routes, no
            # energy figures without an energy model, no figures of drops that never happen.
            if m not in net.columns or net[m].null_count() == net.height or not (net[m].fill_null(0) != 0).any():
                if m != "mac_frames":
                    continue
            fig = metric_figure(net, m, x, net_hue)
            figs.append((f"{m} against {x}", save(fig, figdir / f"network-{m}")[0]))
    ts = res.timeseries
    if ts.height:
        for series in ("goodput_kbps", "delay_mean_s", "queue_packets", "cwnd_bytes"):
            have = ts.filter((pl.col("series") == series) & pl.col("value").is_not_null())
            if have.height:
                # The first sweep point that has the series (cwnd only exists for TCP), run 0.
                point = int(have["point"].min())
                run = int(have.filter(pl.col("point") == point)["run"].min())
                fig = timeseries_figure(ts, series, run=run, point=point)
                figs.append((f"{series} over time, point {point}, run {run}", save(fig, figdir / f"timeseries-{series}")[0]))
    return figs


def _fmt(v: Any) -> str:
    if v is None:
        return ""
    if isinstance(v, float):
        if math.isnan(v):
            return "NaN"
        return f"{v:.6g}"
    return str(v)


def _table(df: pl.DataFrame, cls: str = "") -> str:
    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in df.columns)
    rows = "".join("<tr>" + "".join(f"<td>{html.escape(_fmt(v))}</td>" for v in row) + "</tr>" for row in df.iter_rows())
    return f'<table class="{cls}"><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>'


def _summary_view(summary: pl.DataFrame, table: str, metrics: list[str], keys: list[str]) -> pl.DataFrame:
    sub = summary.filter((pl.col("table") == table) & pl.col("metric").is_in(metrics))
    if sub.height == 0:
        return sub
    cols = keys + (["flow", "direction"] if table == "flows" else []) + ["metric", "n", "mean", "ci95_low", "ci95_high"]
    return sub.select([c for c in cols if c in sub.columns])


CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;color:#222}
h1{margin-bottom:.2em} .meta{color:#555} table{border-collapse:collapse;margin:1em 0;font-size:.9em}
th,td{border:1px solid #ccc;padding:.25em .6em;text-align:right} th{background:#f3f3f3}
td:first-child,th:first-child{text-align:left} figure{display:inline-block;margin:1em;vertical-align:top}
figure img{max-width:520px;border:1px solid #ddd} figcaption{font-size:.85em;color:#444;max-width:520px}
pre{background:#f7f7f7;padding:1em;overflow:auto;font-size:.85em} .defs td{text-align:left}
"""


def write_report(res: Results, outdir: Path, command: Optional[str] = None) -> Path:
    """Writes ``outdir/report.html`` and its figures under ``outdir/figures/``.

    Returns:
        The report's path.
    """
    outdir = Path(outdir)
    figs = make_figures(res, outdir / "figures")
    base = res.base
    name = base.name if base is not None else "tpsim run"
    desc = (base.resolved["simulation"].get("description") or "") if base is not None else ""
    keys = ["point", *res.param_keys]
    summary = res.summary()
    seeds = sorted(set(res.flows["seed"].to_list())) if res.flows.height else []
    runs = res.flows["run"].n_unique() if res.flows.height else 0
    parts = [
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>",
        f"<title>{html.escape(name)} - tpsim report</title><style>{CSS}</style></head><body>",
        f"<h1>{html.escape(name)}</h1>",
        f"<p>{html.escape(desc)}</p>" if desc else "",
        "<p class='meta'>",
        f"tpsim {html.escape(build_id())} &middot; master seed {html.escape(', '.join(map(str, seeds)))} &middot; ",
        f"{runs} replication(s) per point, replication r uses random streams (seed, r) &middot; {len(res.points) or 1} sweep point(s)",
        "</p>",
    ]
    if command:
        parts.append(f"<p>Reproduce with:</p><pre>{html.escape(command)}</pre>")
    if res.points and res.param_keys:
        pts = pl.DataFrame([{"point": p.index, **{k: json.dumps(v) if not isinstance(v, str) else v for k, v in p.params.items()}} for p in res.points])
        parts += ["<h2>Sweep points</h2>", _table(pts)]
    parts.append("<h2>Results (mean and 95% confidence interval over replications)</h2>")
    fv = _summary_view(summary, "flows", HEADLINE_FLOW_METRICS + ["tx_packets", "rx_packets"], keys)
    if fv.height:
        parts += ["<h3>Flows</h3>", _table(fv)]
    nv = _summary_view(summary, "network", ["mac_frames", "mac_load", "routing_packets", "normalized_routing_load", "drops_queue", "drops_link_error", "jain_fairness"], keys)
    if nv.height:
        parts += ["<h3>Network</h3>", _table(nv)]
    parts.append("<p>All metrics of every run: <code>flows.csv</code>, <code>network.csv</code>; all summaries: <code>summary.csv</code>.</p>")
    parts.append("<h2>Figures</h2>")
    for caption, png in figs:
        data = base64.b64encode(png.read_bytes()).decode("ascii")
        parts.append(f"<figure><img src='data:image/png;base64,{data}' alt='{html.escape(caption, quote=True)}'><figcaption>{html.escape(caption)}</figcaption></figure>")
    parts.append("<h2>Metric definitions</h2>")
    defs = "".join(f"<tr><td><code>{html.escape(k)}</code></td><td>{html.escape(u)}</td><td>{html.escape(d)}</td></tr>" for k, (u, d) in METRICS.items())
    parts.append(f"<table class='defs'><thead><tr><th>metric</th><th>unit</th><th>definition</th></tr></thead><tbody>{defs}</tbody></table>")
    if base is not None:
        parts += [
            "<h2>Scenario as written</h2>",
            f"<pre>{html.escape(base.text)}</pre>",
            "<h2>Scenario with all defaults resolved</h2>",
            "<p>Durations in ns, rates in bit/s, sizes in bytes.</p>",
            f"<pre>{html.escape(json.dumps(base.resolved, indent=2, sort_keys=True))}</pre>",
        ]
    parts.append("</body></html>\n")
    path = outdir / "report.html"
    atomic_write_text(path, "".join(parts))
    return path
