"""The HTML report: one self-contained page (figures embedded) with a table of contents, the
figures first in a responsive grid, then the tables (units in the headers, each flow's
transport and role; long tables collapsed), the sweep points, the metric definitions, the
scenario as written and resolved, the tpsim version, the seeds and the command that
reproduces it. Rendered from a Jinja2 template (``templates/report.html.j2``) with
autoescaping: every user-supplied string is escaped."""

from __future__ import annotations

import base64
import hashlib
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Optional, Sequence

import polars as pl

from . import _pool
from ._build import build_id
from ._html import environment
from .columns import FLOW_KEYS, NETWORK_KEYS
from .files import _atomic, atomic_write_text, json_text
from .labels import axis_for, fmt_number, fmt_seconds, key_label, key_name, metric_display, value_text
from .metrics import HEADLINE_BULK_FLOW_METRICS, HEADLINE_FLOW_METRICS, HEADLINE_NETWORK_METRICS, METRICS, metric_name
from .plot import (COLUMN_WIDTH_IN, DOUBLE_WIDTH_IN, MAX_CATEGORIES, MAX_SERIES, PANEL_HEIGHT_IN, FigureInfo, _upper_first, default_layout, draw,
                   metric_spec, param_columns, timeseries_spec, with_flow_direction)
from .sweep import normal_key
from .tables import ResultTables, mean_cis

#: Formats of the report's figures: PNG (embedded in the page) and vector PDF (for papers).
FIGURE_FORMATS = ("png", "pdf")
#: Tables with more rows are collapsed (``<details>``).
COLLAPSE_ROWS = 30
#: Significant digits of the tables' values (all digits of values of 1000 and more).
TABLE_DIGITS = 4
#: Time series drawn for every report.
HEADLINE_SERIES = ("goodput_kbps", "delay_mean_s", "jitter_ipdv_s", "rx_bytes_cumulative", "queue_packets", "cwnd_bytes",
                   "pacing_rate_bps")
#: Flow metrics of the report's tables: the headline ones, then what was generated (messages
#: and bytes the application handed over), sent (transport packets, their IP bytes and sizes)
#: and received.
TABLE_FLOW_METRICS = HEADLINE_FLOW_METRICS + ["tx_packets", "tx_bytes", "tx_segments", "tx_ip_bytes", "packet_size_min_b",
                                              "packet_size_max_b", "packet_size_mean_b", "rx_packets", "rx_bytes"]
TABLE_NETWORK_METRICS = ["mac_frames", "mac_load", "routing_packets", "normalized_routing_load", "drops_queue",
                         "drops_link_error", "energy_consumed_j_mean", "jain_fairness"]


@dataclass
class Figure:
    """A figure of the report: what it shows and its files."""

    info: FigureInfo
    files: list[Path] = field(default_factory=list)

    @property
    def png(self) -> Path:
        return next(p for p in self.files if p.suffix == ".png")


def _has_values(df: pl.DataFrame, m: str) -> bool:
    return m in df.columns and df[m].null_count() < df.height


def unknown_metrics(df: pl.DataFrame, keys: list[str]) -> list[str]:
    """Numeric columns of a table that the metric registry does not know (a new transport's),
    with values: the report's tables show them under their raw names."""
    known = set(METRICS) | set(FLOW_KEYS) | set(NETWORK_KEYS) | set(keys) | {"engine_seconds", "flow_direction"}
    return [c for c in df.columns if c not in known and df.schema[c].is_numeric() and _has_values(df, c)]


#: The sweep key of the transport models (ns-2's agents or tpsim's RFC models).
STACK_KEY = "simulation.stack"


def stack_split(flows: pl.DataFrame, keys: list[str], x: str) -> list[Any]:
    """The stacks to draw apart: when ``simulation.stack`` is swept and the other swept keys
    (but x) already make more series than a legend names, each stack gets its own figures
    (named ``METRIC-STACK``); otherwise ``[]`` and the stack is one more hue."""
    if x == STACK_KEY or STACK_KEY not in keys or STACK_KEY not in flows.columns or flows[STACK_KEY].n_unique() < 2:
        return []
    others = [k for k in keys if k not in (x, STACK_KEY) and k in flows.columns]
    series = flows.select(others).n_unique() if others else 1
    if series * flows[STACK_KEY].n_unique() <= MAX_SERIES:
        return []
    return list(dict.fromkeys(flows[STACK_KEY].to_list()))


class PlannedFigure:
    """A figure of the report's plan: :meth:`spec` gives its (spec, :class:`FigureInfo`)
    without drawing (:func:`tpsim.plot.metric_spec`); calling it draws it (a matplotlib
    figure)."""

    def __init__(self, make_spec: Callable[[], tuple[dict[str, Any], FigureInfo]]):
        self._make_spec = make_spec

    def spec(self) -> tuple[dict[str, Any], FigureInfo]:
        return self._make_spec()

    def __call__(self):
        return draw(*self._make_spec())


def figure_plan(res: ResultTables) -> list[tuple[str, PlannedFigure]]:
    """The report's figures as (file stem, :class:`PlannedFigure`), in report order: the
    headline flow metrics, the network metrics the scenario produces (each once per stack
    when :func:`stack_split` says so), the time series."""
    all_flows = with_flow_direction(res.flows)
    keys = list(res.param_keys)
    x, hues = default_layout(all_flows, keys)
    x, hues, facet = _chosen_layout(_report_table(res).get("layout") or {}, all_flows, x, hues)
    stacks = stack_split(all_flows, keys, x)
    # The scenario's [report] metrics, beside the headline ones.
    extra = (_report_table(res).get("metrics") or [])
    bulk = "app" in all_flows.columns and all_flows.height > 0 and (all_flows["app"] == "bulk").all()
    headline = HEADLINE_BULK_FLOW_METRICS if bulk else HEADLINE_FLOW_METRICS
    flow_metrics = list(dict.fromkeys(headline + [m for m in extra if m in all_flows.columns]))
    net_metrics = list(dict.fromkeys(HEADLINE_NETWORK_METRICS + [m for m in extra if m in res.network.columns]))
    plan: list[tuple[str, PlannedFigure]] = []
    for stack in stacks or [None]:
        def only(df: pl.DataFrame, stack=stack) -> pl.DataFrame:
            return df.filter(pl.col(STACK_KEY) == stack) if stack is not None else df

        suffix = f"-{stack}" if stack is not None else ""
        flows = only(all_flows)
        # Within one stack's figures the stack is held fixed: the title names it.
        fig_hues = [h for h in hues if stack is None or h != STACK_KEY]
        drawn = [m for m in flow_metrics if _has_values(flows, m)]
        # One point with a few flow directions: one figure, a panel per metric, instead of a
        # figure of a few bars each (many flow directions keep a distribution figure each,
        # drawn in parallel).
        overview = not keys and bool(drawn) and flows.select("flow", "direction").n_unique() <= MAX_CATEGORIES
        if overview:
            plan.append(("overview", PlannedFigure(lambda flows=flows: overview_spec(flows, drawn, x, fig_hues))))
        for m in [] if overview else drawn:
            plan.append((m + suffix, PlannedFigure(
                lambda m=m, flows=flows: metric_spec(flows, m, x, fig_hues, params=keys, facet=facet))))
        if keys and res.network.height:
            net = only(res.network)
            net_x = x if x in net.columns else (keys[0] if keys else "run")
            net_hues = [h for h in fig_hues if h in net.columns]
            net_facet = facet if facet in net.columns else None
            for m in net_metrics:
                # Only what the scenario produces: no routing figures for static routes, no
                # energy figures without an energy model, no figures of drops that never happen.
                if m not in net.columns or net[m].null_count() == net.height or not (net[m].fill_null(0) != 0).any():
                    if m != "mac_frames" or m not in net.columns:
                        continue
                plan.append((f"network-{m}{suffix}", PlannedFigure(
                    lambda m=m, net=net, net_x=net_x, net_hues=net_hues: metric_spec(net, m, net_x, net_hues, params=keys,
                                                                                     facet=net_facet))))
    if res.has("timeseries"):
        # Read lazily: which series each point and run has, then only the rows each figure
        # draws (a study's series do not fit memory at once).
        ts = res.scan("timeseries")
        have_all = ts.filter(pl.col("value").is_not_null()).select("series", "point", "run").unique().collect()

        def rows(series: str, points: list[int], run: int, flows: Optional[list[int]] = None) -> pl.DataFrame:
            keep = (pl.col("series") == series) & pl.col("point").is_in(points) & (pl.col("run") == run)
            if flows is not None:
                keep = keep & pl.col("flow").is_in(flows)
            return ts.filter(keep).collect()

        compared, drawn_flows = timeseries_points(res, keys, hues)
        for series in HEADLINE_SERIES:
            have = have_all.filter(pl.col("series") == series)
            if have.height:
                with_series = set(have["point"].to_list())
                points = [p for p in compared if p in with_series]
                if series == "queue_packets":
                    # Queues are not compared across points: the point with the longest mean
                    # queue (empty queues show nothing).
                    by_point = (ts.filter((pl.col("series") == series) & pl.col("value").is_not_null())
                                .group_by("point").agg(pl.col("value").mean()).sort(["value", "point"], descending=[True, False])
                                .collect())
                    points = [int(by_point["point"][0])]
                elif not points:
                    # The first sweep point that has the series (cwnd only exists for TCP).
                    points = [int(have["point"].min())]
                run = int(have.filter(pl.col("point") == points[0])["run"].min())
                only = drawn_flows if series != "queue_packets" else None
                plan.append((f"timeseries-{series}", PlannedFigure(
                    lambda s=series, p=points, r=run, f=only: timeseries_spec(rows(s, p, r, f), s, run=r, point=p, flows=res.flows))))
        # Multi-homed associations: goodput per receiving address, one line per (direction, path).
        path_runs = ts.filter(pl.col("series").str.starts_with("goodput_path")).select("point", "run").unique().collect()
        if path_runs.height:
            point = int(path_runs["point"].min())
            run = int(path_runs.filter(pl.col("point") == point)["run"].min())
            per_path = (ts.filter(pl.col("series").str.starts_with("goodput_path") & (pl.col("point") == point)
                                  & (pl.col("run") == run))
                        .with_columns(pl.concat_str([pl.col("direction"), pl.lit(", path "),
                                                     pl.col("series").str.extract(r"goodput_path(\d+)_kbps")]).alias("direction"),
                                      pl.lit("goodput_kbps").alias("series"))
                        .collect())
            plan.append(("timeseries-goodput-per-path", PlannedFigure(
                lambda p=point, r=run: timeseries_spec(per_path, "goodput_kbps", run=r, point=p, flows=res.flows,
                                                       title=f"Goodput per path (the receiver's address); run {r}"))))
    ack_cwnd = _ack_cwnd(res)
    if ack_cwnd is not None:
        one, col, point, run, title = ack_cwnd
        plan.append(("acks-cwnd", PlannedFigure(
            lambda: timeseries_spec(one, col, run=run, point=point, flows=res.flows, title=title))))
    return plan


def overview_spec(flows: pl.DataFrame, metrics: Sequence[str], x: str, hues: Sequence[str]) -> tuple[dict[str, Any], FigureInfo]:
    """(spec, info) of a run without swept keys: one figure, a panel per metric (each its own
    y axis within the metric's range) of ``metric_spec(flows, m, x, hues)``, the series'
    legend once. ``metrics``: flows-table columns with values."""
    parts = [metric_spec(flows, m, x, list(hues), title="") for m in metrics]
    panels = []
    for i, (sp, inf) in enumerate(parts):
        panel = {**sp["panels"][0], "title": _upper_first(metric_display(inf.metric, []).label.split(" (")[0])}
        if i:
            panel.pop("legend", None)
        panels.append(panel)
    ncols = min(3, len(panels))
    nrows = math.ceil(len(panels) / ncols)
    first, info = parts[0]
    legend = first.get("legend")
    legend_h = 0.17 * math.ceil(len(legend["entries"]) / legend.get("ncols", 2)) if legend else 0.0
    spec = {"size": [DOUBLE_WIDTH_IN if ncols > 1 else COLUMN_WIDTH_IN, PANEL_HEIGHT_IN * nrows + 0.25 + legend_h],
            "nrows": nrows, "ncols": ncols,
            "sharey": False, "suptitle": "Headline metrics", "panels": panels, "legend": legend}
    names = ", ".join(metric_display(m, []).label.split(" (")[0] for m in metrics)
    caption = (f"{_upper_first(names)}: a panel each, against {info.xlabel}"
               + (f", one bar per {', '.join(key_name(h) for h in info.hue)}" if info.hue else "")
               + f". Aggregation: {info.aggregation}.")
    return spec, FigureInfo(kind=info.kind, metric=", ".join(metrics), title="Headline metrics", xlabel=info.xlabel, ylabel="",
                            x=info.x, x_numeric=info.x_numeric, x_values=info.x_values, x_positions=info.x_positions,
                            hue=info.hue, series=info.series, aggregation=info.aggregation, caption=caption,
                            colors=info.colors, facets=[p["title"] for p in panels])


#: In a results directory's ``figures/``: the figures ``tpsim plot --keep`` asked the report to
#: keep (a JSON list of :func:`custom_spec` requests, each with its file stem ``name``).
KEPT_FIGURES = "kept.json"


def custom_spec(res: ResultTables, req: dict[str, Any]) -> tuple[dict[str, Any], FigureInfo]:
    """(spec, info) of a ``tpsim plot`` figure from ``req``: ``{"series", "point", "run"}``
    for a time series, else ``{"metric", "x", "hue", "facet", "kind"}`` (a flows or network
    metric; ``x``/``hue`` ``None`` take the report's layout); both take ``title``,
    ``xlabel``, ``ylabel``.

    Raises:
        ValueError: a column or series the tables do not have.
    """
    labels = {k: req.get(k) for k in ("title", "xlabel", "ylabel")}
    if req.get("series"):
        point, run = int(req.get("point") or 0), int(req.get("run") or 0)
        ts = res.scan("timeseries").filter((pl.col("series") == req["series"]) & (pl.col("point") == point)
                                           & (pl.col("run") == run)).collect()
        return timeseries_spec(ts, req["series"], run=run, point=point, flows=res.flows, **labels)
    df, x, hues, params = custom_layout(res, req["metric"], req.get("x"), req.get("hue"))
    return metric_spec(df, req["metric"], x, hues, kind=req.get("kind") or "auto", facet=req.get("facet"), params=params,
                       **labels)


def custom_layout(res: ResultTables, metric: str, x: Optional[str] = None,
                  hue: Optional[Sequence[str]] = None) -> tuple[pl.DataFrame, str, list[str], list[str]]:
    """(table, x, hues, swept keys) of a ``tpsim plot`` figure of ``metric``: the flows
    table (with ``flow_direction``) if it has the column, else the network table; ``x`` and
    ``hue`` default to the report's layout."""
    flows = with_flow_direction(res.flows) if "flow" in res.flows.columns else res.flows
    params = param_columns(flows) or list(res.param_keys)
    df = flows if metric in flows.columns else res.network
    dx, dhues = default_layout(flows, params)
    x = x or (dx if dx in df.columns else (params[0] if params else "run"))
    hues = list(hue) if hue is not None else [h for h in dhues if h in df.columns]
    return df, x, hues, params


def kept_requests(figdir: Path) -> list[dict[str, Any]]:
    """The requests of ``figdir``'s :data:`KEPT_FIGURES` (none without the file).

    Raises:
        ResultsError: if the file is not a list of requests with a ``name``.
    """
    from .files import ResultsError

    path = Path(figdir) / KEPT_FIGURES
    try:
        kept = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return []
    except (OSError, ValueError) as e:
        raise ResultsError(f"{path}: cannot read the kept figures ({e}); delete it or fix it") from None
    if not isinstance(kept, list) or not all(isinstance(r, dict) and isinstance(r.get("name"), str) for r in kept):
        raise ResultsError(f"{path}: expected a list of figure requests, each with a name; delete it or fix it")
    return kept


def _kept_spec(res: ResultTables, req: dict[str, Any], figdir: Path) -> tuple[dict[str, Any], FigureInfo]:
    """:func:`custom_spec` of a kept figure; a request the tables no longer answer (a column
    gone) is a ResultsError naming it."""
    from .files import ResultsError

    try:
        return custom_spec(res, req)
    except (ValueError, KeyError, TypeError) as e:
        raise ResultsError(f"{Path(figdir) / KEPT_FIGURES}: kept figure {req['name']!r}: {e}; "
                           "remove it from the file or draw it again with tpsim plot --keep") from None


def keep_request(figdir: Path, req: dict[str, Any]) -> None:
    """Adds ``req`` (with its ``name``) to ``figdir``'s kept figures, replacing one of the
    same name; written atomically."""
    kept = [r for r in kept_requests(figdir) if r["name"] != req["name"]] + [req]
    Path(figdir).mkdir(parents=True, exist_ok=True)
    atomic_write_text(Path(figdir) / KEPT_FIGURES, json.dumps(kept, indent=2, ensure_ascii=False) + "\n")


def _chosen_layout(layout: dict[str, Any], flows: pl.DataFrame, x: str, hues: list[str]) -> tuple[str, list[str], Optional[str]]:
    """(x, hues, facet) of the headline figures: the scenario's ``[report] layout`` (swept keys
    as written in ``[sweep]``, or ``"case"``) where it names columns of the flows table, else
    :func:`default_layout`'s ``x`` and ``hues`` and no facet. A key the layout moves to x, hue
    or facet leaves the others."""
    def col(key: Any) -> Optional[str]:
        key = normal_key(key) if isinstance(key, str) else None
        return key if key in flows.columns else None

    lx, lhue, lfacet = col(layout.get("x")), col(layout.get("hue")), col(layout.get("facet"))
    if lx is None and x in (lhue, lfacet):
        # The default x is taken by the layout's hue or facet: the next swept key instead.
        x = next((h for h in hues if h not in (lhue, lfacet)), x)
    x = lx or x
    hues = [lhue] if lhue else [h for h in hues if h != x]
    hues = [h for h in hues if h not in (x, lfacet)]
    return x, hues, lfacet


def _report_table(res: ResultTables) -> dict[str, Any]:
    """The scenario's ``[report]`` table (empty without one)."""
    return res.resolved_scenario().get("report") or {}


def timeseries_points(res: ResultTables, keys: list[str], hues: list[str]) -> tuple[list[int], Optional[list[int]]]:
    """The sweep points whose time series the report compares in one figure per series, and
    the flows drawn (``None``: all). The scenario's ``[report]`` table decides
    (``timeseries_at``: the swept keys' values the points must have; ``timeseries_flows``);
    without ``timeseries_at``, or when no point matches it (a ``--sweep`` replaced the
    values), the first point and the points that differ from it only in the keys the
    headline figures draw as lines (``hues``) or in keys whose values are names (a sweep of
    ``transport`` compares the transports' windows), if their flow directions fit in
    :data:`MAX_SERIES` lines; otherwise the first point alone."""
    report = _report_table(res)
    drawn_flows = report.get("timeseries_flows")
    cols = [k for k in keys if k in res.flows.columns]
    table = res.flows.select(["point", *cols]).unique(maintain_order=True).sort("point")
    if table.height == 0:
        return [0], drawn_flows
    at = {k: v for k, v in (report.get("timeseries_at") or {}).items() if k in cols}
    if at:
        chosen = [r["point"] for r in table.iter_rows(named=True)
                  if all(r[k] == v or str(r[k]) == str(v) for k, v in at.items())]
        if chosen:
            return chosen, drawn_flows
    first = table.row(0, named=True)
    fixed = [k for k in cols if k not in hues and table[k].dtype != pl.Utf8]
    chosen = [r["point"] for r in table.iter_rows(named=True) if all(r[k] == first[k] for k in fixed)]
    lines = res.flows.filter(pl.col("point").is_in(chosen) & (pl.col("run") == res.flows["run"].min()))
    if drawn_flows is not None:
        lines = lines.filter(pl.col("flow").is_in(drawn_flows))
    return (chosen if lines.height <= MAX_SERIES else [first["point"]]), drawn_flows


def _ack_cwnd(res: ResultTables) -> Optional[tuple[pl.DataFrame, str, int, int, str]]:
    """The congestion window at every acknowledgement of the first window-based flow
    direction (lowest point, run, flow) of the per-ACK samples, as a one-series long table
    for :func:`timeseries_figure`, with its column name, point, run and title; ``None``
    without per-ACK samples of a window. Reads only that flow direction's samples."""
    if not res.has("acks"):
        return None
    acks = res.scan("acks")
    columns = acks.collect_schema().names()
    for col in ("cwnd_bytes", "cwnd_packets"):
        if col not in columns:
            continue
        have = acks.filter(pl.col(col).is_not_null())
        firsts = have.select("point", "run", "flow", "direction").sort(["point", "run", "flow", "direction"]).head(1).collect()
        if firsts.height == 0:
            continue
        first = firsts.row(0, named=True)
        point, run, flow, direction = first["point"], first["run"], first["flow"], first["direction"]
        one = have.filter((pl.col("point") == point) & (pl.col("run") == run) & (pl.col("flow") == flow)
                          & (pl.col("direction") == direction))
        keys = [c for c in columns[: columns.index("time_s")] if c != "seed"]
        one = one.select(keys + ["time_s", "flow", "direction", pl.col(col).alias("value")]).with_columns(
            pl.lit(col).alias("series")).collect()
        title = f"Congestion window at every ACK: flow {flow} {direction}; run {run}"
        return one, col, int(point), int(run), title
    return None


def _drawing_key() -> str:
    """What a figure's bytes depend on besides its spec and formats: the drawing code
    (:mod:`tpsim._draw`, with the style and the font recipe) and the versions of the libraries
    that write the files."""
    from importlib import metadata

    from . import _draw

    parts = [hashlib.sha256(Path(_draw.__file__).read_bytes()).hexdigest()]
    for lib in ("matplotlib", "pillow", "fonttools"):
        try:
            parts.append(f"{lib} {metadata.version(lib)}")
        except metadata.PackageNotFoundError:
            parts.append(f"{lib} -")
    return "\n".join(parts)


def _spec_key(spec: dict[str, Any], formats: Sequence[str], drawing: str) -> str:
    """SHA-256 (hex) of everything a figure's files are made from."""
    blob = json.dumps({"spec": spec, "formats": list(formats), "drawing": drawing}, sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()


def _file_sha256(path: Path) -> Optional[str]:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None


class FigureJobs:
    """The report's figures being drawn: specs computed here (polars), drawn by worker
    processes (or here, with one worker) while this process does other work; :meth:`finish`
    writes the files and ``figures.json`` and returns the figures. The files are the same
    bytes whatever the number of workers.

    A figure whose files in ``figdir`` were made from the same spec, formats and drawing code
    (``figures.json`` records the hash of these and of each file) and are unchanged is kept,
    not drawn again: a report rebuilt from the same tables draws nothing."""

    def __init__(self, res: ResultTables, figdir: Path, progress: Optional[Callable[[int, int], None]] = None,
                 formats: Sequence[str] = FIGURE_FORMATS, workers: Optional[int] = None):
        self.figdir = Path(figdir)
        self.progress = progress
        self.formats = list(formats)
        # Workers are taken at the first figure that needs drawing (the command line started
        # them early, tpsim._pool.prestart, so that they have imported matplotlib by then).
        self.pool: Optional[_pool.Pool] = None
        plan = figure_plan(res) + [(r["name"], PlannedFigure(lambda r=r: _kept_spec(res, r, self.figdir)))
                                   for r in kept_requests(self.figdir)]
        previous = self._previous()
        drawing = _drawing_key()
        if progress:
            progress(0, len(plan))
        self.items: list[tuple[dict[str, Any], FigureInfo]] = []
        #: Per figure: its spec key, and its files' hashes if they are kept as they are.
        self.keys: list[str] = []
        self.kept: dict[int, dict[str, str]] = {}
        asked_pool = False
        try:
            for i, (stem, planned) in enumerate(plan):
                spec, info = planned.spec()
                info.name = stem
                self.items.append((spec, info))
                key = _spec_key(spec, self.formats, drawing)
                self.keys.append(key)
                hashes = self._unchanged(previous.get(stem), key)
                if hashes is not None:
                    self.kept[i] = hashes
                    continue
                if not asked_pool:  # at the first figure to draw: at most one per figure left
                    asked_pool = True
                    n = _pool.workers_for(len(plan) - i, workers)
                    if n > 1:
                        self.pool = _pool.take(n)
                if self.pool is not None:
                    self.pool.submit(i, spec, self.formats)
        except BaseException:
            self._close()
            raise

    def _previous(self) -> dict[str, dict[str, Any]]:
        """The figures of the report already in ``figdir``, by name (``figures.json``)."""
        try:
            record = json.loads((self.figdir / "figures.json").read_text(encoding="utf-8"))
            return {r["name"]: r for r in record if isinstance(r, dict) and "name" in r}
        except (OSError, ValueError, TypeError):
            return {}

    def _unchanged(self, entry: Optional[dict[str, Any]], key: str) -> Optional[dict[str, str]]:
        """The files' hashes of a figure already drawn from the same spec key whose files are
        all there unchanged; ``None`` otherwise."""
        if not entry or entry.get("spec_sha256") != key:
            return None
        hashes = entry.get("sha256") or {}
        if set(hashes) != set(self.formats):
            return None
        for ext, h in hashes.items():
            if _file_sha256(self.figdir / f"{entry['name']}.{ext}") != h:
                return None
        return dict(hashes)

    def cancel(self) -> None:
        """Stops the workers (figures not drawn yet are not drawn)."""
        self._close()

    def _close(self) -> None:
        if self.pool is not None:
            self.pool.close()
            self.pool = None

    def _write(self, info: FigureInfo, content: dict[str, bytes]) -> list[Path]:
        paths = []
        for ext in self.formats:
            p = self.figdir / f"{info.name}.{ext}"
            _atomic(p, lambda tmp, data=content[ext]: tmp.write_bytes(data))
            paths.append(p)
        return paths

    def finish(self) -> list[Figure]:
        from . import _draw

        total = len(self.items)
        files: dict[int, list[Path]] = {}
        hashes: dict[int, dict[str, str]] = dict(self.kept)
        for i in self.kept:
            files[i] = [self.figdir / f"{self.items[i][1].name}.{ext}" for ext in self.formats]
        if self.progress and files:
            self.progress(len(files), total)

        def done(jid: int, content: dict[str, bytes]) -> None:
            files[jid] = self._write(self.items[jid][1], content)
            hashes[jid] = {ext: hashlib.sha256(content[ext]).hexdigest() for ext in self.formats}
            if self.progress:
                self.progress(len(files), total)

        try:
            if self.pool is not None:
                for _ in range(total - len(self.kept)):
                    jid, content, error, _ = self.pool.answers.get()
                    if content is None:  # a worker failed: draw it here (an error in the figure raises here)
                        content = _draw.render(self.items[jid][0], self.formats)
                    done(jid, content)
            else:
                for jid, (spec, info) in enumerate(self.items):
                    if jid not in files:
                        done(jid, _draw.render(spec, self.formats))
        finally:
            self._close()
        figs = [Figure(info, files[i]) for i, (_, info) in enumerate(self.items)]
        record = [{**f.info.to_dict(), "files": [p.name for p in f.files], "spec_sha256": self.keys[i],
                   "sha256": hashes[i]} for i, f in enumerate(figs)]
        atomic_write_text(self.figdir / "figures.json", json.dumps(record, indent=2, ensure_ascii=False) + "\n")
        return figs


def make_figures(res: ResultTables, figdir: Path, progress: Optional[Callable[[int, int], None]] = None,
                 formats: tuple[str, ...] = FIGURE_FORMATS, workers: Optional[int] = None) -> list[Figure]:
    """Draws the report's figures into ``figdir`` (each in ``formats``) and writes
    ``figdir/figures.json``, the record of every figure (:class:`tpsim.plot.FigureInfo`:
    labels, x values, aggregation, caption, files). ``progress(done, total)`` is called as
    figures are done. ``workers``: processes drawing them (default: one per core, see
    :func:`tpsim._pool.workers_for`); the files are the same bytes with any number."""
    return FigureJobs(res, figdir, progress, formats, workers).finish()


# --- tables -------------------------------------------------------------------------------


@dataclass
class Table:
    """A table of the report: an anchor, a title, a note, the header and the rows (text)."""

    id: str
    title: str
    note: str
    header: list[str]
    rows: list[list[str]]
    numeric: list[bool] = field(default_factory=list)

    @property
    def collapsed(self) -> bool:
        return len(self.rows) > COLLAPSE_ROWS


def _num(v: float) -> str:
    """A table value: :data:`TABLE_DIGITS` significant digits, whole numbers from 1000 on
    (``18.82823`` -> ``18.83``, ``16450.5`` -> ``16450``)."""
    if not math.isfinite(v):
        return fmt_number(v)
    if abs(v) >= 10 ** (TABLE_DIGITS - 1):
        return f"{v:.0f}"
    return fmt_number(float(f"{v:.{TABLE_DIGITS}g}"))


def _cell(mean: Optional[float], lo: Optional[float], hi: Optional[float], scale: float) -> str:
    if mean is None or (isinstance(mean, float) and math.isnan(mean)):
        return ""
    text = _num(mean * scale)
    if lo is not None and hi is not None and not (math.isnan(lo) or math.isnan(hi)):
        text += f" [{_num(lo * scale)}, {_num(hi * scale)}]"
    return text


def _param_values(res: ResultTables, key: str) -> list[Any]:
    col = res.flows[key] if key in res.flows.columns else res.network[key]
    return col.unique(maintain_order=True).to_list()


def _param_ticks(res: ResultTables, key: str) -> dict[str, str]:
    """A numeric swept key's values (as text) -> their text in the unit of the column's
    header; empty for categories. Computed once per key and tables."""
    cache = res.__dict__.setdefault("_report_ticks", {})
    ident = (key, id(res.flows), id(res.network))
    if ident not in cache:
        vals = _param_values(res, key)
        ax = axis_for(vals)
        cache[ident] = {str(v): t for v, t in zip(vals, ax.ticklabels)} if ax.numeric else {}
    return cache[ident]


def _param_cells(res: ResultTables, keys: list[str], row: dict[str, Any]) -> list[str]:
    """A row's swept values: numbers in the unit of the column's header (``5`` under ``node
    speed (m/s)``), categories as text."""
    return [_param_ticks(res, k).get(str(row[k]), value_text(row[k])) for k in keys]


def _param_header(res: ResultTables, keys: list[str], per_flow: bool = False) -> list[str]:
    """Headers of the swept keys (name and unit); ``per_flow``: in a table of flows, a key of
    one flow names its flow (``transport (flow 0)``), not to be read as each row's."""
    return [key_label(k, _param_values(res, k), flow_index=per_flow) for k in keys]


def _append_ci_cells(rows: list[list[str]], metrics: list[str], samples: dict[str, list[list[float]]], disp: dict) -> None:
    """Appends to each row, metric by metric, the cell of the mean and [95 % CI] of its
    sample (``samples[metric][row]``; empty: an empty cell)."""
    for m in metrics:
        filled = [i for i, v in enumerate(samples[m]) if v]
        cells = [""] * len(rows)
        for i, ci in zip(filled, mean_cis(m, [samples[m][i] for i in filled])):
            cells[i] = _cell(*ci, disp[m].scale)
        for row, cell in zip(rows, cells):
            row.append(cell)


def _one_run(res: ResultTables) -> bool:
    """Whether the results have one replication (or none): no interval to show."""
    return res.flows.height == 0 or res.flows["run"].n_unique() == 1


def _over_runs(res: ResultTables) -> str:
    """How the tables' cells summarise the runs: the mean and its interval, or, with one
    replication, its value alone."""
    return "the value of the one run (one replication: no interval)" if _one_run(res) else "the mean and [95 % CI] over the runs"


def _role_table(res: ResultTables, keys: list[str], metrics: list[str]) -> Optional[Table]:
    """Per point and role: each run's mean over the role's flow directions, then the mean
    and 95 % CI over the runs (as the figures)."""
    flows = res.flows
    if flows.height == 0:
        return None
    metrics = [m for m in metrics if _has_values(flows, m)]
    group = ["point", *keys, "role"]
    per_run = flows.group_by(group + ["run"], maintain_order=True).agg(
        *[pl.col(m).cast(pl.Float64).mean() for m in metrics], pl.len().alias("_rows"))
    disp = {m: metric_display(m, flows[m].drop_nulls().to_list()) for m in metrics}
    rows = []
    samples: dict[str, list] = {m: [] for m in metrics}
    for key, g in per_run.group_by(group, maintain_order=True):
        row = dict(zip(group, key))
        rows.append(_param_cells(res, keys, row) + [str(row["role"]), str(int(g["_rows"].max()))])
        for m in metrics:
            samples[m].append(g[m].drop_nulls().to_list())
    _append_ci_cells(rows, metrics, samples, disp)
    header = _param_header(res, keys, per_flow=True) + ["role", "flow directions"] + [disp[m].label for m in metrics]
    return Table("table-roles", "Flows by role",
                 f"Each run's mean over the flow directions of one role, then {_over_runs(res)} "
                 "(the values of the figures).", header, rows, [False] * (len(keys) + 1) + [True] * (1 + len(metrics)))


def _averaged_table(res: ResultTables, keys: list[str], metrics: list[str]) -> Optional[Table]:
    """The metrics averaged over the figures' numeric x (study A's "averaged over the
    intervals"), per combination of the other swept keys and role: each run's mean over the
    x values and flow directions, then the mean and 95 % CI over the runs. ``None`` without a
    numeric x or other swept keys."""
    flows = with_flow_direction(res.flows)
    if flows.height == 0 or not keys:
        return None
    x, _ = default_layout(flows, keys)
    if x not in keys or not axis_for(_param_values(res, x)).numeric:
        return None
    others = [k for k in keys if k != x]
    if not others:
        return None
    metrics = [m for m in metrics if _has_values(flows, m)]
    group = [*others, "role"] if "role" in flows.columns else others
    per_run = flows.group_by(group + ["run"], maintain_order=True).agg(*[pl.col(m).cast(pl.Float64).mean() for m in metrics])
    disp = {m: metric_display(m, flows[m].drop_nulls().to_list()) for m in metrics}
    rows = []
    samples: dict[str, list] = {m: [] for m in metrics}
    for key, g in per_run.group_by(group, maintain_order=True):
        row = dict(zip(group, key))
        rows.append(_param_cells(res, others, row) + ([str(row["role"])] if "role" in row else []))
        for m in metrics:
            samples[m].append(g[m].drop_nulls().to_list())
    _append_ci_cells(rows, metrics, samples, disp)
    header = _param_header(res, others, per_flow=True) + (["role"] if "role" in group else []) + [disp[m].label for m in metrics]
    x_name = key_name(x)
    return Table("table-averaged", f"Averaged over {x_name}",
                 f"Each run's mean over every {x_name} and flow direction of one role, then {_over_runs(res)}.",
                 header, rows, [False] * (len(group)) + [True] * len(metrics))


def _flow_table(res: ResultTables, summary: pl.DataFrame, keys: list[str], metrics: list[str]) -> Optional[Table]:
    """Per point, flow and direction: mean and [95 % CI] over the runs (summary.csv)."""
    sub = summary.filter((pl.col("table") == "flows") & pl.col("metric").is_in(metrics)) if summary.height else summary
    if sub.height == 0:
        return None
    metrics = [m for m in metrics if m in set(sub["metric"].to_list())]
    flows = res.flows
    info_cols = [c for c in ("transport", "role", "app", "src", "dst") if c in flows.columns]
    per_flow = flows.group_by(["point", "flow"], maintain_order=True).agg(
        *[pl.col(c).unique(maintain_order=True) for c in info_cols])
    info = {(r["point"], r["flow"]): r for r in per_flow.iter_rows(named=True)}
    disp = {m: metric_display(m, sub.filter(pl.col("metric") == m)["mean"].drop_nulls().to_list()) for m in metrics}
    cells: dict[tuple, dict[str, str]] = {}
    order: list[tuple] = []
    for r in sub.iter_rows(named=True):
        k = (r["point"], r["flow"], r["direction"])
        if k not in cells:
            cells[k] = {"_row": r}  # type: ignore[dict-item]
            order.append(k)
        cells[k][r["metric"]] = _cell(r["mean"], r["ci95_low"], r["ci95_high"], disp[r["metric"]].scale)
    rows = []
    for k in order:
        r = cells[k]["_row"]  # type: ignore[index]
        fi = info.get((k[0], k[1]), {})

        def one(c: str) -> str:
            v = fi.get(c) or []
            return value_text(v[0]) if len(v) == 1 else ("random per run" if c in ("src", "dst") and v else ", ".join(map(str, v)))

        rows.append(_param_cells(res, keys, r) + [str(k[1]), str(k[2])] + [one(c) for c in info_cols]
                    + [cells[k].get(m, "") for m in metrics])
    header = _param_header(res, keys, per_flow=True) + ["flow", "direction"] + info_cols + [disp[m].label for m in metrics]
    return Table("table-flows", "Every flow",
                 f"Each flow direction: {_over_runs(res)} (summary.csv"
                 + ("" if _one_run(res) else "; bootstrap percentile intervals") + ").",
                 header, rows, [False] * (len(keys) + 2 + len(info_cols)) + [True] * len(metrics))


def _network_table(res: ResultTables, summary: pl.DataFrame, keys: list[str], metrics: list[str]) -> Optional[Table]:
    sub = summary.filter((pl.col("table") == "network") & pl.col("metric").is_in(metrics)) if summary.height else summary
    if sub.height == 0:
        return None
    present = set(sub["metric"].to_list())
    metrics = [m for m in metrics if m in present and _has_values(res.network, m)
               and ((res.network[m].fill_null(0) != 0).any() or m == "mac_frames")]
    if not metrics:
        return None
    disp = {m: metric_display(m, sub.filter(pl.col("metric") == m)["mean"].drop_nulls().to_list()) for m in metrics}
    rows: dict[int, list[str]] = {}
    cells: dict[tuple[int, str], str] = {}
    for r in sub.iter_rows(named=True):
        rows.setdefault(r["point"], _param_cells(res, keys, r) if keys else [str(r["point"])])
        if r["metric"] in disp:
            cells[(r["point"], r["metric"])] = _cell(r["mean"], r["ci95_low"], r["ci95_high"], disp[r["metric"]].scale)
    out = [rows[p] + [cells.get((p, m), "") for m in metrics] for p in rows]
    header = (_param_header(res, keys) if keys else ["point"]) + [disp[m].label for m in metrics]
    return Table("table-network", "Network",
                 f"Network-wide value of each run: {_over_runs(res)}.", header, out,
                 [False] * max(len(keys), 1) + [True] * len(metrics))


def _over_flows(c: str) -> pl.Expr:
    """Column ``c`` of one run's flow directions as one value: counts (messages, packets,
    bytes) summed, the packet sizes' smallest, largest and mean per packet sent, anything
    else the mean."""
    if c == "packet_size_min_b":
        return pl.col(c).min()
    if c == "packet_size_max_b":
        return pl.col(c).max()
    if c == "packet_size_mean_b":
        return (pl.col(c) * pl.col("tx_segments")).sum() / pl.col("tx_segments").sum()
    if METRICS.get(c, ("",))[0] in ("messages", "packets", "bytes"):
        return pl.col(c).sum()
    return pl.col(c).mean()


def _compared_table(res: ResultTables, keys: list[str]) -> Optional[Table]:
    """The scenario's ``[report] table``: those flow metrics at the compared points
    (:func:`timeseries_points`), one row per point: each run's value over every flow
    direction (:func:`_over_flows`), then the mean over the runs."""
    cols = [c for c in _report_table(res).get("table") or [] if _has_values(res.flows, c)]
    if not cols:
        return None
    _, hues = default_layout(with_flow_direction(res.flows), keys)
    points, _ = timeseries_points(res, keys, hues)
    f = res.flows.filter(pl.col("point").is_in(points))
    varying = [k for k in keys if k in f.columns and f[k].n_unique() > 1]
    fixed = [k for k in keys if k in f.columns and k not in varying]
    per_run = f.group_by(["point", *varying, "run"], maintain_order=True).agg(*[_over_flows(c).alias(c) for c in cols])
    per_point = per_run.group_by(["point", *varying], maintain_order=True).agg(pl.col(cols).mean()).sort("point")
    disp = {c: metric_display(c, per_point[c].drop_nulls().to_list()) for c in cols}
    rows = [_param_cells(res, varying, r) + ["" if r[c] is None else _num(r[c] * disp[c].scale) for c in cols]
            for r in per_point.iter_rows(named=True)]
    header = _param_header(res, varying) + [disp[c].label for c in cols]
    at = ", ".join(f"{key_name(k)} = {value_text(f[k][0])}" for k in fixed)
    runs = f["run"].n_unique()
    return Table("table-compared", "At the compared points" + (f": {at}" if at else ""),
                 "Every flow direction of each point together (counts summed; packet sizes: the smallest, the largest "
                 "and the mean per packet sent)" + (f", mean over {runs} runs" if runs > 1 else ", one run")
                 + " (the scenario's [report] table).", header, rows, [False] * len(varying) + [True] * len(cols))


def _points_table(res: ResultTables) -> Optional[Table]:
    if not (res.points and res.param_keys):
        return None
    keys = list(res.param_keys)
    rows = []
    for p in res.points:
        case = getattr(p, "case", None)
        settings = ", ".join(f"{k} = {json.dumps(v)}" for k, v in (case or {}).get("settings", {}).items()) if case else ""
        rows.append([str(p.index)] + [value_text(p.params.get(k)) for k in keys] + ([settings] if any(getattr(q, "case", None) for q in res.points) else []))
    has_cases = any(getattr(q, "case", None) for q in res.points)
    header = ["point"] + [key_name(k) + f" ({k})" if key_name(k) != k else k for k in keys] + (["case settings"] if has_cases else [])
    return Table("table-points", "Sweep points", "Every point of the sweep (cases x grid) and its values.", header, rows,
                 [True] + [False] * (len(header) - 1))


def _definitions() -> Table:
    rows = [[k, metric_name(k), u, d] for k, (u, d) in METRICS.items()]
    return Table("table-definitions", "Metric definitions", "Full definitions: docs/metrics.md.",
                 ["column", "name", "unit", "definition"], rows, [False] * 4)


# --- the page -----------------------------------------------------------------------------


def _ns(value: Any) -> Optional[int]:
    """A resolved duration (``"20000000ns"``) in ns."""
    if isinstance(value, str) and value.endswith("ns") and value[:-2].isdigit():
        return int(value[:-2])
    return None


def _timing(sim: dict[str, Any]) -> str:
    """The simulated time of each run, as the report's header states it (``500s + 5s drain;
    counters from 50s (warm-up)``)."""
    dur, drain, warm = (_ns(sim.get(k)) for k in ("duration", "drain", "warmup"))
    if dur is None:
        return ""
    text = f"{fmt_seconds(dur)} simulated per run"
    if drain:
        text += f" (+ {fmt_seconds(drain)} drain)"
    if warm:
        text += f"; tables count from {fmt_seconds(warm)} on (warm-up)"
    return text


def page_parts(res: ResultTables) -> dict[str, Any]:
    """Everything of the report's page but the figures: the header's facts, the tables, the
    movie, the definitions (computed while the figures are being drawn)."""
    base = res.base
    resolved = res.resolved_scenario()
    sim = resolved.get("simulation", {}) or {}
    keys = list(res.param_keys)
    summary = res.summary()
    tables = [t for t in (
        _compared_table(res, keys),
        _role_table(res, keys, TABLE_FLOW_METRICS),
        _averaged_table(res, keys, HEADLINE_FLOW_METRICS),
        _network_table(res, summary, keys, TABLE_NETWORK_METRICS + unknown_metrics(res.network, keys)),
        _flow_table(res, summary, keys, TABLE_FLOW_METRICS + unknown_metrics(res.flows, keys)),
        _points_table(res),
    ) if t is not None]
    return {
        "name": base.name if base is not None else "tpsim run", "description": sim.get("description") or "",
        "timing": _timing(sim), "resolved": resolved, "tables": tables, "movie": _movie(res), "definitions": _definitions(),
        "seeds": sorted(set(res.flows["seed"].to_list())) if res.flows.height else [],
        "runs": res.flows["run"].n_unique() if res.flows.height else 0,
    }


def render(res: ResultTables, figs: list[Figure], command: Optional[str] = None, parts: Optional[dict[str, Any]] = None) -> str:
    """The report's HTML (``parts``: :func:`page_parts`, computed here if not given)."""
    base = res.base
    parts = parts if parts is not None else page_parts(res)
    resolved, tables, defs, movie = parts["resolved"], parts["tables"], parts["definitions"], parts["movie"]
    figures = []
    for f in figs:
        data = base64.b64encode(f.png.read_bytes()).decode("ascii")
        figures.append({
            "id": f"fig-{f.info.name}", "title": f.info.title or f.info.ylabel, "caption": f.info.caption,
            "src": f"data:image/png;base64,{data}", "wide": bool(f.info.facets and len(f.info.facets) > 1),
            "files": [{"name": p.suffix[1:].upper(), "href": f"figures/{p.name}"} for p in f.files if p.suffix != ".png"],
        })
    toc = [{"id": "figures", "title": "Figures", "children": [{"id": f["id"], "title": f["title"]} for f in figures]}]
    if movie is not None:
        toc.append({"id": "movie", "title": "Network movie", "children": []})
    toc += [{"id": "tables", "title": "Tables", "children": [{"id": t.id, "title": t.title} for t in tables]},
            {"id": defs.id, "title": defs.title, "children": []}]
    if base is not None:
        toc.append({"id": "scenario", "title": "Scenario", "children": []})
    written = getattr(base, "written", getattr(base, "text", "")) if base is not None else ""
    return environment().get_template("report.html.j2").render(
        name=parts["name"], description=parts["description"], build=build_id(), timing=parts["timing"],
        sets=[f"{k} = {json.dumps(v) if not isinstance(v, str) else v}" for k, v in res.sets],
        seeds=", ".join(map(str, parts["seeds"])), runs=parts["runs"],
        points=len(res.points) or 1, command=command, toc=toc, figures=figures, tables=tables, definitions=defs,
        scenario_text=written, resolved=json_text(resolved, sort_keys=True) if resolved else "",
        source=getattr(base, "source", "") if base is not None else "", has_base=base is not None, movie=movie,
    )


def _movie(res: ResultTables) -> Optional[dict[str, Any]]:
    """The network movie of the first run that recorded one (``[output] animation = true``):
    its player as markup and what the page says about it; ``None`` without one."""
    from markupsafe import Markup

    from .movie import movie_data, movie_fragment, movie_runs, movie_title

    have = movie_runs(res)
    if not have:
        return None
    data = movie_data(res, *have[0])
    return {"html": Markup(movie_fragment(data, movie_title(res, data))), "runs": len(have),
            "point": data["point"], "run": data["run"]}


def write_report(res: ResultTables, outdir: Path, command: Optional[str] = None,
                 progress: Optional[Callable[[int, int], None]] = None, workers: Optional[int] = None) -> Path:
    """Writes ``outdir/report.html`` and its figures under ``outdir/figures/`` (drawn by
    ``workers`` processes, see :func:`make_figures`, while this one computes the tables).
    ``progress(done, total)`` counts the figures and then the page.

    Returns:
        The report's path.
    """
    outdir = Path(outdir)
    total = [1]

    def step(done: int, n: int) -> None:
        total[0] = n + 1
        if progress:
            progress(done, n + 1)

    jobs = FigureJobs(res, outdir / "figures", progress=step, workers=workers)
    try:
        parts = page_parts(res)
    except BaseException:
        jobs.cancel()
        raise
    figs = jobs.finish()
    html = render(res, figs, command, parts)
    path = outdir / "report.html"
    atomic_write_text(path, html)
    if progress:
        progress(total[0], total[0])
    return path


__all__ = ["write_report", "make_figures", "figure_plan", "render", "page_parts", "Figure", "FigureJobs", "PlannedFigure",
           "FIGURE_FORMATS"]
