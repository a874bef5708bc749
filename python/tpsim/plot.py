"""Figures (matplotlib) for papers: metrics against swept parameters with 95 % confidence
intervals, and time series of one run.

* Axis labels come from the metric registry (``goodput (kbit/s)``, ``mean end-to-end delay
  (ms)``) and from the swept keys (``node speed (m/s)``); swept values with units are numbers
  on the axis.
* A numeric x gives lines (markers offset where their intervals overlap); a categorical x
  gives dodged bars with intervals.
* Flows are grouped by role (``main``: the scenario's own flows; ``background``: the random
  ``[background]`` flows): roles are never averaged together (a facet per role).
* Many series are capped: the largest few by mean are named, the rest drawn in grey.
* Every figure records what it shows (:class:`FigureInfo`: labels, x values, the
  aggregation, a caption) in ``fig.tpsim``.
* Publication output: column-width sizes (3.5 in; 7.16 in for facets), the Okabe–Ito
  colour-blind-safe palette with distinct markers and dashes, vector PDF with embedded
  TrueType (Type 42) fonts, SVG, and PNG for screens.
"""

from __future__ import annotations

import math
import warnings
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Iterable, Optional, Sequence, Union

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import polars as pl  # noqa: E402

from .labels import axis_for, fmt_number, key_label, key_name, metric_display, value_text  # noqa: E402
from .metrics import label  # noqa: E402,F401  (re-exported for older callers)
from .results import FLOW_KEYS, mean_ci  # noqa: E402

#: Okabe & Ito (2008) colour-blind-safe palette (blue, vermillion, bluish green, reddish
#: purple, orange, sky blue, black, yellow).
OKABE_ITO = ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000", "#F0E442"]
MARKERS = ["o", "s", "^", "D", "v", "P", "X", "*"]
DASHES = ["-", "--", "-.", ":"]
#: Single-column and double-column widths of two-column journals (IEEE, ACM), inches.
COLUMN_WIDTH_IN = 3.5
DOUBLE_WIDTH_IN = 7.16
PANEL_HEIGHT_IN = 2.4
#: Resolution of PNG output (screens and the report).
PNG_DPI = 200
#: Series named in a legend; more are drawn in grey as "other".
MAX_SERIES = 8
#: File formats :func:`save` writes.
FORMATS = ("png", "svg", "pdf")

#: matplotlib settings of every tpsim figure: TrueType (Type 42) fonts embedded in PDF and
#: PostScript, small print sizes, the palette.
STYLE: dict[str, Any] = {
    "pdf.fonttype": 42,
    "ps.fonttype": 42,
    "font.size": 8,
    "axes.titlesize": 8,
    "axes.labelsize": 8,
    "xtick.labelsize": 7,
    "ytick.labelsize": 7,
    "legend.fontsize": 7,
    "legend.title_fontsize": 7,
    "lines.linewidth": 1.2,
    "lines.markersize": 4,
    "errorbar.capsize": 2,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "grid.linewidth": 0.5,
    "axes.prop_cycle": matplotlib.cycler(color=OKABE_ITO),
    "savefig.dpi": PNG_DPI,
    "figure.dpi": 100,
    "svg.hashsalt": "tpsim",
}


@dataclass
class FigureInfo:
    """What a figure shows, recorded when it is drawn (``fig.tpsim``).

    Attributes:
        kind: ``line``, ``bar`` or ``timeseries``.
        metric: the metric or series drawn.
        title, xlabel, ylabel: as drawn.
        x: the x column (``time_s`` for a time series).
        x_numeric: whether x is a numeric axis.
        x_values: the x values in drawing order, as tick text (numbers without units).
        x_positions: their positions on a numeric axis (``None`` for categories).
        hue: the columns that tell the series apart.
        series: the legend entries.
        facet: the facet column (``None`` without facets); ``facets``: the panels' titles.
        aggregation: how rows become a value (per flow, network-wide, one run).
        caption: a sentence for the report.
        scale: the factor the metric's values were multiplied by (s -> ms: 1000).
        name: file stem (set by the report).
        colors: each legend entry's colour (``series`` order; grey for "other").
    """

    kind: str
    metric: str
    title: str
    xlabel: str
    ylabel: str
    x: str
    x_numeric: bool
    x_values: list = field(default_factory=list)
    x_positions: list = field(default_factory=list)
    hue: list = field(default_factory=list)
    series: list = field(default_factory=list)
    facet: Optional[str] = None
    facets: list = field(default_factory=list)
    aggregation: str = ""
    caption: str = ""
    scale: float = 1.0
    name: str = ""
    colors: list = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _style():
    return plt.rc_context(STYLE)


@contextmanager
def _quiet():
    """Library warnings (layout, fonts) are tpsim's business, not the user's."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def param_columns(df: pl.DataFrame) -> list[str]:
    """The swept keys of a tpsim table: the columns between ``point`` and ``run``."""
    cols = df.columns
    if "point" in cols and "run" in cols and cols.index("point") < cols.index("run"):
        return cols[cols.index("point") + 1 : cols.index("run")]
    return []


def with_flow_direction(df: pl.DataFrame) -> pl.DataFrame:
    """Adds a ``flow_direction`` column ("0 fwd") for grouping."""
    if "flow" not in df.columns or "flow_direction" in df.columns:
        return df
    return df.with_columns((pl.col("flow").cast(pl.Utf8) + " " + pl.col("direction")).alias("flow_direction"))


def _as_list(cols: Union[None, str, Sequence[str]]) -> list[str]:
    if cols is None:
        return []
    if isinstance(cols, str):
        return [cols]
    return list(cols)


def _part_text(col: str, value: Any, name: Optional[str] = None) -> str:
    """One hue part of a legend entry: directions as ``flow 0 fwd``, roles as ``main flows``,
    numbers with their name (``background flows = 8``), categories by value (``udp``) or,
    given a ``name``, as ``transport = udp``."""
    if col == "flow_direction":
        return f"flow {value}"
    if col == "role":
        return f"{value} flows"
    ax = axis_for([value])
    if ax.numeric:
        return f"{name or key_name(col)} = {ax.ticklabels[0]}" + (f" {ax.unit}" if ax.unit else "")
    return f"{name} = {value_text(value)}" if name else value_text(value)


def param_text(key: str, value: Any) -> str:
    """A swept key's value for a title: ``node speed = 20 m/s``, ``transport = tcp``."""
    return _part_text(key, value, key_name(key))


def series_label(cols: Sequence[str], values: Sequence[Any]) -> str:
    """A legend entry for one combination of hue values. With several hue columns every part
    is named, and a swept key of one flow that shares its name with a column
    (``flows.0.transport`` and each flow's ``transport``) names its flow."""
    if len(cols) <= 1:
        return ", ".join(_part_text(c, v) for c, v in zip(cols, values))
    names = [key_name(c) for c in cols]
    names = [key_name(c, flow_index=True) if names.count(n) > 1 else n for c, n in zip(cols, names)]
    return ", ".join(_part_text(c, v, n) for c, v, n in zip(cols, values, names))


def _facet_title(col: str, value: Any) -> str:
    if col == "role":
        return f"{value} flows"
    return f"{key_name(col)} = {value_text(value)}"


def metric_points(df: pl.DataFrame, metric: str, x: str, hue: Union[None, str, Sequence[str]]) -> dict[Any, list[tuple[Any, float, float, float, int]]]:
    """For each hue value (a tuple for several hue columns): ``[(x, mean, ci95 low, ci95
    high, n runs)]`` in order of first appearance of x (the interval of the summary,
    :func:`tpsim.results.mean_ci`; the mean itself with one run). Rows of one run with the
    same (x, hue) (several flows) are averaged first, then the runs give the mean and the
    interval."""
    hues = _as_list(hue)
    keys = [x] + hues + ["run"]
    sub = df.filter(pl.col(metric).is_not_null())
    if sub.schema[metric] in (pl.Float32, pl.Float64):
        sub = sub.filter(pl.col(metric).is_finite())
    per_run = sub.group_by(keys, maintain_order=True).agg(pl.col(metric).cast(pl.Float64).mean())
    out: dict[Any, list] = {}
    xs = list(dict.fromkeys(df[x].to_list()))
    hue_vals = list(dict.fromkeys(df.select(hues).iter_rows())) if hues else [None]
    for h in hue_vals:
        cond = pl.lit(True)
        for c, v in zip(hues, h or ()):
            cond = cond & (pl.col(c).is_null() if v is None else pl.col(c) == v)
        part = per_run.filter(cond)
        line = []
        for xv in xs:
            vals = part.filter(pl.col(x).is_null() if xv is None else pl.col(x) == xv)[metric].to_list()
            if vals:
                m, lo, hi = mean_ci(metric, vals)
                line.append((xv, m, m if lo is None else lo, m if hi is None else hi, len(vals)))
        key = (h[0] if len(h) == 1 else h) if h is not None else None
        out[key] = line
    return out


def _aggregation(df: pl.DataFrame, metric: str, x: str, hues: list[str], facet: Optional[str], n_runs: int) -> str:
    over_runs = (f"mean and 95 % CI over {n_runs} runs" if n_runs > 1 else "one run, no interval")
    if "flow" not in df.columns:
        return f"network-wide value of each run; {over_runs}"
    used = {x, facet, *hues}
    if "flow_direction" in used or ("flow" in used and "direction" in used):
        return f"per flow direction; {over_runs}"
    sub = df.filter(pl.col(metric).is_not_null())
    if sub.height == 0:
        return f"per flow direction; {over_runs}"
    ident = [c for c in ("point", "run") if c in sub.columns]
    by_role = sub.group_by(ident + (["role"] if "role" in sub.columns else []), maintain_order=True).len()
    if "role" in sub.columns and sub["role"].n_unique() == 1:
        counts = by_role["len"]
        lo, hi = int(counts.min()), int(counts.max())
        n = str(lo) if lo == hi else f"{lo}–{hi}"
        if n == "1":
            return f"per flow: the {sub['role'][0]} flow direction of each run; {over_runs}"
        return f"per flow: each run's mean over its {n} {sub['role'][0]} flow directions; {over_runs}"
    if "role" in sub.columns:
        parts = []
        for role in dict.fromkeys(sub["role"].to_list()):
            counts = by_role.filter(pl.col("role") == role)["len"]
            lo, hi = int(counts.min()), int(counts.max())
            n = str(lo) if lo == hi else f"{lo}–{hi}"
            parts.append(f"{n} {role}")
        what = " / ".join(parts)
        return f"per flow: each run's mean over its flow directions of one role ({what}), roles never mixed; {over_runs}"
    counts = by_role["len"]
    return f"per flow: each run's mean over its {int(counts.max())} flow directions; {over_runs}"


def _overlap(lines: list[list[tuple]], span: float) -> bool:
    """Whether two series have overlapping intervals (or means within 2 % of the y span) at
    the same x: their markers would hide each other."""
    at: dict[Any, list[tuple[float, float]]] = {}
    for pts in lines:
        for p in pts:
            at.setdefault(p[0], []).append((p[2], p[3]))
    tol = 0.02 * span
    for ivs in at.values():
        ivs.sort()
        for (a_lo, a_hi), (b_lo, b_hi) in zip(ivs, ivs[1:]):
            if b_lo <= a_hi + tol:
                return True
    return False


def metric_figure(
    df: pl.DataFrame,
    metric: str,
    x: str,
    hue: Union[None, str, Sequence[str]] = None,
    title: Optional[str] = None,
    connect: bool = True,
    *,
    kind: str = "auto",
    facet: Optional[str] = None,
    xlabel: Optional[str] = None,
    ylabel: Optional[str] = None,
    max_series: int = MAX_SERIES,
    params: Optional[Sequence[str]] = None,
):
    """The metric (mean over runs, 95 % CI) against ``x``, one series per ``hue`` value
    (a column or a list of columns), one panel per ``facet`` value. ``df`` is a flows or
    network table.

    A numeric x (numbers, or values with units such as ``"5m/s"``) gives lines
    (``kind="line"``), a categorical one dodged bars (``kind="bar"``); ``kind`` overrides.
    ``connect=False`` draws markers without lines. Swept keys (``params``, default: the
    table's) that are neither x, hue nor facet become part of the hue, so no two points are
    averaged together; with several flow roles, the roles get a facet each (or join the hue).
    ``fig.tpsim`` is the :class:`FigureInfo`.

    Raises:
        ValueError: if ``metric``, ``x``, ``hue`` or ``facet`` is not a column of ``df``, or
            ``kind`` is unknown.
    """
    if kind not in ("auto", "line", "bar", "points"):
        raise ValueError(f"kind must be auto, line, bar or points, got {kind!r}")
    hues = _as_list(hue)
    if "flow_direction" in [x, facet, *hues]:
        df = with_flow_direction(df)
    for c in [metric, x] + hues + ([facet] if facet else []):
        if c not in df.columns:
            raise ValueError(f"no column {c!r}; columns: {', '.join(df.columns)}")
    if not (df.schema[metric].is_numeric() or df.schema[metric] == pl.Null):
        raise ValueError(f"column {metric!r} is not a metric (not numeric)")
    if "run" not in df.columns:
        df = df.with_columns(pl.lit(0).alias("run"))
    params = list(params) if params is not None else param_columns(df)
    used = {x, facet, *hues}
    for k in params:
        if k not in used and k in df.columns and df[k].n_unique() > 1:
            hues.append(k)
    if "role" in df.columns and "role" not in used and df["role"].n_unique() > 1:
        if facet is None:
            facet = "role"
        else:
            hues.append("role")
    # Swept keys with one value here (a point picked with --sweep): the title names them.
    fixed = [param_text(k, df[k][0]) for k in params if k not in used and k in df.columns and df.height and df[k].n_unique() == 1]
    data = df.filter(pl.col(metric).is_not_null())
    with _style(), _quiet():
        return _draw_metric(df, data, metric, x, hues, facet, kind, connect, title, xlabel, ylabel, max_series, fixed)


def _draw_metric(df, data, metric, x, hues, facet, kind, connect, title, xlabel, ylabel, max_series, fixed=()):
    xs_all = list(dict.fromkeys(df[x].to_list()))
    xaxis = axis_for(xs_all)
    pos_of = dict(zip(xs_all, xaxis.positions)) if xaxis.numeric else {v: i for i, v in enumerate(xs_all)}
    if kind == "auto":
        kind = "line" if xaxis.numeric else "bar"
    if kind == "line" and not xaxis.numeric:
        pos_of = {v: i for i, v in enumerate(xs_all)}
    facets = list(dict.fromkeys(df[facet].to_list())) if facet else [None]
    panels = []
    allvals = []
    for fv in facets:
        part = data.filter(pl.col(facet) == fv) if facet else data
        lines = metric_points(part, metric, x, hues or None) if part.height else {}
        lines = {k: v for k, v in lines.items() if v}
        panels.append((fv, lines))
        allvals += [p[1] for pts in lines.values() for p in pts] + [p[3] for pts in lines.values() for p in pts]
    disp = metric_display(metric, allvals)
    n_runs = data["run"].n_unique() if data.height else 0
    ncols = min(len(facets), 3)
    nrows = math.ceil(len(facets) / ncols)
    width = COLUMN_WIDTH_IN if ncols == 1 else DOUBLE_WIDTH_IN
    # Series style by their order among all panels, so a series looks the same in each.
    order: dict[Any, int] = {}
    for _, lines in panels:
        for k in lines:
            order.setdefault(k, len(order))
    n_legend = len(order) if hues else 0
    legend_rows = 0 if (n_legend <= 2 and not facet) else math.ceil(min(n_legend, MAX_SERIES) / (3 if facet else 2))
    fig, axes = plt.subplots(nrows, ncols, figsize=(width, PANEL_HEIGHT_IN * nrows + (0.25 if title != "" else 0) + 0.17 * legend_rows),
                             sharey=True, squeeze=False, layout="constrained")
    means = {k: _mean([p[1] for _, lines in panels for p in lines.get(k, [])]) for k in order}
    by_mean = sorted(order, key=lambda k: -means[k])
    named = set(by_mean if len(order) <= max_series else by_mean[: max_series - 1])
    legend: dict[str, Any] = {}
    styles = series_styles(order)
    log_x = False
    if kind in ("line", "points") and xaxis.numeric:
        pos = [p for p in xaxis.positions if p is not None]
        log_x = len(pos) >= 3 and min(pos) > 0 and max(pos) / min(pos) >= 20
    for ax, (fv, lines) in zip(axes.flat, panels):
        if kind == "bar":
            _bars(ax, lines, order, named, pos_of, disp.scale, legend, hues, styles)
        else:
            _lines(ax, lines, order, named, pos_of, disp.scale, legend, hues, connect and kind == "line", log_x, styles)
        if facet:
            ax.set_title(_facet_title(facet, fv))
        if not lines:
            ax.text(0.5, 0.5, "no values", transform=ax.transAxes, ha="center", va="center", color="0.4")
    for ax in list(axes.flat)[len(panels):]:
        ax.set_visible(False)
    xl = xlabel if xlabel is not None else key_label(x, xs_all)
    yl = ylabel if ylabel is not None else disp.label
    for ax in axes.flat:
        if kind == "bar" or not xaxis.numeric:
            ax.set_xticks(list(range(len(xs_all))), [_tick(v) for v in xs_all],
                          rotation=30 if len(xs_all) > 4 or max(len(_tick(v)) for v in xs_all) > 8 else 0,
                          ha="right" if len(xs_all) > 4 else "center")
        elif log_x:
            ax.set_xscale("log")
            ax.set_xticks([p for p in xaxis.positions if p is not None], xaxis.ticklabels)
            ax.minorticks_off()
        else:
            ax.set_xticks([p for p in xaxis.positions if p is not None], xaxis.ticklabels)
    for ax in axes[-1, :]:
        ax.set_xlabel(xl)
    for ax in axes[:, 0]:
        ax.set_ylabel(yl)
    series_names = [legend_name for legend_name in legend]
    if legend:
        handles = list(legend.values())
        if len(legend) <= 2 and not facet:
            axes.flat[0].legend(handles, list(legend), loc="best", frameon=True, framealpha=0.8,
                                handlelength=2.2 if kind != "bar" else 1.2)
        else:  # below the panels, out of the data's way
            _fit_legend(fig, handles, list(legend), min(len(legend), 3 if facet else 2), legend_rows,
                        handlelength=2.2 if kind != "bar" else 1.2)
    x_name = key_name(x)
    t = title if title is not None else f"{_upper_first(disp.label.split(' (')[0])} vs {x_name}" + (f" ({', '.join(fixed)})" if fixed else "")
    if t:
        fig.suptitle(_wrap(t, 44 if ncols == 1 else 92))
    agg = _aggregation(data, metric, x, hues, facet, n_runs)
    capped = f" The {len(named)} series with the largest means are named; {len(order) - len(named)} more in grey." if len(named) < len(order) else ""
    caption = (f"{_upper_first(disp.label)} against {xl}"
               + (f", one {'line' if kind != 'bar' else 'bar'} per {', '.join(key_name(h) for h in hues)}" if hues else "")
               + (f", one panel per {key_name(facet)}" if facet else "") + f". Aggregation: {agg}.{capped}")
    fig.tpsim = FigureInfo(
        kind=kind, metric=metric, title=t, xlabel=xl, ylabel=yl, x=x, x_numeric=bool(xaxis.numeric and kind != "bar"),
        x_values=[_tick(v) for v in xs_all] if (kind == "bar" or not xaxis.numeric) else list(xaxis.ticklabels),
        x_positions=list(xaxis.positions) if (xaxis.numeric and kind != "bar") else [None] * len(xs_all),
        hue=list(hues), series=series_names, facet=facet,
        colors=[{_name(k, hues): styles[k]["color"] for k in order}.get(n, "0.7") for n in series_names],
        facets=[_facet_title(facet, f) for f in facets] if facet else [], aggregation=agg, caption=caption, scale=disp.scale,
    )
    return fig


def _fit_legend(fig, handles: list, labels: list[str], ncols: int, rows_planned: int, **kw: Any):
    """A legend below the panels in as many columns (at most ``ncols``) as fit the figure's
    width; the figure grows by the rows added beyond ``rows_planned``."""
    renderer = fig.canvas.get_renderer()
    for n in range(ncols, 0, -1):
        leg = fig.legend(handles, labels, loc="outside lower center", ncols=n, frameon=False, **kw)
        if n == 1 or leg.get_window_extent(renderer).width <= 0.98 * fig.bbox.width:
            break
        leg.remove()
    extra = math.ceil(len(labels) / n) - rows_planned
    if extra > 0:
        fig.set_figheight(fig.get_figheight() + 0.17 * extra)
    return leg


def _upper_first(text: str) -> str:
    return text[:1].upper() + text[1:]


def _wrap(text: str, width: int) -> str:
    import textwrap

    return "\n".join(textwrap.wrap(text, width)) or text


def _tick(v: Any) -> str:
    return value_text(v)


def _mean(vals: list[float]) -> float:
    return sum(vals) / len(vals) if vals else -math.inf


def _style_of(i: int, j: Optional[int] = None) -> dict[str, Any]:
    """Colour ``i``; marker, dashes and hatch ``j`` (default: ``i``)."""
    j = i if j is None else j
    return {"color": OKABE_ITO[i % len(OKABE_ITO)], "marker": MARKERS[j % len(MARKERS)], "linestyle": DASHES[j % len(DASHES)],
            "hatch": ["", "//", "..", "xx", "\\\\", "++"][j % 6]}


def series_styles(order: dict[Any, int]) -> dict[Any, dict[str, Any]]:
    """The style of each series: with several hue columns, the colour follows the first
    column's value and the marker and dashes the others' (every ``udp`` line is blue, every
    ``background flows = 8`` line dashed); with one, each series its own."""
    keys = list(order)
    if not keys or not all(isinstance(k, tuple) and len(k) > 1 for k in keys):
        return {k: _style_of(i) for k, i in order.items()}
    firsts = list(dict.fromkeys(k[0] for k in keys))
    rests = list(dict.fromkeys(k[1:] for k in keys))
    return {k: _style_of(firsts.index(k[0]), rests.index(k[1:])) for k in keys}


def _name(key: Any, hues: list[str]) -> str:
    if not hues:
        return ""
    vals = key if isinstance(key, tuple) else (key,)
    return series_label(hues, vals)


def _lines(ax, lines, order, named, pos_of, scale, legend, hues, connect, log_x, styles):
    named_keys = [k for k in order if k in named and k in lines]
    ys = [p[v] * scale for pts in lines.values() for p in pts for v in (2, 3)]
    span = (max(ys) - min(ys)) if ys else 1.0
    dodge = len(named_keys) > 1 and _overlap([lines[k] for k in named_keys], span)
    xs = sorted({pos_of[p[0]] for pts in lines.values() for p in pts if pos_of.get(p[0]) is not None})
    for k in order:
        if k not in lines:
            continue
        pts = [p for p in lines[k] if pos_of.get(p[0]) is not None]
        px = [pos_of[p[0]] for p in pts]
        if k in named and dodge and len(xs) > 1:
            j = named_keys.index(k) - (len(named_keys) - 1) / 2
            if log_x:
                f = (xs[-1] / xs[0]) ** (0.012 * j)
                px = [v * f for v in px]
            else:
                px = [v + 0.012 * j * (xs[-1] - xs[0]) for v in px]
        y = [p[1] * scale for p in pts]
        yerr = [[(p[1] - p[2]) * scale for p in pts], [(p[3] - p[1]) * scale for p in pts]]
        if k in named:
            st = styles[k]
            h = ax.errorbar(px, y, yerr=yerr, color=st["color"], marker=st["marker"],
                            linestyle=st["linestyle"] if connect else "none", elinewidth=0.8)
            if hues:
                legend[_name(k, hues)] = h
        else:
            h = ax.plot(px, y, color="0.7", linewidth=0.6, marker=None, linestyle="-" if connect else "none", zorder=0)[0]
            legend.setdefault(f"other ({len(order) - len(named)})", h)


def _bars(ax, lines, order, named, pos_of, scale, legend, hues, styles):
    keys = [k for k in order if k in named]
    n = max(len(keys), 1)
    width = 0.8 / n
    for j, k in enumerate(keys):
        if k not in lines:
            continue
        st = styles[k]
        pts = lines[k]
        px = [pos_of[p[0]] + (j - (n - 1) / 2) * width for p in pts]
        y = [p[1] * scale for p in pts]
        yerr = [[(p[1] - p[2]) * scale for p in pts], [(p[3] - p[1]) * scale for p in pts]]
        h = ax.bar(px, y, width=width * 0.92, color=st["color"], edgecolor="black", linewidth=0.4,
                   hatch=st["hatch"], yerr=yerr,
                   error_kw={"elinewidth": 0.8, "capsize": 2, "ecolor": "black"})
        if hues:
            legend[_name(k, hues)] = h
    if any(p[2] < 0 for pts in lines.values() for p in pts):
        ax.axhline(0, color="black", linewidth=0.5)


def timeseries_figure(
    ts: pl.DataFrame,
    series: str,
    run: int = 0,
    point: int = 0,
    *,
    flows: Optional[pl.DataFrame] = None,
    max_lines: int = MAX_SERIES,
    title: Optional[str] = None,
    xlabel: Optional[str] = None,
    ylabel: Optional[str] = None,
):
    """One series of one run over time: a line per flow direction (or per queue for
    ``queue_packets``). With many, the ``max_lines`` largest by mean are named and the others
    drawn in grey; flows of another role (``flows`` gives the roles) are dashed. The title
    names the sweep point's parameter values.

    Raises:
        ValueError: if the series, run or point is not in the table.
    """
    sub = ts.filter((pl.col("series") == series) & (pl.col("run") == run) & (pl.col("point") == point))
    if sub.height == 0:
        have = sorted(ts["series"].unique().to_list()) if "series" in ts.columns else []
        raise ValueError(f"no time series {series!r} for point {point}, run {run}" + (f"; series: {', '.join(have)}" if have else ""))
    owners = ["link", "node"] if series == "queue_packets" else ["flow"]
    owners = [o for o in owners if o in sub.columns and sub[o].null_count() < sub.height]
    roles: dict[Any, str] = {}
    if flows is not None and "role" in flows.columns and owners == ["flow"]:
        f = flows.filter((pl.col("point") == point) & (pl.col("run") == run))
        roles = dict(zip(f["flow"].to_list(), f["role"].to_list()))
    groups = []
    for key, g in sub.group_by(owners + ["direction"], maintain_order=True):
        vals = [v for v in g["value"].to_list() if v is not None]
        name = " ".join(f"{o} {v}" for o, v in zip(owners, key[:-1]) if v is not None)
        role = roles.get(key[0]) if roles else None
        groups.append((name + f" {key[-1]}", role, g, _mean(vals) if vals else -math.inf))
    main_first = sorted(groups, key=lambda t: (t[1] != "main", -t[3]))
    named = main_first if len(groups) <= max_lines else main_first[: max_lines - 1]
    params = [c for c in param_columns(ts)]
    point_desc = ", ".join(param_text(k, sub[k][0]) for k in params)
    disp = metric_display(series, [v for v in sub["value"].to_list() if v is not None])
    with _style(), _quiet():
        fig, ax = plt.subplots(figsize=(COLUMN_WIDTH_IN, PANEL_HEIGHT_IN + 0.3), layout="constrained")
        for i, (name, role, g, _) in enumerate(named):
            st = _style_of(i)
            lbl = name + (f" ({role})" if role and len({r for _, r, _, _ in groups}) > 1 else "")
            ax.plot(g["time_s"].to_list(), [None if v is None else v * disp.scale for v in g["value"].to_list()],
                    drawstyle="steps-post", color=st["color"], linestyle=st["linestyle"], label=lbl,
                    linewidth=1.0 if role != "background" else 0.8)
        rest = main_first[len(named):]
        for j, (name, role, g, _) in enumerate(rest):
            ax.plot(g["time_s"].to_list(), [None if v is None else v * disp.scale for v in g["value"].to_list()],
                    drawstyle="steps-post", color="0.75", linewidth=0.5, zorder=0,
                    label=f"other ({len(rest)})" if j == 0 else None)
        xl = xlabel if xlabel is not None else "time (s)"
        yl = ylabel if ylabel is not None else disp.label
        ax.set_xlabel(xl)
        ax.set_ylabel(yl)
        t = title if title is not None else _upper_first(disp.label.split(' (')[0]) + (f": {point_desc}" if point_desc else "") + f"; run {run}"
        if t:
            ax.set_title(_wrap(t, 60), fontsize=7)
        ax.legend(loc="best", framealpha=0.8, fontsize=6)
    owner_word = "queue" if series == "queue_packets" else "flow direction"
    capped = (f"; the {len(named)} with the largest means are named, {len(groups) - len(named)} more in grey"
              if len(named) < len(groups) else "")
    agg = f"one run (point {point}, run {run}), one line per {owner_word}, per {ts_bin(sub)} bin{capped}"
    fig.tpsim = FigureInfo(
        kind="timeseries", metric=series, title=t, xlabel=xl, ylabel=yl, x="time_s", x_numeric=True,
        x_values=[], x_positions=[], hue=owners + ["direction"], series=[n for n, *_ in named], aggregation=agg,
        caption=f"{_upper_first(disp.label)} over time" + (f" at {point_desc}" if point_desc else "") + f". Aggregation: {agg}.",
        scale=disp.scale,
    )
    return fig


def ts_bin(sub: pl.DataFrame) -> str:
    """The bin width of a time series, as text (``1 s``)."""
    t = sorted(set(v for v in sub["time_s"].to_list() if v is not None))
    if len(t) < 2:
        return "one"
    d = round(min(b - a for a, b in zip(t, t[1:])), 9)
    return f"{fmt_number(d * 1000)} ms" if d < 1 else f"{fmt_number(d)} s"


def save(fig, stem: Union[str, Path], formats: Iterable[str] = ("png", "svg")) -> list[Path]:
    """Writes ``stem.<format>`` for each format (``png``, ``svg``, ``pdf``; each file created
    atomically) and closes the figure. PDFs embed their fonts as TrueType (Type 42).

    Raises:
        ValueError: for an unknown format.
    """
    from .results import _atomic

    formats = list(formats)
    for ext in formats:
        if ext not in FORMATS:
            raise ValueError(f"unknown figure format {ext!r}; formats: {', '.join(FORMATS)}")
    stem = Path(stem)
    paths = []
    meta = {"png": {"Software": None}, "svg": {"Date": None}, "pdf": {"CreationDate": None, "Producer": None}}
    try:
        with _style(), _quiet():
            for ext in formats:
                p = stem.with_name(stem.name + f".{ext}")
                _atomic(p, lambda tmp, ext=ext: fig.savefig(tmp, format=ext, metadata=meta[ext]))
                paths.append(p)
    finally:
        plt.close(fig)
    return paths


def default_axes(flows: pl.DataFrame, param_keys: Sequence[str]) -> tuple[str, Optional[str]]:
    """(x, hue) of the report's figures (see :func:`default_layout`); hue is one column or
    ``None``: several hue columns are joined by " / " (as :func:`combine_hue` names them)."""
    x, hues = default_layout(flows, param_keys)
    return x, (" / ".join(hues) if hues else None)


def default_layout(flows: pl.DataFrame, param_keys: Sequence[str]) -> tuple[str, list[str]]:
    """(x, hue columns) of the report's figures: x is the first swept key with numeric values
    (numbers or quantities such as ``5m/s``), else the first categorical one (a transport
    last), else the transport or flow direction; the other varying swept keys tell the series
    apart. With no other hue and a few main flow directions, each direction is a series."""
    varying = [k for k in param_keys if k in flows.columns and flows[k].n_unique() > 1]
    numeric = [k for k in varying if axis_for(list(dict.fromkeys(flows[k].to_list()))).numeric]
    categorical = sorted((k for k in varying if k not in numeric), key=lambda k: (k.endswith("transport"),))
    if numeric:
        x = numeric[0]
    elif categorical:
        x = categorical[0]
    elif "transport" in flows.columns and flows["transport"].n_unique() > 1:
        x = "transport"
    else:
        x = "flow_direction"
    hues = sorted((k for k in varying if k != x), key=lambda k: (k != "case", not k.endswith("transport")))
    if not hues and x != "flow_direction" and "flow" in flows.columns:
        main = flows.filter(pl.col("role") == "main") if "role" in flows.columns else flows
        dirs = main.select("flow", "direction").unique().height
        if 1 < dirs <= 4:
            hues = ["flow_direction"]
    return x, hues


def combine_hue(df: pl.DataFrame, x: str, hue: Optional[str], param_keys: list[str]) -> tuple[pl.DataFrame, Optional[str]]:
    """Swept keys that are neither ``x`` nor ``hue`` would otherwise be averaged together;
    fold them into the hue so each of their combinations gets its own line (one column named
    ``"a / b"``; :func:`metric_figure` does this itself with a list of hue columns)."""
    parts = [p for p in (hue.split(" / ") if hue and hue not in df.columns else ([hue] if hue else [])) if p in df.columns]
    others = [k for k in param_keys if k not in (x, hue) and k not in parts and k in df.columns]
    parts += others
    if not parts:
        return df, None
    if len(parts) == 1:
        return df, parts[0]
    name = " / ".join(parts)
    expr = pl.concat_str([pl.col(c).cast(pl.Utf8) for c in parts], separator=" / ")
    return df.with_columns(expr.alias(name)), name


__all__ = ["metric_figure", "timeseries_figure", "save", "metric_points", "default_axes", "default_layout", "with_flow_direction",
           "FigureInfo", "STYLE", "OKABE_ITO", "FLOW_KEYS", "param_columns", "label"]
