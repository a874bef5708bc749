"""Figures (matplotlib) for papers: metrics against swept parameters with 95 % confidence
intervals, and time series of one run.

* Axis labels come from the metric registry (``goodput (kbit/s)``, ``mean end-to-end delay
  (ms)``) and from the swept keys (``node speed (m/s)``); swept values with units are numbers
  on the axis.
* A numeric x gives lines (markers offset where their intervals overlap); a categorical x
  gives dodged bars with intervals; flow directions as x, when there are more than
  :data:`MAX_CATEGORIES`, give their cumulative distribution (one line per series).
* Flows are grouped by role (``main``: the scenario's own flows; ``background``: the random
  ``[background]`` flows): roles are never averaged together (a facet per role).
* Many series of swept values are capped: the largest few by mean are named, the rest drawn
  in grey. Time series of more than :data:`MAX_SERIES` flow directions or queues draw each
  role's as a quantile band (median, 25–75 %, 5–95 %) per bin instead of a line each.
* Every figure records what it shows (:class:`FigureInfo`: labels, x values, the
  aggregation, bands, a caption) in ``fig.tpsim``.
* Publication output: column-width sizes (3.5 in; 7.16 in for facets), the Okabe–Ito
  colour-blind-safe palette with distinct markers and dashes, vector PDF with embedded
  TrueType (Type 42) fonts, SVG, and PNG for screens.

The figures are computed in two steps: a *spec* (:func:`metric_spec`, :func:`timeseries_spec`:
what to draw, as plain data, from the tables with polars) and the drawing
(:func:`draw`, in :mod:`tpsim._draw`, which imports matplotlib only when a figure is drawn).
The report draws its specs in worker processes.
"""

from __future__ import annotations

import math
import re
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Iterable, Optional, Sequence, Union

import polars as pl

from ._draw import FORMATS  # noqa: F401  (the formats save writes; tpsim plot checks --format against them)
from .labels import axis_for, fmt_number, key_label, key_name, metric_display, value_text
from .metrics import QUEUE_SERIES, bounds, label  # noqa: F401  (label: re-exported for older callers)
from .columns import FLOW_KEYS
from .tables import mean_cis

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
#: Series named in a legend; more are drawn in grey as "other". Time series with more flow
#: directions (or queues) than this draw quantile bands.
MAX_SERIES = 8
#: Flow directions (or flows) on a categorical x axis beyond which a figure shows their
#: cumulative distribution instead of a bar each.
MAX_CATEGORIES = 24
#: In a time series drawn with bands, a role with at most this many flow directions keeps a
#: line each (study C's main flow beside its 8 background flows).
BAND_KEEP_LINES = MAX_SERIES // 2
#: Below this many flow directions (or queues) the outer band is min–max, not 5–95 %.
BAND_MIN_FOR_5_95 = 20
#: Columns whose values are flows, flow directions or nodes (per-flow units, not swept
#: values): many of them are drawn as a distribution or a band, never a line each.
PER_FLOW_COLUMNS = ("flow_direction", "flow", "node", "src", "dst")
#: Panels a figure gets at most when it splits its series into panels by itself.
MAX_AUTO_PANELS = 12


def __getattr__(name: str) -> Any:
    # matplotlib is imported when a figure is drawn, not with this module: ``STYLE`` and
    # ``plt`` are the drawing module's.
    if name == "STYLE":
        from ._draw import STYLE

        return STYLE
    if name == "plt":
        import matplotlib.pyplot as plt

        return plt
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@dataclass
class FigureInfo:
    """What a figure shows, recorded when it is drawn (``fig.tpsim``).

    Attributes:
        kind: ``line``, ``bar``, ``points``, ``ecdf`` (cumulative distribution over flow
            directions) or ``timeseries``.
        metric: the metric or series drawn.
        title, xlabel, ylabel: as drawn.
        x: the x column (``time_s`` for a time series; for ``ecdf`` the column whose values
            are distributed, e.g. ``flow_direction``).
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
        bands: the quantile bands of a time series, one per role drawn as a band:
            ``{"role", "members", "unit", "center", "inner", "outer"}`` (``members`` flow
            directions or queues; ``inner``/``outer`` the percentiles, e.g. ``[25, 75]``,
            ``[5, 95]``, or ``[0, 100]`` for min–max).
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
    bands: list = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def draw(spec: dict[str, Any], info: Optional[FigureInfo] = None):
    """The matplotlib figure of a spec (:mod:`tpsim._draw`), with ``fig.tpsim = info``."""
    from ._draw import draw as _draw

    fig = _draw(spec)
    fig.tpsim = info
    return fig


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


def _as_list(cols: Union[None, str, Sequence[str]], what: str = "hue") -> list[str]:
    if cols is None:
        return []
    if isinstance(cols, str):
        return [cols]
    if not isinstance(cols, (list, tuple)) or not all(isinstance(c, str) for c in cols):
        raise TypeError(f"{what} must be a column name or a list of them, got {type(cols).__name__} {cols!r:.80}")
    return list(cols)


def _check_frame(df: Any, what: str, table: str) -> None:
    if not isinstance(df, pl.DataFrame):
        raise TypeError(f"{what} must be a polars DataFrame ({table}), got {type(df).__name__} {df!r:.80}")


def _check_names(**names: Any) -> None:
    """Each argument is a string (a column or series name) or None."""
    for what, v in names.items():
        if v is not None and not isinstance(v, str):
            raise TypeError(f"{what} must be a string, got {type(v).__name__} {v!r:.80}")


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
    return _part_text(col, value, key_name(col))


def _finite(df: pl.DataFrame, metric: str) -> pl.DataFrame:
    sub = df.filter(pl.col(metric).is_not_null())
    if sub.schema[metric] in (pl.Float32, pl.Float64):
        sub = sub.filter(pl.col(metric).is_finite())
    return sub


def _per_run(df: pl.DataFrame, metric: str, keys: list[str]) -> pl.DataFrame:
    """Each run's mean of the metric per ``keys`` (rows of one run with the same keys: several
    flows), then the runs' values per ``keys`` as a list column ``metric`` (in the order of
    the rows)."""
    per_run = _finite(df, metric).group_by(list(dict.fromkeys(keys + ["run"])), maintain_order=True).agg(pl.col(metric).cast(pl.Float64).mean())
    return per_run.group_by(keys, maintain_order=True).agg(pl.col(metric))


def _hue_key(h: Optional[tuple]) -> Any:
    return (h[0] if len(h) == 1 else h) if h is not None else None


def metric_points(df: pl.DataFrame, metric: str, x: str, hue: Union[None, str, Sequence[str]]) -> dict[Any, list[tuple[Any, float, float, float, int]]]:
    """For each hue value (a tuple for several hue columns): ``[(x, mean, ci95 low, ci95
    high, n runs)]`` in order of first appearance of x (the interval of the summary,
    :func:`tpsim.results.mean_ci`; the mean itself with one run). Rows of one run with the
    same (x, hue) (several flows) are averaged first, then the runs give the mean and the
    interval."""
    hues = _as_list(hue)
    groups = _per_run(df, metric, [x] + hues)
    vals = {tuple(r[:-1]): r[-1] for r in groups.iter_rows()}
    xs = list(dict.fromkeys(df[x].to_list()))
    hue_vals = list(dict.fromkeys(df.select(hues).iter_rows())) if hues else [None]
    cells = [(h, xv, v) for h in hue_vals for xv in xs if (v := vals.get((xv, *(h or ()))))]
    out: dict[Any, list] = {_hue_key(h): [] for h in hue_vals}
    for (h, xv, v), (m, lo, hi) in zip(cells, mean_cis(metric, [v for _, _, v in cells])):
        out[_hue_key(h)].append((xv, m, m if lo is None else lo, m if hi is None else hi, len(v)))
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
    (``kind="line"``), a categorical one dodged bars (``kind="bar"``); flow directions (or
    flows, nodes) as x, more than :data:`MAX_CATEGORIES` of them, give the cumulative
    distribution of their values (``kind="ecdf"``: x is the metric, y the share of flow
    directions at or below it); ``kind`` overrides. ``connect=False`` draws markers without
    lines. Swept keys (``params``, default: the table's) that are neither x, hue nor facet
    become part of the hue, so no two points are averaged together; with several flow roles,
    the roles get a facet each (or join the hue). ``fig.tpsim`` is the :class:`FigureInfo`.

    Raises:
        ValueError: if ``metric``, ``x``, ``hue`` or ``facet`` is not a column of ``df``, or
            ``kind`` is unknown.
    """
    return draw(*metric_spec(df, metric, x, hue, title, connect, kind=kind, facet=facet, xlabel=xlabel, ylabel=ylabel,
                             max_series=max_series, params=params))


def metric_spec(
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
) -> tuple[dict[str, Any], FigureInfo]:
    """(spec, info) of :func:`metric_figure` (same arguments), without drawing: the spec is
    plain data for :func:`draw` (in any process)."""
    _check_frame(df, "df", "a flows or network table")
    for what, v in (("metric", metric), ("x", x)):
        if not isinstance(v, str):
            raise TypeError(f"{what} must be a column name, got {type(v).__name__} {v!r:.80}")
    _check_names(facet=facet, title=title, xlabel=xlabel, ylabel=ylabel)
    if kind not in ("auto", "line", "bar", "points", "ecdf"):
        raise ValueError(f"kind must be auto, line, bar, points or ecdf, got {kind!r}")
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
    if facet is None and kind != "ecdf":
        cols = auto_facet(df, hues, max_series)
        if cols:
            hues = [h for h in hues if h not in cols]
            df, facet = _with_facet(df, cols)
    # Swept keys with one value here (a point picked with --sweep): the title names them.
    fixed = [param_text(k, df[k][0]) for k in params if k not in used and k in df.columns and df.height and df[k].n_unique() == 1]
    data = df.filter(pl.col(metric).is_not_null())
    if kind == "auto" and x in PER_FLOW_COLUMNS and df[x].n_unique() > MAX_CATEGORIES and not axis_for(df[x].unique().to_list()).numeric:
        kind = "ecdf"
    if kind == "ecdf":
        return _ecdf_spec(df, data, metric, x, hues, facet, title, xlabel, ylabel, max_series, fixed)
    units = [h for h in hues if h in PER_FLOW_COLUMNS]
    others = [h for h in hues if h not in units]
    if (units and kind != "bar" and data.height and data.select(hues).n_unique() > max_series
            and (data.select(others).n_unique() if others else 1) <= 2):
        spec, info = _unit_band_spec(df, data, metric, x, hues, units, facet, kind, title, xlabel, ylabel, fixed)
    else:
        spec, info = _metric_spec(df, data, metric, x, hues, facet, kind, connect, title, xlabel, ylabel, max_series, fixed)
    _y_within_bounds(spec, metric, info.scale)
    return spec, info


def _y_within_bounds(spec: dict[str, Any], metric: str, scale: float) -> None:
    """Keeps each panel's y axis within the metric's range (:func:`tpsim.metrics.bounds`,
    times ``scale``, the figure's unit): no PDR axis beyond 100 %, no negative ticks for a
    count that is zero throughout."""
    b = bounds(metric)
    if b is not None:
        lo, hi = b
        for panel in spec["panels"]:
            if panel is not None:
                panel["ybounds"] = [lo * scale, None if math.isinf(hi) else hi * scale]


def auto_facet(df: pl.DataFrame, hues: Sequence[str], max_series: int = MAX_SERIES) -> list[str]:
    """The swept hue columns a figure puts in panels because its series would be more than
    ``max_series``: the last ones, one at a time, until the rest give at most
    ``max_series`` series (the first hue, the primary comparison, stays in every panel).
    ``[]`` when the series fit, when fewer than two swept columns vary, or when the panels
    would be more than :data:`MAX_AUTO_PANELS`."""
    swept = [h for h in hues if h not in PER_FLOW_COLUMNS]
    if len(swept) < 2 or df.select(swept).n_unique() <= max_series:
        return []
    cols: list[str] = []
    for c in reversed(swept[1:]):
        cols.insert(0, c)
        if df.select([h for h in swept if h not in cols]).n_unique() <= max_series:
            break
    return cols if df.select(cols).n_unique() <= MAX_AUTO_PANELS else []


def _with_facet(df: pl.DataFrame, cols: list[str]) -> tuple[pl.DataFrame, str]:
    """(``df``, its facet column) for a facet over ``cols``: the column itself, or with
    several one named after them all (``"stack, link delay"``) whose values join theirs
    (``"ns2, 10 ms"``)."""
    if len(cols) == 1:
        return df, cols[0]
    name = ", ".join(key_name(c) for c in cols)
    values = [", ".join(_part_text(c, v).split(" = ")[-1] for c, v in zip(cols, row)) for row in df.select(cols).iter_rows()]
    return df.with_columns(pl.Series(name, values)), name


def _legend_rows(n_legend: int, facet: Optional[str]) -> int:
    return 0 if (n_legend <= 2 and not facet) else math.ceil(min(n_legend, MAX_SERIES) / (3 if facet else 2))


def _named(order: dict[Any, int], means: dict[Any, float], max_series: int) -> set:
    by_mean = sorted(order, key=lambda k: -means[k])
    return set(by_mean if len(order) <= max_series else by_mean[: max_series - 1])


def _legend_spec(legend: list[str], facet: Optional[str], legend_rows: int, handlelength: float) -> tuple[Optional[dict], Optional[dict]]:
    """(panel legend, figure legend): up to 2 entries without facets inside the first panel,
    else below the panels."""
    if not legend:
        return None, None
    if len(legend) <= 2 and not facet:
        return {"entries": list(legend), "loc": "best", "frameon": True, "framealpha": 0.8, "handlelength": handlelength}, None
    return None, {"entries": list(legend), "ncols": min(len(legend), 3 if facet else 2), "rows_planned": legend_rows,
                  "handlelength": handlelength}


def _metric_spec(df, data, metric, x, hues, facet, kind, connect, title, xlabel, ylabel, max_series, fixed=()):
    xs_all = list(dict.fromkeys(df[x].to_list()))
    xaxis = axis_for(xs_all)
    pos_of = dict(zip(xs_all, xaxis.positions)) if xaxis.numeric else {v: i for i, v in enumerate(xs_all)}
    if kind == "auto":
        kind = "line" if xaxis.numeric else "bar"
    if kind == "line" and not xaxis.numeric:
        pos_of = {v: i for i, v in enumerate(xs_all)}
    facets = list(dict.fromkeys(df[facet].to_list())) if facet else [None]
    panels_data = []
    allvals = []
    for fv in facets:
        part = data.filter(pl.col(facet) == fv) if facet else data
        lines = metric_points(part, metric, x, hues or None) if part.height else {}
        lines = {k: v for k, v in lines.items() if v}
        panels_data.append((fv, lines))
        allvals += [p[1] for pts in lines.values() for p in pts] + [p[3] for pts in lines.values() for p in pts]
    disp = metric_display(metric, allvals)
    n_runs = data["run"].n_unique() if data.height else 0
    ncols = min(len(facets), 3)
    nrows = math.ceil(len(facets) / ncols)
    width = COLUMN_WIDTH_IN if ncols == 1 else DOUBLE_WIDTH_IN
    # Series style by their order among all panels, so a series looks the same in each.
    order: dict[Any, int] = {}
    for _, lines in panels_data:
        for k in lines:
            order.setdefault(k, len(order))
    n_legend = len(order) if hues else 0
    legend_rows = _legend_rows(n_legend, facet)
    means = {k: _mean([p[1] for _, lines in panels_data for p in lines.get(k, [])]) for k in order}
    named = _named(order, means, max_series)
    legend: dict[str, bool] = {}
    styles = series_styles(order)
    log_x = False
    if kind in ("line", "points") and xaxis.numeric:
        pos = [p for p in xaxis.positions if p is not None]
        log_x = len(pos) >= 3 and min(pos) > 0 and max(pos) / min(pos) >= 20
    xl = xlabel if xlabel is not None else key_label(x, xs_all)
    yl = ylabel if ylabel is not None else disp.label
    panels = []
    for i, (fv, lines) in enumerate(panels_data):
        items: list[dict[str, Any]] = []
        if kind == "bar":
            _bars(items, lines, order, named, pos_of, disp.scale, legend, hues, styles)
        else:
            _lines(items, lines, order, named, pos_of, disp.scale, legend, hues, connect and kind == "line", log_x, styles)
        if not lines:
            items.append({"kind": "note", "text": "no values"})
        panel: dict[str, Any] = {"items": items, "title": _facet_title(facet, fv) if facet else None,
                                 "xlabel": xl if i // ncols == nrows - 1 else None, "ylabel": yl if i % ncols == 0 else None}
        if kind == "bar" or not xaxis.numeric:
            panel.update(xticks=list(range(len(xs_all))), xticklabels=[_tick(v) for v in xs_all],
                         xtick_rotation=30 if len(xs_all) > 4 or max(len(_tick(v)) for v in xs_all) > 8 else 0,
                         xtick_ha="right" if len(xs_all) > 4 else "center")
        elif log_x:
            panel.update(xscale="log", xticks=[p for p in xaxis.positions if p is not None], xticklabels=list(xaxis.ticklabels),
                         minor_off=True)
        else:
            panel.update(xticks=[p for p in xaxis.positions if p is not None], xticklabels=list(xaxis.ticklabels))
        panels.append(panel)
    series_names = list(legend)
    panel_legend, fig_legend = _legend_spec(series_names, facet, legend_rows, 2.2 if kind != "bar" else 1.2)
    if panel_legend:
        panels[0]["legend"] = panel_legend
    x_name = key_name(x)
    t = title if title is not None else f"{_upper_first(disp.label.split(' (')[0])} vs {x_name}" + (f" ({', '.join(fixed)})" if fixed else "")
    agg = _aggregation(data, metric, x, hues, facet, n_runs)
    capped = ""
    if len(named) < len(order):
        capped = (f" The {len(named)} series with the largest means are named; {len(order) - len(named)} more "
                  + ("not drawn." if kind == "bar" else "in grey."))
    caption = (f"{_upper_first(disp.label)} against {xl}"
               + (f", one {'line' if kind != 'bar' else 'bar'} per {', '.join(key_name(h) for h in hues)}" if hues else "")
               + (f", one panel per {key_name(facet)}" if facet else "") + f". Aggregation: {agg}.{capped}")
    spec = {"size": [width, PANEL_HEIGHT_IN * nrows + (0.25 if title != "" else 0) + 0.17 * legend_rows],
            "nrows": nrows, "ncols": ncols, "sharey": True, "suptitle": _wrap(t, 44 if ncols == 1 else 92) if t else None,
            "panels": panels, "legend": fig_legend}
    info = FigureInfo(
        kind=kind, metric=metric, title=t, xlabel=xl, ylabel=yl, x=x, x_numeric=bool(xaxis.numeric and kind != "bar"),
        x_values=[_tick(v) for v in xs_all] if (kind == "bar" or not xaxis.numeric) else list(xaxis.ticklabels),
        x_positions=list(xaxis.positions) if (xaxis.numeric and kind != "bar") else [None] * len(xs_all),
        hue=list(hues), series=series_names, facet=facet,
        colors=[{_name(k, hues): styles[k]["color"] for k in order}.get(n, "0.7") for n in series_names],
        facets=[_facet_title(facet, f) for f in facets] if facet else [], aggregation=agg, caption=caption, scale=disp.scale,
    )
    return spec, info


def _quantiles(col: str) -> list[pl.Expr]:
    """Median, 25–75 %, 5–95 % and min–max of ``col`` as ``mid``, ``i_lo``, ``i_hi``,
    ``q05``, ``q95``, ``min``, ``max``, and the count of values ``n``."""
    v = pl.col(col)
    return [v.median().alias("mid"), v.quantile(0.25, "linear").alias("i_lo"), v.quantile(0.75, "linear").alias("i_hi"),
            v.quantile(0.05, "linear").alias("q05"), v.quantile(0.95, "linear").alias("q95"), v.min().alias("min"),
            v.max().alias("max"), v.count().alias("n")]


def _unit_band_spec(df, data, metric, x, hues, units, facet, kind, title, xlabel, ylabel, fixed=()):
    """More series of flows (or nodes) than a legend names: at each x, the quantiles over the
    flows of their values (each one's mean over the runs) as a band and a median line, one
    per value of the other hue columns (swept values are never merged into one band)."""
    others = [h for h in hues if h not in units]
    xs_all = list(dict.fromkeys(df[x].to_list()))
    xaxis = axis_for(xs_all)
    if kind == "auto":
        kind = "line" if xaxis.numeric else "points"
    pos_of = dict(zip(xs_all, xaxis.positions)) if xaxis.numeric else {v: i for i, v in enumerate(xs_all)}
    facets = list(dict.fromkeys(df[facet].to_list())) if facet else [None]
    n_runs = data["run"].n_unique()
    panels_data = []
    allvals: list[float] = []
    for fv in facets:
        part = data.filter(pl.col(facet) == fv) if facet else data
        stats = None
        if part.height:
            means = _per_run(part, metric, [x] + hues).with_columns(pl.col(metric).list.mean())
            stats = means.group_by(others + [x], maintain_order=True).agg(_quantiles(metric))
            allvals += [v for c in ("min", "max") for v in stats[c].to_list() if v is not None]
        panels_data.append((fv, stats))
    disp = metric_display(metric, allvals)
    combos = list(dict.fromkeys(r for _, st in panels_data if st is not None for r in st.select(others).iter_rows())) if others else [()]
    noun = _unit_noun(units[0]) if len(units) == 1 else "flow directions"
    ncols = min(len(facets), 3)
    nrows = math.ceil(len(facets) / ncols)
    width = COLUMN_WIDTH_IN if ncols == 1 else DOUBLE_WIDTH_IN
    xl = xlabel if xlabel is not None else key_label(x, xs_all)
    yl = ylabel if ylabel is not None else disp.label
    legend: list[str] = []
    colors: list[str] = []
    counts: list[int] = []
    outers: list[bool] = []
    panels = []
    for i, (fv, st) in enumerate(panels_data):
        items: list[dict[str, Any]] = []
        for c, combo in enumerate(combos):
            if st is None:
                continue
            rows = st.filter(_match(others, combo)) if others else st
            rows = rows.filter(pl.col(x).is_in([v for v in xs_all if pos_of.get(v) is not None]))
            if rows.height == 0:
                continue
            rows = rows.with_columns(pl.col(x).replace_strict(list(pos_of), list(pos_of.values()), return_dtype=pl.Float64)
                                     .alias("_pos")).sort("_pos")
            counts += rows["n"].to_list()
            min_max = int(rows["n"].min()) < BAND_MIN_FOR_5_95
            outers.append(min_max)
            color = OKABE_ITO[c % len(OKABE_ITO)]
            prefix = f"{series_label(others, combo)}: " if others else ""
            entries = [f"{prefix}median", f"{prefix}25–75 %", f"{prefix}{'min–max' if min_max else '5–95 %'}"]
            px = rows["_pos"].to_list()
            rows = rows.with_columns(pl.col("min" if min_max else "q05").alias("o_lo"), pl.col("max" if min_max else "q95").alias("o_hi"))
            sc = {k: [None if v is None else v * disp.scale for v in rows[k].to_list()] for k in ("mid", "i_lo", "i_hi", "o_lo", "o_hi")}
            items += [{"kind": "band", "x": px, "lo": sc["o_lo"], "hi": sc["o_hi"], "color": color, "alpha": 0.18, "zorder": 0.5,
                       "label": entries[2]},
                      {"kind": "band", "x": px, "lo": sc["i_lo"], "hi": sc["i_hi"], "color": color, "alpha": 0.38, "zorder": 0.6,
                       "label": entries[1]},
                      {"kind": "line", "x": px, "y": sc["mid"], "color": color, "marker": MARKERS[c % len(MARKERS)],
                       "linestyle": "-" if kind == "line" else "none", "zorder": 1.5, "label": entries[0]}]
            for e in entries:
                if e not in legend:
                    legend.append(e)
                    colors.append(color)
        if not items:
            items.append({"kind": "note", "text": "no values"})
        panel: dict[str, Any] = {"items": items, "title": _facet_title(facet, fv) if facet else None,
                                 "xlabel": xl if i // ncols == nrows - 1 else None, "ylabel": yl if i % ncols == 0 else None,
                                 "xticks": [p for p in xaxis.positions if p is not None] if xaxis.numeric else list(range(len(xs_all))),
                                 "xticklabels": list(xaxis.ticklabels) if xaxis.numeric else [_tick(v) for v in xs_all]}
        panels.append(panel)
    legend_rows = _legend_rows(len(legend), facet)
    panel_legend, fig_legend = _legend_spec(legend, facet, legend_rows, 2.2)
    if panel_legend:
        panels[0]["legend"] = panel_legend
    t = title if title is not None else f"{_upper_first(disp.label.split(' (')[0])} vs {key_name(x)}" + (f" ({', '.join(fixed)})" if fixed else "")
    n_text = (str(min(counts)) if min(counts) == max(counts) else f"{min(counts)}–{max(counts)}") if counts else "0"
    each = "its value in the one run" if n_runs <= 1 else f"its mean over {n_runs} runs"
    outer = "min–max" if all(outers) else ("5–95 %" if not any(outers) else f"5–95 % (min–max under {BAND_MIN_FOR_5_95})")
    agg = (f"per {_unit_noun(units[0], 1) if len(units) == 1 else 'flow direction'}: {each}; at each {key_name(x)}, "
           f"the median (line), 25–75 % and {outer} (shaded) over the {n_text} {noun}"
           + (f", one band per {', '.join(key_name(h) for h in others)}" if others else "")
           + (", roles never mixed" if facet == "role" else ""))
    caption = (f"{_upper_first(disp.label)} against {xl} over the {noun}" + (f", one panel per {key_name(facet)}" if facet else "")
               + f". Aggregation: {agg}.")
    spec = {"size": [width, PANEL_HEIGHT_IN * nrows + (0.25 if title != "" else 0) + 0.17 * legend_rows],
            "nrows": nrows, "ncols": ncols, "sharey": True, "suptitle": _wrap(t, 44 if ncols == 1 else 92) if t else None,
            "panels": panels, "legend": fig_legend}
    info = FigureInfo(
        kind=kind, metric=metric, title=t, xlabel=xl, ylabel=yl, x=x, x_numeric=bool(xaxis.numeric),
        x_values=list(xaxis.ticklabels) if xaxis.numeric else [_tick(v) for v in xs_all],
        x_positions=list(xaxis.positions) if xaxis.numeric else [None] * len(xs_all), hue=list(hues), series=legend, facet=facet,
        colors=colors, facets=[_facet_title(facet, f) for f in facets] if facet else [], aggregation=agg, caption=caption,
        scale=disp.scale, bands=[{"role": None, "members": max(counts) if counts else 0, "unit": _unit_noun(units[0], 1),
                                  "over": units, "series": [series_label(others, c) if others else "" for c in combos],
                                  "center": "median", "inner": [25, 75], "outer": [0, 100] if all(outers) else [5, 95]}],
    )
    return spec, info


def _unit_noun(x: str, n: int = 2) -> str:
    one, many = {"flow_direction": ("flow direction", "flow directions"), "flow": ("flow", "flows"),
                 "node": ("node", "nodes"), "src": ("source", "sources"), "dst": ("destination", "destinations")}.get(x, (x, x))
    return one if n == 1 else many


def _ecdf_spec(df, data, metric, x, hues, facet, title, xlabel, ylabel, max_series, fixed=()):
    """The cumulative distribution of the metric over the values of ``x`` (flow directions):
    each one's mean over the runs (rows of one run with the same x and hue averaged first),
    one line per hue value, one panel per facet value."""
    facets = list(dict.fromkeys(df[facet].to_list())) if facet else [None]
    noun = _unit_noun(x)
    panels_data = []
    allvals: list[float] = []
    for fv in facets:
        part = data.filter(pl.col(facet) == fv) if facet else data
        dists: dict[Any, list[float]] = {}
        if part.height:
            means = _per_run(part, metric, hues + [x]).with_columns(pl.col(metric).list.mean())
            for row in means.iter_rows():
                k = _hue_key(tuple(row[: len(hues)])) if hues else None
                if row[-1] is not None:
                    dists.setdefault(k, []).append(row[-1])
        for vals in dists.values():
            vals.sort()
        panels_data.append((fv, dists))
        allvals += [v for vals in dists.values() for v in vals]
    disp = metric_display(metric, allvals)
    n_runs = data["run"].n_unique() if data.height else 0
    ncols = min(len(facets), 3)
    nrows = math.ceil(len(facets) / ncols)
    width = COLUMN_WIDTH_IN if ncols == 1 else DOUBLE_WIDTH_IN
    order: dict[Any, int] = {}
    for _, dists in panels_data:
        for k in dists:
            order.setdefault(k, len(order))
    legend_rows = _legend_rows(len(order) if hues else 0, facet)
    means = {k: _mean([v for _, d in panels_data for v in d.get(k, [])]) for k in order}
    named = _named(order, means, max_series)
    styles = series_styles(order)
    xl = xlabel if xlabel is not None else disp.label
    yl = ylabel if ylabel is not None else f"share of {noun} (%)"
    legend: dict[str, bool] = {}
    panels = []
    counts = []
    for i, (fv, dists) in enumerate(panels_data):
        items: list[dict[str, Any]] = []
        for k in order:
            vals = dists.get(k)
            if not vals:
                continue
            n = len(vals)
            counts.append(n)
            xs = [vals[0] * disp.scale] + [v * disp.scale for v in vals]
            ys = [0.0] + [100.0 * (j + 1) / n for j in range(n)]
            item = {"kind": "line", "x": xs, "y": ys, "drawstyle": "steps-post", "marker": None}
            if k in named:
                st = styles[k]
                item.update(color=st["color"], linestyle=st["linestyle"], label=_name(k, hues) if hues else None)
            else:
                item.update(color="0.7", linewidth=0.6, zorder=0, label=f"other ({len(order) - len(named)})")
            if item["label"] is not None:
                legend.setdefault(item["label"], True)
            items.append(item)
        if not dists:
            items.append({"kind": "note", "text": "no values"})
        panels.append({"items": items, "title": _facet_title(facet, fv) if facet else None,
                       "xlabel": xl if i // ncols == nrows - 1 else None, "ylabel": yl if i % ncols == 0 else None})
    series_names = list(legend)
    panel_legend, fig_legend = _legend_spec(series_names, facet, legend_rows, 2.2)
    if panel_legend:
        panels[0]["legend"] = panel_legend
    name = _upper_first(disp.label.split(" (")[0])
    t = title if title is not None else f"{name}: distribution over {noun}" + (f" ({', '.join(fixed)})" if fixed else "")
    n_text = str(min(counts)) if counts and min(counts) == max(counts) else (f"{min(counts)}–{max(counts)}" if counts else "0")
    n_all = df[x].n_unique()
    each = "its value in the one run" if n_runs <= 1 else f"its mean over {n_runs} runs"
    agg = (f"per {_unit_noun(x, 1)}: {each}; cumulative distribution over the {n_text} {noun}"
           + (f" with a value (of {n_all})" if counts and max(counts) < n_all and not hues and not facet else "")
           + (" of each role, roles never mixed" if facet == "role" else ""))
    capped = f" The {len(named)} series with the largest means are named; {len(order) - len(named)} more in grey." if len(named) < len(order) else ""
    caption = (f"Cumulative distribution of {disp.label.split(' (')[0]} over the {noun}: the share of {noun} whose value "
               f"is at most x" + (f", one line per {', '.join(key_name(h) for h in hues)}" if hues else "")
               + (f", one panel per {key_name(facet)}" if facet else "") + f". Aggregation: {agg}.{capped}")
    spec = {"size": [width, PANEL_HEIGHT_IN * nrows + (0.25 if title != "" else 0) + 0.17 * legend_rows],
            "nrows": nrows, "ncols": ncols, "sharey": True, "suptitle": _wrap(t, 44 if ncols == 1 else 92) if t else None,
            "panels": panels, "legend": fig_legend}
    info = FigureInfo(
        kind="ecdf", metric=metric, title=t, xlabel=xl, ylabel=yl, x=x, x_numeric=True, x_values=[], x_positions=[],
        hue=list(hues), series=series_names, facet=facet,
        colors=[{_name(k, hues): styles[k]["color"] for k in order}.get(n, "0.7") for n in series_names],
        facets=[_facet_title(facet, f) for f in facets] if facet else [], aggregation=agg, caption=caption, scale=disp.scale,
    )
    return spec, info


def _upper_first(text: str) -> str:
    return text[:1].upper() + text[1:]


#: A number and the unit after it ("1000 B", "20 ms", "5 %"): kept on one line by _wrap.
_NUMBER_UNIT = re.compile(r"(\d) (?=(?:[kKMG]?i?B|[kMG]?bit/s|[kMG]?bps|[mµun]?s|k?m(?:/s|/h)?|[kMG]?Hz|dBm?|m?W|J|%)(?![A-Za-z]))")


def _wrap(text: str, width: int) -> str:
    """``text`` in lines of at most ``width`` characters, never breaking between a number and
    its unit (a no-break space joins them; matplotlib draws it as a space)."""
    import textwrap

    return "\n".join(textwrap.wrap(_NUMBER_UNIT.sub("\\1\u00a0", text), width)) or text


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


def _lines(items, lines, order, named, pos_of, scale, legend, hues, connect, log_x, styles):
    """Line items of one panel (named series in colour with their intervals, the others in
    grey); ``legend`` collects the entries in drawing order."""
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
            lbl = _name(k, hues) if hues else None
            items.append({"kind": "line", "x": px, "y": y, "yerr": yerr, "color": st["color"], "marker": st["marker"],
                          "linestyle": st["linestyle"] if connect else "none", "label": lbl})
            if lbl is not None:
                legend[lbl] = True
        else:
            lbl = f"other ({len(order) - len(named)})"
            items.append({"kind": "line", "x": px, "y": y, "color": "0.7", "linewidth": 0.6, "marker": None,
                          "linestyle": "-" if connect else "none", "zorder": 0, "label": lbl})
            legend.setdefault(lbl, True)


def _bars(items, lines, order, named, pos_of, scale, legend, hues, styles):
    """Bar items of one panel (with their intervals), dodged among the series that have a
    value at each x: no empty slot beside a bar where a series has none (a run without swept
    keys: one flow per transport)."""
    keys = [k for k in order if k in named]
    at: dict[Any, list] = {}
    for k in keys:
        for p in lines.get(k, []):
            at.setdefault(p[0], []).append(k)
    n = max((len(v) for v in at.values()), default=1)
    width = 0.8 / n
    for k in keys:
        if k not in lines:
            continue
        st = styles[k]
        pts = lines[k]
        px = [pos_of[p[0]] + (at[p[0]].index(k) - (len(at[p[0]]) - 1) / 2) * width for p in pts]
        y = [p[1] * scale for p in pts]
        yerr = [[(p[1] - p[2]) * scale for p in pts], [(p[3] - p[1]) * scale for p in pts]]
        lbl = _name(k, hues) if hues else None
        items.append({"kind": "bar", "x": px, "height": y, "width": width * 0.92, "color": st["color"], "hatch": st["hatch"],
                      "yerr": yerr if any(v for side in yerr for v in side) else None, "label": lbl})
        if lbl is not None:
            legend[lbl] = True
    if any(p[2] < 0 for pts in lines.values() for p in pts):
        items.append({"kind": "hline", "y": 0, "color": "black", "linewidth": 0.5})


def timeseries_figure(
    ts: pl.DataFrame,
    series: str,
    run: int = 0,
    point: Union[int, Sequence[int]] = 0,
    *,
    flows: Optional[pl.DataFrame] = None,
    max_lines: int = MAX_SERIES,
    title: Optional[str] = None,
    xlabel: Optional[str] = None,
    ylabel: Optional[str] = None,
):
    """One series of one run over time: a line per flow direction (or per queue for
    ``queue_packets``); flows of another role (``flows`` gives the roles) are dashed. With
    more than ``max_lines``, each role's flow directions (or the queues) are drawn as a
    quantile band per bin instead (median line, 25–75 % and 5–95 % bands; min–max under
    :data:`BAND_MIN_FOR_5_95`); a role of at most :data:`BAND_KEEP_LINES` keeps its lines.
    The title names the sweep point's parameter values. ``point`` may list several sweep
    points, compared in one figure: the parameters that differ between them name each line
    (``transport = tcp, flow 0 fwd``), the others the title.

    Raises:
        ValueError: if the series, run or point is not in the table.
    """
    return draw(*timeseries_spec(ts, series, run, point, flows=flows, max_lines=max_lines, title=title, xlabel=xlabel,
                                 ylabel=ylabel))


def _match(cols: list[str], values: Sequence[Any]) -> pl.Expr:
    """Rows whose ``cols`` have ``values`` (a null value matches nulls)."""
    cond = pl.lit(True)
    for c, v in zip(cols, values):
        cond = cond & (pl.col(c).is_null() if v is None else pl.col(c) == v)
    return cond


def _match_any(cols: list[str], keys: list[tuple]) -> pl.Expr:
    cond = pl.lit(False)
    for k in keys:
        cond = cond | _match(cols, k)
    return cond


def _band_stats(g: pl.DataFrame, outer_min_max: bool) -> pl.DataFrame:
    """Per time bin (``time_s`` ascending): the median and the inner (25–75 %) and outer
    (5–95 %, or min–max) quantiles of ``value`` over the members' rows (nulls left out)."""
    v = pl.col("value")
    outer = [v.min().alias("o_lo"), v.max().alias("o_hi")] if outer_min_max else [
        v.quantile(0.05, "linear").alias("o_lo"), v.quantile(0.95, "linear").alias("o_hi")]
    return g.group_by("time_s").agg(v.median().alias("mid"), v.quantile(0.25, "linear").alias("i_lo"),
                                    v.quantile(0.75, "linear").alias("i_hi"), *outer).sort("time_s")


def timeseries_spec(
    ts: pl.DataFrame,
    series: str,
    run: int = 0,
    point: Union[int, Sequence[int]] = 0,
    *,
    flows: Optional[pl.DataFrame] = None,
    max_lines: int = MAX_SERIES,
    title: Optional[str] = None,
    xlabel: Optional[str] = None,
    ylabel: Optional[str] = None,
) -> tuple[dict[str, Any], FigureInfo]:
    """(spec, info) of :func:`timeseries_figure` (same arguments), without drawing."""
    _check_frame(ts, "ts", "the time series table")
    if flows is not None:
        _check_frame(flows, "flows", "the flows table")
    if not isinstance(series, str):
        raise TypeError(f"series must be a series name, got {type(series).__name__} {series!r:.80}")
    points = list(point) if isinstance(point, (list, tuple)) else [point]
    for what, v in (("run", run), *(("point", p) for p in points)):
        if isinstance(v, bool) or not isinstance(v, int):
            raise TypeError(f"{what} must be an integer, got {type(v).__name__} {v!r:.80}")
    if not points:
        raise ValueError("point must name at least one sweep point")
    _check_names(title=title, xlabel=xlabel, ylabel=ylabel)
    missing = [c for c in ("series", "run", "point", "time_s", "value") if c not in ts.columns]
    if missing:
        raise ValueError(f"ts has no column {missing[0]!r}: not a time series table (columns: {', '.join(ts.columns) or 'none'})")
    sub = ts.filter((pl.col("series") == series) & (pl.col("run") == run) & pl.col("point").is_in(points))
    where = f"point {points[0]}" if len(points) == 1 else f"points {', '.join(map(str, points))}"
    if sub.height == 0:
        have = sorted(ts["series"].unique().to_list()) if "series" in ts.columns else []
        raise ValueError(f"no time series {series!r} for {where}, run {run}" + (f"; series: {', '.join(have)}" if have else ""))
    params = param_columns(ts)
    # Several points: the parameters that tell them apart name the lines.
    varying = [k for k in params if sub[k].n_unique() > 1] if len(points) > 1 else []
    owners = ["link", "node"] if series in QUEUE_SERIES else ["flow"]
    owners = [o for o in owners if o in sub.columns and sub[o].null_count() < sub.height]
    keys = varying + owners + ["direction"]
    owner_word = "queue" if series in QUEUE_SERIES else "flow direction"
    roles_of: dict[Any, str] = {}
    if owners == ["flow"] and flows is not None and "role" in flows.columns:
        f = flows.filter((pl.col("point") == points[0]) & (pl.col("run") == run))
        roles_of = dict(zip(f["flow"].to_list(), f["role"].to_list()))
    # One row per flow direction (or queue): its name, role and mean value.
    members = sub.group_by(keys, maintain_order=True).agg(pl.col("value").mean().alias("mean"))
    groups = []
    for row in members.iter_rows(named=True):
        name = ", ".join([param_text(k, row[k]) for k in varying]
                         + [" ".join(f"{o} {row[o]}" for o in owners if row[o] is not None)])
        mean = row["mean"] if row["mean"] is not None else -math.inf
        role = roles_of.get(row["flow"]) if roles_of else None
        groups.append(((*[row[k] for k in keys],), name + f" {row['direction']}", role, mean))
    roles = list(dict.fromkeys(r for _, _, r, _ in groups))
    several_roles = len([r for r in roles if r is not None]) > 1
    # One point: main flows first, then by flow (or node) and direction, as the legend reads;
    # several points: in sweep order, so that lines keep the sweep's.
    main_first = (sorted(groups, key=lambda t: (t[2] != "main", *((v is None, v) for v in t[0]))) if not varying
                  else groups)
    point_desc = ", ".join(param_text(k, sub[k][0]) for k in params if k not in varying)
    disp = metric_display(series, sub["value"].drop_nulls().to_list())
    if len(groups) <= max_lines:
        line_groups, band_roles = main_first, []
    else:
        size = {r: sum(1 for g in groups if g[2] == r) for r in roles}
        band_roles = [r for r in sorted(roles, key=lambda r: r != "main") if size[r] > BAND_KEEP_LINES]
        line_groups = [g for g in main_first if g[2] not in band_roles]
    items: list[dict[str, Any]] = []
    legend: list[str] = []
    colors: list[str] = []
    for i, (key, name, role, _) in enumerate(line_groups):
        g = sub.filter(_match(keys, key))
        st = _style_of(i)
        lbl = name + (f" ({role})" if role and several_roles else "")
        items.append({"kind": "line", "x": g["time_s"].to_list(), "y": [None if v is None else v * disp.scale for v in g["value"].to_list()],
                      "drawstyle": "steps-post", "color": st["color"], "linestyle": st["linestyle"], "marker": None,
                      "linewidth": 1.0 if role != "background" else 0.8, "label": lbl})
        legend.append(lbl)
        colors.append(st["color"])
    bands = []
    for j, role in enumerate(band_roles):
        color = OKABE_ITO[(len(line_groups) + j) % len(OKABE_ITO)]
        mine = [k for k, _, r, _ in groups if r == role]
        g = sub if len(mine) == len(groups) else sub.filter(
            pl.col("flow").is_in([k[0] for k in mine]) if keys == ["flow", "direction"] else _match_any(keys, mine))
        n = sum(1 for x in groups if x[2] == role)
        min_max = n < BAND_MIN_FOR_5_95
        st = _band_stats(g, min_max)
        t = st["time_s"].to_list()
        scaled = {c: [None if v is None else v * disp.scale for v in st[c].to_list()] for c in ("mid", "i_lo", "i_hi", "o_lo", "o_hi")}
        who = (f"{role} {owner_word}s" if role is not None and (several_roles or line_groups) else f"{owner_word}s")
        prefix = f"{role}: " if role is not None and (several_roles or line_groups) else ""
        outer = "min–max" if min_max else "5–95 %"
        entries = [f"{prefix}median of {n} {owner_word}s", f"{prefix}25–75 %", f"{prefix}{outer}"]
        items += [{"kind": "band", "x": t, "lo": scaled["o_lo"], "hi": scaled["o_hi"], "step": "post", "color": color, "alpha": 0.18,
                   "zorder": 0.5, "label": entries[2]},
                  {"kind": "band", "x": t, "lo": scaled["i_lo"], "hi": scaled["i_hi"], "step": "post", "color": color, "alpha": 0.38,
                   "zorder": 0.6, "label": entries[1]},
                  {"kind": "line", "x": t, "y": scaled["mid"], "drawstyle": "steps-post", "color": color, "linestyle": "-",
                   "marker": None, "linewidth": 1.0, "zorder": 1.5, "label": entries[0]}]
        legend += entries
        colors += [color] * 3
        bands.append({"role": role, "members": n, "unit": owner_word, "who": who, "gaps": g["value"].null_count() > 0,
                      "center": "median", "inner": [25, 75], "outer": [0, 100] if min_max else [5, 95]})
    width = _bin_width(sub)
    if width is not None:  # each bin drawn over its width: the last one too
        for it in items:
            if it["x"]:
                it["x"] = it["x"] + [round(it["x"][-1] + width, 9)]
                for c in ("y", "lo", "hi"):
                    if c in it:
                        it[c] = it[c] + [it[c][-1]]
    xl = xlabel if xlabel is not None else "time (s)"
    yl = ylabel if ylabel is not None else disp.label
    t = title if title is not None else _upper_first(disp.label.split(' (')[0]) + (f": {point_desc}" if point_desc else "") + f"; run {run}"
    panel = {"items": items, "xlabel": xl, "ylabel": yl,
             "legend": {"entries": legend, "loc": "best", "framealpha": 0.8, "fontsize": 6}}
    spec = {"size": [COLUMN_WIDTH_IN, PANEL_HEIGHT_IN + 0.3], "nrows": 1, "ncols": 1, "panels": [panel], "legend": None,
            "suptitle": _wrap(t, 44) if t else None}
    parts_text = []
    if line_groups:
        parts_text.append(f"one line per {owner_word}" if not bands else
                          f"one line per {' and '.join(sorted({r or '' for _, _, r, _ in line_groups})) + ' ' if several_roles else ''}{owner_word}")
    for b in bands:
        outer = "min–max" if b["outer"] == [0, 100] else "5–95 %"
        parts_text.append(f"the {b['members']} {b['who']} as a band: the median (line), 25–75 % and {outer} (shaded) of their "
                          "values in each bin" + (" (those without a value in a bin left out)" if b["gaps"] else ""))
    which = f"one run ({where}, run {run})" if not varying else f"run {run} of each of {where}"
    line_unit = "".join(f"{key_name(k)} and " for k in varying) + owner_word
    if bands:
        agg = f"{which}, per {ts_bin(sub)} bin; " + "; ".join(parts_text)
    else:
        agg = f"{which}, one line per {line_unit}, per {ts_bin(sub)} bin"
    _y_within_bounds(spec, series, disp.scale)
    info = FigureInfo(
        kind="timeseries", metric=series, title=t, xlabel=xl, ylabel=yl, x="time_s", x_numeric=True,
        x_values=[], x_positions=[], hue=keys, series=legend, aggregation=agg, colors=colors,
        caption=f"{_upper_first(disp.label)} over time" + (f" at {point_desc}" if point_desc else "") + f". Aggregation: {agg}.",
        scale=disp.scale, bands=[{k: v for k, v in b.items() if k not in ("who", "gaps")} for b in bands],
    )
    return spec, info


def ts_bin(sub: pl.DataFrame) -> str:
    """The bin width of a time series, as text (``1 s``)."""
    t = sub["time_s"].drop_nulls().unique().sort().to_list()
    if len(t) < 2:
        return "one"
    d = round(min(b - a for a, b in zip(t, t[1:])), 9)
    return f"{fmt_number(d * 1000)} ms" if d < 1 else f"{fmt_number(d)} s"


def _bin_width(sub: pl.DataFrame) -> Optional[float]:
    """The bin width (s) of a binned time series (its times a whole number of bins apart);
    ``None`` for samples at irregular times (per-ACK samples)."""
    t = sub["time_s"].drop_nulls().unique().sort().to_list()
    if len(t) < 2:
        return None
    d = min(b - a for a, b in zip(t, t[1:]))
    if d <= 0 or any(abs((v - t[0]) / d - round((v - t[0]) / d)) > 1e-6 for v in t):
        return None
    return d


def save(fig, stem: Union[str, Path], formats: Iterable[str] = ("png", "svg")) -> list[Path]:
    """Writes ``stem.<format>`` for each format (``png``, ``svg``, ``pdf``; each file created
    atomically) and closes the figure. PDFs embed their fonts as TrueType (Type 42).

    Raises:
        TypeError: if ``fig`` is not a matplotlib figure, ``stem`` not a path or ``formats``
            not format names.
        ValueError: for an unknown format (:class:`tpsim.OutputPathError` for an empty
            ``stem``, one that is a directory or under a file).
        OSError: if a file cannot be written.
    """
    from matplotlib.figure import Figure

    from ._draw import figure_bytes
    from .files import _atomic, check_output_file

    if not isinstance(fig, Figure):
        raise TypeError(f"fig must be a matplotlib Figure (from metric_figure or timeseries_figure), got {type(fig).__name__} {fig!r:.80}")
    formats = [formats] if isinstance(formats, str) else list(formats) if isinstance(formats, Iterable) else formats
    if not isinstance(formats, list) or not all(isinstance(f, str) for f in formats):
        raise TypeError(f"formats must be format names such as ['png', 'pdf'], got {formats!r:.80}")
    stem = check_output_file(stem, "stem")
    paths = []
    try:
        content = figure_bytes(fig, formats)  # raises ValueError for an unknown format
        for ext in formats:
            p = stem.with_name(stem.name + f".{ext}")
            _atomic(p, lambda tmp, data=content[ext]: tmp.write_bytes(data))
            paths.append(p)
    finally:
        plt = sys.modules.get("matplotlib.pyplot")
        if plt is not None:  # a figure of pyplot's (tpsim's own are not registered there)
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


__all__ = ["metric_figure", "metric_spec", "timeseries_figure", "timeseries_spec", "draw", "save", "metric_points",
           "default_axes", "default_layout", "with_flow_direction", "FigureInfo", "STYLE", "OKABE_ITO", "FLOW_KEYS",
           "param_columns", "label"]
