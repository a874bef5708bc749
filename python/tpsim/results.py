"""Result tables: one row per run x flow direction, one row per run, time series, summary.

Files (written by :meth:`Results.write`, each atomically: a temporary file renamed into
place, so a failure never leaves a half-written table):

* ``flows.parquet`` / ``flows.csv`` -- one row per (run, flow, direction)
* ``network.parquet`` / ``network.csv`` -- one row per run
* ``summary.csv`` -- mean, standard deviation and 95% confidence interval of every metric
* ``timeseries.parquet`` -- binned series in long format (``series, flow, link, node,
  direction, time_s, value``)
"""

from __future__ import annotations

import math
import os
import tempfile
from pathlib import Path
from typing import Any, Callable, Iterable, Optional, Union

import polars as pl

#: Identifier columns of the flows table (everything else is a metric).
FLOW_KEYS = ["point", "run", "seed", "flow", "direction", "src", "dst", "transport", "app"]
#: Identifier columns of the network table (before the swept parameters' columns).
NETWORK_KEYS = ["point", "run", "seed"]


def _atomic(path: Path, write: Callable[[Path], Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    try:
        write(Path(tmp))
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def atomic_write_text(path: Path, text: str) -> None:
    """Writes ``text`` to ``path`` atomically (temporary file + rename)."""
    _atomic(path, lambda p: p.write_text(text, encoding="utf-8"))


def _t_quantile_975(df: int) -> float:
    """Two-sided 95% Student t quantile t(0.975, df) (scipy.stats)."""
    from scipy import stats

    return float(stats.t.ppf(0.975, df))


def summarize(flows: pl.DataFrame, network: pl.DataFrame, point_keys: Iterable[str] = ()) -> pl.DataFrame:
    """Per (sweep point, flow, direction) and per sweep point: n, mean, std and the 95%
    confidence interval (Student's t over replications) of every metric.

    Returns a long table with columns ``[*point_keys, table, flow, direction, metric, n,
    mean, std, ci95_low, ci95_high]``; ``std`` and the CI are null with fewer than 2 runs.
    Null metric values (undefined in a run, e.g. no delivery) are left out of ``n``.
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
            )
        )
        half = [
            (_t_quantile_975(n - 1) * s / math.sqrt(n)) if (n >= 2 and s is not None) else None
            for n, s in zip(agg["n"].to_list(), agg["std"].to_list())
        ]
        agg = agg.with_columns(pl.Series("half", half, dtype=pl.Float64))
        agg = agg.with_columns(
            (pl.col("mean") - pl.col("half")).alias("ci95_low"),
            (pl.col("mean") + pl.col("half")).alias("ci95_high"),
        ).drop("half")
        agg = agg.sort(group + ["_order"]).drop("_order").with_columns(pl.lit(table).alias("table"))
        if table == "network":
            agg = agg.with_columns(pl.lit(None, dtype=pl.UInt32).alias("flow"), pl.lit(None, dtype=pl.Utf8).alias("direction"))
        agg = agg.with_columns(pl.col("flow").cast(pl.UInt32), pl.col("direction").cast(pl.Utf8), pl.col("n").cast(pl.UInt32))
        out.append(agg.select(keys + ["table", "flow", "direction", "metric", "n", "mean", "std", "ci95_low", "ci95_high"]))
    if not out:
        return pl.DataFrame()
    return pl.concat(out, how="vertical")


class Results:
    """The tables of one or more runs of a scenario.

    Attributes:
        flows: one row per (run, flow, direction); metric columns as in docs/metrics.md.
        network: one row per run.
        timeseries: long format ``run, seed, series, flow, link, direction, time_s, value``.
        engine_seconds: wall time of each run's event loop, s (not part of the tables, which
            are deterministic).
    """

    def __init__(
        self,
        flows: pl.DataFrame,
        network: pl.DataFrame,
        timeseries: pl.DataFrame,
        engine_seconds: list[float],
        param_keys: Optional[list[str]] = None,
    ):
        self.flows = flows
        self.network = network
        self.timeseries = timeseries
        self.engine_seconds = engine_seconds
        #: Swept keys (columns of every table, after ``point``); empty without a sweep.
        self.param_keys: list[str] = list(param_keys or [])
        #: The sweep points (set by :func:`tpsim.run`).
        self.points: list = []
        #: The base scenario (set by :func:`tpsim.run`).
        self.base: Any = None

    @classmethod
    def from_runs(cls, runs: list[dict[str, Any]], param_keys: Optional[list[str]] = None) -> "Results":
        """Builds the tables from engine outputs; each dict has ``run``, ``seed``, optionally
        ``point`` and ``params`` (swept key -> value), and the engine's
        ``flows``/``network``/``timeseries`` columns. Rows are sorted by (point, run, flow,
        direction) whatever order the runs come in, so the tables do not depend on how many
        workers produced them."""
        keys = list(param_keys or [])
        runs = sorted(runs, key=lambda r: (r.get("point", 0), r["run"]))
        flows, nets, series = [], [], []
        for r in runs:
            ident = {"point": r.get("point", 0), **{k: r.get("params", {}).get(k) for k in keys}, "run": r["run"], "seed": r["seed"]}
            n = len(r["flows"]["flow"])
            flows.append(pl.DataFrame({**{k: [v] * n for k, v in ident.items()}, **r["flows"]}, strict=False))
            nets.append(pl.DataFrame({**{k: [v] for k, v in ident.items()}, **{k: [v] for k, v in r["network"].items()}}, strict=False))
            m = len(r["timeseries"]["series"])
            series.append(pl.DataFrame({**{k: [v] * m for k, v in ident.items()}, **r["timeseries"]}, strict=False))
        flows_df = _normalize(pl.concat(flows, how="vertical_relaxed"), keys).sort(["point", "run", "flow", "direction"], maintain_order=True) if flows else pl.DataFrame()
        net_df = _normalize(pl.concat(nets, how="vertical_relaxed"), keys).sort(["point", "run"], maintain_order=True) if nets else pl.DataFrame()
        ts_df = _normalize(pl.concat(series, how="vertical_relaxed"), keys) if series else pl.DataFrame()
        return cls(flows_df, net_df, ts_df, [float(r.get("engine_seconds", 0.0)) for r in runs], keys)

    def summary(self) -> pl.DataFrame:
        """Mean, std and 95% CI of every metric over the runs of each sweep point (see
        :func:`summarize`)."""
        return summarize(self.flows, self.network, ["point", *self.param_keys])

    def write(self, directory: Union[str, Path]) -> Path:
        """Writes every table into ``directory`` (created if needed), each file atomically."""
        d = Path(directory)
        d.mkdir(parents=True, exist_ok=True)
        _atomic(d / "flows.parquet", lambda p: self.flows.write_parquet(p))
        _atomic(d / "flows.csv", lambda p: self.flows.write_csv(p))
        _atomic(d / "network.parquet", lambda p: self.network.write_parquet(p))
        _atomic(d / "network.csv", lambda p: self.network.write_csv(p))
        _atomic(d / "summary.csv", lambda p: self.summary().write_csv(p))
        _atomic(d / "timeseries.parquet", lambda p: self.timeseries.write_parquet(p))
        return d


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
        elif name in ("direction", "transport", "app", "series"):
            casts.append(pl.col(name).cast(pl.Utf8))
        elif dtype == pl.Null or dtype.is_float():
            casts.append(pl.col(name).cast(pl.Float64))
        elif dtype.is_integer():
            casts.append(pl.col(name).cast(pl.Int64))
        else:
            casts.append(pl.col(name))
    return df.select(casts)
