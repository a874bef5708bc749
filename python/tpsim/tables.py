"""The result tables and their files, below the figures and the report: summaries with
their confidence intervals, the run records made into tables, the output directory written
and read back (each file checked). :class:`tpsim.results.Results`, the public class, is
:class:`ResultTables` with the report added; its module describes the files.
"""

from __future__ import annotations

import json
import math
import os
import re
import shutil
import weakref
from pathlib import Path
from typing import Any, Callable, Iterable, Optional, Sequence, Union

import polars as pl

from .columns import FLOW_KEYS, LAZY_TABLES, NETWORK_KEYS, lazy_schema
from .files import ResultsError, _atomic_many, check_output_dir, json_text
from .metrics import bounds

#: Version of ``tpsim.json``.
META_FORMAT = 1


#: Resamples of the bootstrap intervals, and the seed of their draws (fixed: the same data
#: give the same interval on every machine and with any number of workers).
BOOTSTRAP_RESAMPLES = 4999
BOOTSTRAP_SEED = 20261125

#: Up to this many replications the percentile bootstrap's 95 % interval is the sample's
#: range (:func:`_bootstrap_ci`).
EXACT_RANGE_MAX_N = 3

#: ``ci_method`` values: the interval of a bounded metric, and of an unbounded one.
CI_BOOTSTRAP = "bootstrap-percentile"
CI_T = "student-t"


def _t_quantile_975(df: int) -> float:
    """Two-sided 95% Student t quantile t(0.975, df) (scipy.stats)."""
    from scipy import stats

    return float(stats.t.ppf(0.975, df))


def _bootstrap_ci(values: list[list[float]]) -> list[tuple[float, float]]:
    """95 % percentile-bootstrap intervals of the mean, one per row of equal-length samples:
    the 2.5th and 97.5th percentiles of the means of ``BOOTSTRAP_RESAMPLES`` resamples of the
    replications (scipy.stats.bootstrap). Always within the sample's range, so within the
    metric's bounds. Rows are resampled with the same draws, so a row's interval does not
    depend on the other rows (but for the last bits of numpy's sums over arrays of another
    shape): equal rows are computed once.

    With n ≤ :data:`EXACT_RANGE_MAX_N` replications the interval is the sample's range,
    given exactly without resampling: a resample of n values repeats the smallest (largest)
    n times with probability n⁻ⁿ ≥ 1/27 > 2.5 %, so both percentiles are the extremes."""
    if values and len(values[0]) <= EXACT_RANGE_MAX_N:
        return [(min(v), max(v)) for v in values]
    import numpy as np
    from scipy import stats

    index: dict[tuple, int] = {}
    rows = [index.setdefault(tuple(v), len(index)) for v in values]
    unique: list[tuple[float, float]] = []
    data = np.asarray(list(index), dtype=float)
    for start in range(0, len(data), 256):  # bounded memory: 256 rows x resamples at a time
        chunk = data[start : start + 256]
        res = stats.bootstrap(
            (chunk,),
            np.mean,
            axis=-1,
            vectorized=True,
            n_resamples=BOOTSTRAP_RESAMPLES,
            confidence_level=0.95,
            method="percentile",
            random_state=np.random.default_rng(BOOTSTRAP_SEED),
        )
        lo = np.atleast_1d(res.confidence_interval.low)
        hi = np.atleast_1d(res.confidence_interval.high)
        unique.extend(zip(lo.tolist(), hi.tolist()))
    return [unique[i] for i in rows]


def mean_cis(metric: str, samples: Sequence[Sequence[float]]) -> list[tuple[float, Optional[float], Optional[float]]]:
    """:func:`mean_ci` of each of ``samples`` (non-empty lists of one metric's values over
    replications), the bootstrap intervals computed together: the same resamples, in fewer
    calls (the intervals equal those of :func:`mean_ci` but for their last bits)."""
    out: list = [None] * len(samples)
    means = [sum(v) / len(v) for v in samples]
    by_n: dict[int, list[int]] = {}
    bounded = bounds(metric) is not None
    for i, (values, mean) in enumerate(zip(samples, means)):
        n = len(values)
        if n < 2:
            out[i] = (mean, None, None)
        elif not bounded:
            sd = math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1))
            half = _t_quantile_975(n - 1) * sd / math.sqrt(n)
            out[i] = (mean, mean - half, mean + half)
        elif min(values) == max(values):
            out[i] = (mean, min(values[0], mean), max(values[0], mean))
        else:
            by_n.setdefault(n, []).append(i)
    for group in by_n.values():
        for i, (lo, hi) in zip(group, _bootstrap_ci([list(samples[i]) for i in group])):
            # The mean lies inside the interval but for rounding (the resample means are
            # computed by numpy, the mean here by Python).
            out[i] = (means[i], min(lo, means[i]), max(hi, means[i]))
    return out


def mean_ci(metric: str, values: Sequence[float]) -> tuple[float, Optional[float], Optional[float]]:
    """(mean, 95 % interval low, high) of one metric's values over replications, with the
    interval :func:`summarize` reports (``None`` with fewer than 2 values): a percentile
    bootstrap for a metric with known bounds, Student's t otherwise."""
    return mean_cis(metric, [values])[0]


def _intervals(agg: pl.DataFrame) -> pl.DataFrame:
    """Adds ``ci_method``, ``ci95_low`` and ``ci95_high`` to the aggregated groups (columns
    ``metric``, ``n``, ``mean``, ``std``, ``values``): a percentile bootstrap over the
    replications for metrics with known bounds (every tpsim metric: a Student-t interval
    around a mean near a bound would leave it), Student's t otherwise; none with n < 2."""
    methods: list = [None] * agg.height
    lo: list = [None] * agg.height
    hi: list = [None] * agg.height
    by_n: dict[int, list[int]] = {}
    # Only groups of 2 or more values have an interval (a one-run sweep has none: its rows
    # are not read one by one).
    rows = agg.with_row_index("_row").filter(pl.col("n") >= 2)
    values: dict[int, list] = {}
    for i, metric, n, mean, sd, v in zip(rows["_row"], rows["metric"], rows["n"], rows["mean"], rows["std"], rows["values"].to_list()):
        if bounds(metric) is not None:
            methods[i] = CI_BOOTSTRAP
            if min(v) == max(v):
                # Constant: every resample has the same mean (the mean itself, but for rounding).
                lo[i], hi[i] = min(v[0], mean), max(v[0], mean)
            else:
                by_n.setdefault(n, []).append(i)
                values[i] = v
        else:
            methods[i] = CI_T
            half = _t_quantile_975(n - 1) * (sd or 0.0) / math.sqrt(n)
            lo[i], hi[i] = mean - half, mean + half
    means = agg["mean"].to_list() if by_n else []
    for group in by_n.values():
        for i, (a, b) in zip(group, _bootstrap_ci([values[i] for i in group])):
            # The mean lies inside but for rounding (numpy's resample means, polars' mean).
            lo[i], hi[i] = min(a, means[i]), max(b, means[i])
    return agg.with_columns(
        pl.Series("ci_method", methods, dtype=pl.Utf8),
        pl.Series("ci95_low", lo, dtype=pl.Float64),
        pl.Series("ci95_high", hi, dtype=pl.Float64),
    )


def summarize(flows: pl.DataFrame, network: pl.DataFrame, point_keys: Iterable[str] = ()) -> pl.DataFrame:
    """Per (sweep point, flow, direction) and per sweep point: n, mean, std and a 95%
    confidence interval of every metric over the replications (the statistical unit).

    Returns a long table with columns ``[*point_keys, table, flow, direction, metric, n,
    mean, std, ci_method, ci95_low, ci95_high]``; ``std`` and the interval are null with fewer
    than 2 runs. The interval respects the metric's bounds (:func:`tpsim.metrics.bounds`): a
    percentile bootstrap of the mean (``ci_method = "bootstrap-percentile"``); Student's t for
    a column without known bounds (``"student-t"``). Null metric values (undefined in a run,
    e.g. no delivery) are left out of ``n``.
    """
    keys = list(point_keys)
    out = []
    for table, df, group in (("flows", flows, keys + ["flow", "direction"]), ("network", network, keys)):
        if df.height == 0:
            continue
        metrics = [c for c in df.columns if c not in FLOW_KEYS + NETWORK_KEYS + keys and df.schema[c].is_numeric()]
        long = df.select(group + metrics).unpivot(index=group, on=metrics, variable_name="metric", value_name="value")
        long = long.with_columns(pl.col("value").cast(pl.Float64))
        order = {m: i for i, m in enumerate(metrics)}
        agg = (
            long.drop_nulls("value")
            .with_columns(pl.col("metric").replace_strict(order, return_dtype=pl.UInt32).alias("_order"))
            .group_by(group + ["metric", "_order"], maintain_order=True)
            .agg(
                pl.len().alias("n"),
                pl.col("value").mean().alias("mean"),
                pl.col("value").std(ddof=1).alias("std"),
                pl.col("value").alias("values"),
            )
        )
        agg = _intervals(agg).drop("values")
        agg = agg.sort(group + ["_order"]).drop("_order").with_columns(pl.lit(table).alias("table"))
        if table == "network":
            agg = agg.with_columns(pl.lit(None, dtype=pl.UInt32).alias("flow"), pl.lit(None, dtype=pl.Utf8).alias("direction"))
        agg = agg.with_columns(pl.col("flow").cast(pl.UInt32), pl.col("direction").cast(pl.Utf8), pl.col("n").cast(pl.UInt32))
        out.append(agg.select(keys + ["table", "flow", "direction", "metric", "n", "mean", "std", "ci_method", "ci95_low", "ci95_high"]))
    if not out:
        return pl.DataFrame()
    return pl.concat(out, how="vertical")


class _LazyTable:
    """A :class:`Results` attribute whose table is read from its files on first access."""

    def __init__(self, doc: str):
        self.__doc__ = doc

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, obj: Any, owner: Optional[type] = None) -> Any:
        if obj is None:
            return self
        return obj._frame(self.name)

    def __set__(self, obj: Any, df: pl.DataFrame) -> None:
        obj._set_frame(self.name, df)


def with_total_drops(network: pl.DataFrame) -> pl.DataFrame:
    """The network table with ``total_drops``: per run, every drop the engine recorded (the
    ``drops_*`` reasons of data packets lost, ``dropped_copies`` and ``routing_drops``; the
    ns-2 studies' "dropped packets"), unless it has one already or no drop columns."""
    parts = [c for c in network.columns if c.startswith("drops_")] + [c for c in ("dropped_copies", "routing_drops") if c in network.columns]
    if not parts or "total_drops" in network.columns:
        return network
    return network.with_columns(pl.sum_horizontal(parts).alias("total_drops"))


class ResultTables:
    """The tables of :class:`tpsim.results.Results` (see there), without its report."""

    timeseries = _LazyTable("Binned series in long format: ``point``, swept keys, ``run, seed, series, flow, "
                            "link, node, direction, time_s, value``; empty without time series.")
    trace = _LazyTable("The per-packet event trace of runs with ``[output] trace = true`` (or ``ns2_trace``), "
                       "one row per packet event (columns in docs/metrics.md); empty if no run kept one.")
    animation = _LazyTable("The network movie's trace of runs with ``[output] animation = true`` (columns in "
                           "docs/workbench.md, \"Network movie\"); empty if no run kept one.")
    acks = _LazyTable("The per-ACK samples of runs with ``[output] ack_samples = true``, one row per "
                      "acknowledgement (columns in docs/metrics.md, \"Per-ACK samples\"); empty if no run kept them.")

    def __init__(
        self,
        flows: pl.DataFrame,
        network: pl.DataFrame,
        timeseries: pl.DataFrame,
        engine_seconds: list[float],
        param_keys: Optional[list[str]] = None,
        trace: Optional[pl.DataFrame] = None,
        animation: Optional[pl.DataFrame] = None,
        acks: Optional[pl.DataFrame] = None,
    ):
        self.flows = flows
        self.network = network
        #: Lazy tables held in memory (given, or read once asked for).
        self._frames: dict[str, pl.DataFrame] = {}
        #: Lazy tables as every run's file: (the run's identity, the file), in run order.
        self._parts: dict[str, list[tuple[dict[str, Any], Path]]] = {}
        #: Lazy tables as one file with the documented column types.
        self._files: dict[str, Path] = {}
        for kind, df in (("timeseries", timeseries), ("trace", trace), ("animation", animation), ("acks", acks)):
            if df is not None:
                self._frames[kind] = df
        self.ns2_files: dict[tuple[int, int], Path] = {}
        #: ns-2 formats of runs whose trace is held in memory with its ns-2 columns (their
        #: files are written from it).
        self.ns2_formats: dict[tuple[int, int], str] = {}
        self._cleanup: Optional[weakref.finalize] = None
        self.engine_seconds = engine_seconds
        #: Swept keys (columns of every table, after ``point``); empty without a sweep.
        self.param_keys: list[str] = list(param_keys or [])
        #: The sweep points (set by :func:`tpsim.run`; by :meth:`read`, as
        #: :class:`tpsim.sweep.Point` without their scenario).
        self.points: list = []
        #: The base scenario (set by :func:`tpsim.run` and :meth:`read`).
        self.base: Any = None
        #: The command that reproduces these results (shown by the report).
        self.command: Optional[str] = None
        #: ``--set`` values of the run, as (key, value) pairs.
        self.sets: list = []
        #: Runs executed by the call that made these results and their engine time (stored
        #: runs reused are not counted).
        self.ran_now = 0
        self.engine_seconds_now = 0.0
        #: The scenario as run, every default filled in: the base with the ``set`` values
        #: applied and the sweep that ran (``scenario.resolved.json``; ``None``: the base's).
        self.resolved: Optional[dict[str, Any]] = None
        #: The directory these results were last written to or read from.
        self.directory: Optional[Path] = None
        self._summary: Optional[tuple[int, int, pl.DataFrame]] = None

    @classmethod
    def from_runs(cls, runs: list[dict[str, Any]], param_keys: Optional[list[str]] = None,
                  runs_dir: Optional[Path] = None) -> "ResultTables":
        """Builds the tables from run records (:func:`tpsim.api.execute`); each dict has
        ``run``, ``seed``, optionally ``point`` and ``params`` (swept key -> value), the
        engine's ``flows``/``network`` columns, and each of the growing tables either as
        columns (``timeseries``, ``trace``, ``animation``, ``acks``) or as a file of the run
        store ``runs_dir`` named in ``files``, read only when asked for. Rows are sorted by
        (point, run, flow, direction) whatever order the runs come in, so the tables do not
        depend on how many workers produced them."""
        from . import store

        keys = list(param_keys or [])
        runs = sorted(runs, key=lambda r: (r.get("point", 0), r["run"]))
        flows: dict[str, list[Any]] = {}
        nets: dict[str, list[Any]] = {}
        n_flows = n_nets = 0
        frames: dict[str, list[pl.DataFrame]] = {k: [] for k in LAZY_TABLES}
        parts: dict[str, list[tuple[dict[str, Any], Path]]] = {k: [] for k in LAZY_TABLES}
        ns2_files: dict[tuple[int, int], Path] = {}
        for r in runs:
            ident = {"point": r.get("point", 0), **{k: r.get("params", {}).get(k) for k in keys}, "run": r["run"], "seed": r["seed"]}
            n = len(r["flows"]["flow"])
            _extend(flows, n_flows, {**{k: [v] * n for k, v in ident.items()}, **r["flows"]}, n)
            n_flows += n
            _extend(nets, n_nets, {**{k: [v] for k, v in ident.items()}, **{k: [v] for k, v in r["network"].items()}}, 1)
            n_nets += 1
            files = store.resolve_files(runs_dir, r) if runs_dir is not None else {}
            for kind in LAZY_TABLES:
                cols = r.get(kind)
                if cols is not None:
                    m = len(next(iter(cols.values()), []))
                    frames[kind].append(_run_frame(kind, {**{k: [v] * m for k, v in ident.items()}, **cols}, keys))
                elif kind in files:
                    parts[kind].append((ident, files[kind]))
            if "ns2" in files:
                ns2_files[(int(ident["point"]), int(r["run"]))] = files["ns2"]
        flows_df = _normalize(pl.DataFrame(flows, strict=False), keys).sort(["point", "run", "flow", "direction"], maintain_order=True) if runs else pl.DataFrame()
        net_df = _normalize(pl.DataFrame(nets, strict=False), keys).sort(["point", "run"], maintain_order=True) if runs else pl.DataFrame()
        net_df = with_total_drops(net_df)
        res = cls(flows_df, net_df, None, [float(r.get("engine_seconds", 0.0)) for r in runs], keys)
        for kind in LAZY_TABLES:
            if frames[kind]:
                how = "vertical_relaxed" if kind == "timeseries" else "diagonal_relaxed"
                res._frames[kind] = pl.concat(frames[kind], how=how)
            elif parts[kind]:
                res._parts[kind] = parts[kind]
        if "timeseries" not in res._frames and "timeseries" not in res._parts:
            res._frames["timeseries"] = pl.DataFrame()
        res.ns2_files = ns2_files
        res.ns2_formats = {(int(r.get("point", 0)), int(r["run"])): str(r["ns2_trace"])
                           for r in runs if r.get("ns2_trace") and r.get("trace") is not None}
        return res

    def own_directory(self, path: Path) -> None:
        """Removes the directory ``path`` (a run store of these results only) when these
        results are garbage-collected or the interpreter exits."""
        self._cleanup = weakref.finalize(self, shutil.rmtree, str(path), True)

    def has(self, table: str) -> bool:
        """Whether these results have rows or columns of the lazy table ``table`` (one of
        :data:`LAZY_TABLES`), without reading it."""
        if table in self._frames:
            return self._frames[table].width > 0
        return bool(self._parts.get(table)) or table in self._files

    def scan(self, table: str) -> pl.LazyFrame:
        """The lazy table ``table`` (``"timeseries"``, ``"trace"``, ``"animation"`` or
        ``"acks"``) as a polars LazyFrame: filter and select before collecting, and only what
        is kept is read (e.g. ``res.scan("trace").filter(pl.col("run") == 0).collect()``).
        An empty LazyFrame if the results have no such table.

        Raises:
            KeyError: for another table name.
        """
        from . import store

        if table not in LAZY_TABLES:
            raise KeyError(f"no lazy table {table!r}; tables: {', '.join(LAZY_TABLES)}")
        if table in self._frames:
            return self._frames[table].lazy()
        if table in self._files:
            return pl.scan_parquet(self._files[table])
        if self._parts.get(table):
            return store.scan(self._parts[table], table)
        return pl.LazyFrame()

    def _frame(self, table: str) -> pl.DataFrame:
        if table not in self._frames:
            self._frames[table] = self.scan(table).collect() if self.has(table) else pl.DataFrame()
        return self._frames[table]

    def _set_frame(self, table: str, df: pl.DataFrame) -> None:
        self._frames[table] = df
        self._parts.pop(table, None)
        self._files.pop(table, None)

    def summary(self) -> pl.DataFrame:
        """Mean, std and 95% CI of every metric over the runs of each sweep point (see
        :func:`summarize`); computed once per pair of tables."""
        key = (id(self.flows), id(self.network))
        if self._summary is None or self._summary[:2] != key:
            self._summary = (*key, summarize(self.flows, self.network, ["point", *self.param_keys]))
        return self._summary[2]

    def resolved_scenario(self) -> dict[str, Any]:
        """The scenario as run, every default filled in (see :attr:`resolved`)."""
        if self.resolved is not None:
            return self.resolved
        return dict(getattr(self.base, "resolved", None) or {})

    def meta(self) -> dict[str, Any]:
        """The content of ``tpsim.json`` (see the module doc)."""
        from ._build import build_id
        from .sweep import point_value

        base = self.base
        return {
            "format": META_FORMAT,
            "tpsim": build_id(),
            "name": getattr(base, "name", None),
            "source": getattr(base, "source", None),
            "scenario": getattr(base, "written", getattr(base, "text", None)),
            "command": self.command,
            "sets": [[k, v] for k, v in self.sets],
            "param_keys": list(self.param_keys),
            "points": [
                {"index": p.index, "params": {k: point_value(v) for k, v in p.params.items()},
                 "case": getattr(p, "case", None)}
                for p in self.points
            ],
        }

    def write(self, directory: Union[str, Path]) -> Path:
        """Writes every table into ``directory`` (created if needed), with
        ``scenario.resolved.json`` and ``tpsim.json`` when the scenario is known, all or none:
        each file goes to a temporary file first and they are renamed into place together.
        The growing tables are combined from their runs' files by streaming (no run's rows
        are held in memory); the ns-2 trace files are linked (or copied) into ``ns2/``.

        Raises:
            TypeError: if ``directory`` is not a path.
            OutputPathError: (a ValueError) if ``directory`` is empty, an existing file or
                under one.
            OSError: if a file cannot be written (naming it; nothing is half-written).
        """
        d = check_output_dir(directory, "directory")
        d.mkdir(parents=True, exist_ok=True)
        summary = self.summary()
        files: list[tuple[Path, Callable[[Path], Any]]] = [
            (d / "flows.parquet", lambda p: self.flows.write_parquet(p)),
            (d / "flows.csv", lambda p: self.flows.write_csv(p)),
            (d / "network.parquet", lambda p: self.network.write_parquet(p)),
            (d / "network.csv", lambda p: self.network.write_csv(p)),
            (d / "summary.csv", lambda p: summary.write_csv(p)),
        ]
        written = []
        for kind in LAZY_TABLES:
            target = d / f"{kind}.parquet"
            if kind != "timeseries" and not self.has(kind):
                continue
            if kind in self._files and _same_file(self._files[kind], target):
                continue
            written.append(kind)
            files.append((target, lambda p, kind=kind: self._write_table(kind, p)))
        if self.base is not None:
            resolved = json_text(self.resolved_scenario(), sort_keys=True) + "\n"
            meta = json_text(self.meta()) + "\n"
            files += [(d / "scenario.resolved.json", lambda p: p.write_text(resolved, encoding="utf-8")),
                      (d / "tpsim.json", lambda p: p.write_text(meta, encoding="utf-8"))]
        _atomic_many(files)
        for kind in written:
            # Read from here on: one file, already with the documented types.
            self._files[kind] = d / f"{kind}.parquet"
            self._parts.pop(kind, None)
        for kind in LAZY_TABLES:
            if kind != "timeseries" and not self.has(kind) and (d / f"{kind}.parquet").is_file():
                # A table of earlier results in this directory is not these results' table.
                (d / f"{kind}.parquet").unlink()
        self._write_ns2(d)
        self.directory = d
        return d

    def _write_table(self, kind: str, path: Path) -> None:
        """Writes the lazy table ``kind`` to ``path``: from memory if held there, else
        streamed from its files."""
        if kind in self._frames:
            self._frames[kind].write_parquet(path)
        elif self.has(kind):
            self.scan(kind).sink_parquet(path)
        else:
            pl.DataFrame().write_parquet(path)

    def _write_ns2(self, d: Path) -> None:
        """Puts each run's ns-2 trace file in ``d/ns2/`` (a hard link to the run's file where
        the file system allows, else a copy; written from the trace held in memory for runs
        made without files), after removing those of earlier results in ``d``."""
        from . import ns2trace

        targets = {pr: d / ns2trace.file_name(*pr) for pr in [*self.ns2_files, *self.ns2_formats]}
        old = d / "ns2"
        if old.is_dir():
            keep = {t.name for t in targets.values()}
            for f in old.glob("p*-run*.tr"):
                if f.name not in keep:
                    f.unlink()
        for pr, src in sorted(self.ns2_files.items()):
            target = targets[pr]
            if _same_file(src, target):
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            tmp = target.with_name(f".{target.name}.tmp")
            tmp.unlink(missing_ok=True)
            try:
                os.link(src, tmp)
            except OSError:
                shutil.copyfile(src, tmp)
            os.replace(tmp, target)
            self.ns2_files[pr] = target
        for (point, run), fmt in sorted(self.ns2_formats.items()):
            path = targets[(point, run)]
            tmp = path.with_name(path.name + ".tmp")
            ns2trace.write(ns2trace.run_trace(self.trace, point, run), tmp, fmt)
            os.replace(tmp, path)

    def damaged_files(self) -> list[Path]:
        """The files of the lazy tables (time series, traces) whose data cannot be read: each
        is read through, in bounded memory (slow for large traces: for the error path)."""
        paths = [*self._files.values(), *(f for parts in self._parts.values() for _, f in parts)]
        bad = []
        for path in paths:
            try:
                pl.scan_parquet(path).select(pl.all().null_count()).collect(engine="streaming")
            except (OSError, pl.exceptions.PolarsError):
                bad.append(path)
        return bad

    @classmethod
    def read(cls, directory: Union[str, Path]) -> "ResultTables":
        """The results stored in ``directory`` by ``tpsim run`` or :meth:`write`: the flows,
        network, time-series, trace and summary tables, the swept keys, and (from ``tpsim.json``
        and ``scenario.resolved.json``) the scenario, its sweep points and the reproduce
        command. Each file is checked before it is used: the tables' columns and types (the
        time series and traces by their Parquet footer; their rows are read when asked for),
        the JSON files' shape.

        Raises:
            TypeError: if ``directory`` is not a path.
            ResultsError: (ValueError) if ``directory`` is not a directory, holds no
                ``flows.parquet``/``network.parquet``, or one of its files is damaged or not
                what tpsim writes (the message names the file and what was expected).
        """
        if isinstance(directory, bool) or not isinstance(directory, (str, os.PathLike)):
            raise TypeError(f"directory must be a path (str or os.PathLike), got {type(directory).__name__} {directory!r:.80}")
        d = Path(directory)
        if not d.is_dir():
            raise ResultsError(f"{d} is not a directory (expected the output directory of tpsim run)")
        for name in ("flows.parquet", "network.parquet"):
            if not (d / name).is_file():
                raise ResultsError(f"{d}: no {name} (expected the output directory of tpsim run)")
        flows = _read_table(d / "flows.parquet", "the flows table", FLOW_COLUMNS)
        network = _read_table(d / "network.parquet", "the network table", NETWORK_COLUMNS)
        lazy = {k: d / f"{k}.parquet" for k in LAZY_TABLES if (d / f"{k}.parquet").is_file()}
        for kind, path in lazy.items():
            _check_lazy_table(path, kind)
        cols = flows.columns if "point" in flows.columns else network.columns
        keys = cols[cols.index("point") + 1 : cols.index("run")] if "point" in cols and "run" in cols else []
        res = cls(flows, network, None if "timeseries" in lazy else pl.DataFrame(), [], keys)
        res._files.update(lazy)
        for f in (d / "ns2").glob("p*-run*.tr") if (d / "ns2").is_dir() else []:
            m = re.fullmatch(r"p(\d+)-run(\d+)\.tr", f.name)
            if m:
                res.ns2_files[(int(m.group(1)), int(m.group(2)))] = f
        res.directory = d
        meta = _read_meta(d / "tpsim.json")
        resolved = _read_resolved(d / "scenario.resolved.json")
        res.base = _stored_scenario(meta, resolved)
        res.resolved = resolved
        res.command = meta.get("command")
        res.sets = [tuple(p) for p in meta.get("sets", [])]
        from .sweep import Point

        if meta.get("points"):
            res.points = [Point(p["index"], dict(p["params"]), None, p.get("case")) for p in meta["points"]]
        elif keys or flows.height:
            rows = flows.select(["point", *keys]).unique(maintain_order=True).sort("point") if flows.height else network.select(["point", *keys]).unique(maintain_order=True)
            res.points = [Point(r["point"], {k: r[k] for k in keys}, None) for r in rows.iter_rows(named=True)]
        if "role" not in flows.columns and flows.height:
            n_main = len(resolved.get("flows", [])) if isinstance(resolved, dict) else None
            res.flows = add_roles(flows, {}, default_main=n_main)
        res._summary = (id(res.flows), id(res.network), _read_summary(d / "summary.csv", res))
        return res


#: Columns the flows and network tables must have, and their kind (see :func:`_kind`).
FLOW_COLUMNS = {"point": "integer", "run": "integer", "seed": "integer", "flow": "integer", "direction": "text"}
NETWORK_COLUMNS = {"point": "integer", "run": "integer", "seed": "integer"}
#: Optional columns of the flows table, checked when present.
_FLOW_OPTIONAL = {"src": "integer", "dst": "integer", "transport": "text", "app": "text", "role": "text"}


def _kind(dtype: Any) -> str:
    """The kind of a column type: ``integer``, ``number`` (float), ``text``, ``boolean``,
    ``null`` (every value null) or ``other``."""
    if dtype == pl.Null:
        return "null"
    if dtype.is_integer():
        return "integer"
    if dtype.is_numeric():
        return "number"
    if dtype == pl.Utf8:
        return "text"
    if dtype == pl.Boolean:
        return "boolean"
    return "other"


def _expected_kind(dtype: Any) -> str:
    k = _kind(dtype)
    return "number" if k == "integer" else k


def _check_columns(path: Path, what: str, schema: dict[str, Any], required: dict[str, str]) -> None:
    """Raises ResultsError unless ``schema`` has every ``required`` column of its kind (an
    ``integer`` column must be integers; a ``number`` one any number; a column of nulls fits
    any kind)."""
    for name, want in required.items():
        if name not in schema:
            raise ResultsError(f"{path}: no column {name!r} (expected {what} of a tpsim run, with columns "
                               f"{', '.join(required)})")
        got = _kind(schema[name])
        if got != "null" and got != want and not (want == "number" and got == "integer"):
            raise ResultsError(f"{path}: column {name!r} holds {got} values, expected {want} ({what} of a tpsim run)")


def _parquet_schema(path: Path, what: str) -> dict[str, Any]:
    """The column types of the Parquet file ``path`` (its footer only)."""
    try:
        return dict(pl.read_parquet_schema(path))
    except OSError as e:
        raise ResultsError(f"{path}: cannot read it ({' '.join(str(e.strerror or e).split())})") from None
    except Exception:  # polars' errors for a file that is not Parquet (their text is polars')
        raise ResultsError(f"{path}: not a Parquet file (expected {what} of a tpsim run)") from None


def _read_table(path: Path, what: str, required: dict[str, str]) -> pl.DataFrame:
    """The table ``path`` (flows or network), checked."""
    schema = _parquet_schema(path, what)
    _check_columns(path, what, schema, required)
    if required is FLOW_COLUMNS:
        _check_columns(path, what, schema, {k: v for k, v in _FLOW_OPTIONAL.items() if k in schema})
    try:
        return pl.read_parquet(path)
    except OSError as e:
        raise ResultsError(f"{path}: cannot read it ({' '.join(str(e.strerror or e).split())})") from None
    except Exception:
        raise ResultsError(f"{path}: damaged Parquet file (expected {what} of a tpsim run)") from None


def _check_lazy_table(path: Path, kind: str) -> None:
    """The time series or trace table ``path`` has the identity columns and the documented
    columns of ``kind`` (:func:`lazy_schema`), by its footer; an empty table has none."""
    what = {"timeseries": "the time series", "trace": "the packet trace", "animation": "the movie trace",
            "acks": "the per-ACK samples"}[kind]
    schema = _parquet_schema(path, what)
    if not schema:
        return  # no rows, no columns: written for results without this table
    required = {**NETWORK_COLUMNS, **{k: _expected_kind(t) for k, t in lazy_schema(kind, schema).items()}}
    _check_columns(path, what, schema, required)


def _read_json(path: Path, what: str) -> Any:
    """The JSON of ``path``, ``None`` if there is no such file."""
    if not path.exists():
        return None
    try:
        return json.loads(path.read_bytes().decode("utf-8"))
    except OSError as e:
        raise ResultsError(f"{path}: cannot read it ({' '.join(str(e.strerror or e).split())})") from None
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise ResultsError(f"{path}: not JSON (expected {what})") from None


def _read_resolved(path: Path) -> Optional[dict[str, Any]]:
    """``scenario.resolved.json``, checked: a JSON object whose ``simulation`` and ``sweep``
    are objects and whose ``flows`` is a list (the parts the report reads)."""
    what = "the resolved scenario as a JSON object"
    data = _read_json(path, what)
    if data is None:
        return None
    if not isinstance(data, dict):
        raise ResultsError(f"{path}: a JSON {_json_type(data)}, expected {what}")
    for key, typ in (("simulation", dict), ("sweep", dict), ("flows", list)):
        if key in data and not isinstance(data[key], typ):
            raise ResultsError(f"{path}: {key} is a JSON {_json_type(data[key])}, expected {_json_type(typ())} ({what})")
    return data


def _json_type(v: Any) -> str:
    return {dict: "object", list: "array", str: "string", bool: "boolean", type(None): "null"}.get(
        type(v), "number")


def _is_case(case: Any) -> bool:
    """A point's ``case`` in ``tpsim.json``: none, or ``{"name", "settings", "line"}`` with
    its settings a table."""
    return case is None or (isinstance(case, dict) and isinstance(case.get("settings", {}), dict))


def _read_meta(path: Path) -> dict[str, Any]:
    """``tpsim.json``, checked (``{}`` if there is none): an object whose entries have the
    types :meth:`Results.meta` writes."""
    what = "the run's description that tpsim run writes, a JSON object"
    meta = _read_json(path, what)
    if meta is None:
        return {}

    def bad(key: str, expected: str) -> ResultsError:
        return ResultsError(f"{path}: {key} is a JSON {_json_type(meta[key])}, expected {expected}")

    if not isinstance(meta, dict):
        raise ResultsError(f"{path}: a JSON {_json_type(meta)}, expected {what}")
    if "format" in meta and meta["format"] != META_FORMAT:
        raise ResultsError(f"{path}: format {json.dumps(meta['format'])[:20]}, expected {META_FORMAT}")
    for key in ("tpsim", "name", "source", "scenario", "command"):
        if meta.get(key) is not None and not isinstance(meta[key], str):
            raise bad(key, "a string")
    sets = meta.get("sets", [])
    if not isinstance(sets, list) or not all(isinstance(p, list) and len(p) == 2 and isinstance(p[0], str) for p in sets):
        raise bad("sets", "an array of [key, value] pairs")
    keys = meta.get("param_keys", [])
    if not isinstance(keys, list) or not all(isinstance(k, str) for k in keys):
        raise bad("param_keys", "an array of strings")
    points = meta.get("points", [])
    if not isinstance(points, list) or not all(
            isinstance(p, dict) and isinstance(p.get("index"), int) and not isinstance(p["index"], bool) and p["index"] >= 0
            and isinstance(p.get("params"), dict) and _is_case(p.get("case")) for p in points):
        raise bad("points", "an array of {index, params, case} objects")
    return meta


class _StoredScenario:
    """The scenario of stored results when it cannot be loaded again (written by another
    engine version): its name, text and resolved form, for the report."""

    def __init__(self, meta: dict[str, Any], resolved: Optional[dict[str, Any]]):
        self.source = meta.get("source") or "<stored>"
        self.text = self.written = meta.get("scenario") or ""
        self.resolved = resolved or {}
        self.cases: list = []
        sim = self.resolved.get("simulation", {}) if isinstance(self.resolved, dict) else {}
        self.name = meta.get("name") or sim.get("name") or Path(self.source).stem
        self.seed = sim.get("seed", 1)
        self.runs = sim.get("runs", 1)


def _stored_scenario(meta: dict[str, Any], resolved: Optional[dict[str, Any]]) -> Any:
    """The scenario of ``tpsim.json`` (validated again), or a stand-in with what was stored."""
    if not meta and resolved is None:
        return None
    if meta.get("scenario"):
        from ._tpsim import ScenarioError
        from .scenario import Scenario

        try:
            sc = Scenario(meta["scenario"], meta.get("source") or "<stored>")
            if resolved is not None:
                sc.resolved = resolved
            return sc
        except (ScenarioError, OSError, ValueError):
            pass
    return _StoredScenario(meta, resolved)


#: Columns of ``summary.csv`` after the point's (``point`` and the swept keys).
SUMMARY_COLUMNS = ["table", "flow", "direction", "metric", "n", "mean", "std", "ci_method", "ci95_low", "ci95_high"]


def _read_summary(path: Path, res: "ResultTables") -> pl.DataFrame:
    """``summary.csv``, checked: the columns :func:`summarize` writes, of their types."""
    keys = ["point", *res.param_keys]
    types = {k: res.flows.schema[k] for k in keys if k in res.flows.columns}
    types.update({"table": pl.Utf8, "flow": pl.UInt32, "direction": pl.Utf8, "metric": pl.Utf8, "n": pl.UInt32,
                  "mean": pl.Float64, "std": pl.Float64, "ci_method": pl.Utf8, "ci95_low": pl.Float64, "ci95_high": pl.Float64})
    what = f"the summary table of a tpsim run, CSV with columns {', '.join(['point', *SUMMARY_COLUMNS])}"
    try:
        if not path.read_bytes().strip():
            if res.flows.height or res.network.height:
                raise ResultsError(f"{path}: empty (expected {what})")
            return pl.DataFrame()
        df = pl.read_csv(path, schema_overrides=types, infer_schema_length=None)
    except FileNotFoundError:
        raise ResultsError(f"{path.parent}: no {path.name} (expected {what})") from None
    except OSError as e:
        raise ResultsError(f"{path}: cannot read it ({' '.join(str(e.strerror or e).split())})") from None
    except ResultsError:
        raise
    except Exception:  # polars' parse errors: a value that is not of its column's type
        raise ResultsError(f"{path}: not {what}") from None
    missing = [c for c in ["point", *SUMMARY_COLUMNS] if c not in df.columns]
    if missing:
        raise ResultsError(f"{path}: no column {missing[0]!r} (expected {what})")
    return df


def add_roles(flows: pl.DataFrame, main_flows: dict[int, int], default_main: Optional[int] = None) -> pl.DataFrame:
    """Adds (or replaces) the ``role`` column after ``app``: ``main`` for flows below the
    point's count of own flows (``main_flows[point]``, else ``default_main``; ``None``: every
    flow), ``background`` for the others."""
    if flows.height == 0 or "flow" not in flows.columns:
        return flows
    limits = [main_flows.get(p, default_main) for p in flows["point"].to_list()] if "point" in flows.columns else [default_main] * flows.height
    roles = ["main" if lim is None or f < lim else "background" for f, lim in zip(flows["flow"].to_list(), limits)]
    df = flows.drop("role") if "role" in flows.columns else flows
    at = df.columns.index("app") + 1 if "app" in df.columns else len(df.columns)
    df = df.with_columns(pl.Series("role", roles, dtype=pl.Utf8))
    cols = df.columns[:-1]
    return df.select(cols[:at] + ["role"] + cols[at:])


def _typed_frame(columns: dict[str, Any], param_keys: Iterable[str], schema: dict[str, Any]) -> pl.DataFrame:
    """One run's table of the engine (its columns with the run's identity) with the fixed
    types of ``schema``, whatever the values (an empty or all-null column)."""
    ident = ["point", *param_keys, "run", "seed"]
    df = pl.DataFrame(columns, strict=False)
    casts = [pl.col(k).cast(pl.UInt32 if k in ("point", "run") else pl.UInt64) if k in ("point", "run", "seed")
             else pl.col(k) for k in ident]
    return df.select(casts + [pl.col(k).cast(t) for k, t in schema.items()])


def _extend(table: dict[str, list[Any]], rows: int, columns: dict[str, list[Any]], n: int) -> None:
    """Appends ``n`` rows given as ``columns`` to ``table`` (``rows`` rows so far), with null
    where either has a column the other lacks (as polars' diagonal concatenation)."""
    for name, values in columns.items():
        if name not in table:
            table[name] = [None] * rows
        table[name].extend(values)
    for name, values in table.items():
        if len(values) < rows + n:
            values.extend([None] * (rows + n - len(values)))


def _same_file(a: Path, b: Path) -> bool:
    """Whether two paths name the same existing file."""
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def _run_frame(kind: str, columns: dict[str, Any], param_keys: list[str]) -> pl.DataFrame:
    """One run's lazy table ``kind`` given as columns (with the run's identity), with its
    documented types."""
    return _typed_frame(columns, param_keys, lazy_schema(kind, columns))


def _normalize(df: pl.DataFrame, param_keys: Iterable[str] = ()) -> pl.DataFrame:
    """Fixed dtypes so tables are identical whatever the values (all-null columns included);
    swept parameters keep their own type."""
    casts = []
    params = set(param_keys)
    for name, dtype in df.schema.items():
        if name in params:
            casts.append(pl.col(name))
        elif name in ("point", "run", "flow", "src", "dst", "link", "node"):
            casts.append(pl.col(name).cast(pl.UInt32))
        elif name == "seed":
            casts.append(pl.col(name).cast(pl.UInt64))
        elif name in ("direction", "transport", "app", "series", "role"):
            casts.append(pl.col(name).cast(pl.Utf8))
        elif dtype == pl.Null or dtype.is_float():
            casts.append(pl.col(name).cast(pl.Float64))
        elif dtype.is_integer():
            casts.append(pl.col(name).cast(pl.Int64))
        else:
            casts.append(pl.col(name))
    return df.select(casts)
