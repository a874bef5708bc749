"""Figures (matplotlib): metrics against swept parameters with 95% confidence intervals,
and time series of one run. Every figure is saved as PNG and SVG."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Optional, Union

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import polars as pl  # noqa: E402

from .metrics import label  # noqa: E402
from .results import FLOW_KEYS, mean_ci  # noqa: E402


def metric_points(df: pl.DataFrame, metric: str, x: str, hue: Optional[str]) -> dict[Any, list[tuple[Any, float, float, float, int]]]:
    """For each hue value: ``[(x, mean, ci95 low, ci95 high, n runs)]`` in order of first
    appearance of x (the interval of the summary, :func:`tpsim.results.mean_ci`; the mean
    itself with one run). Rows of one run with the same (x, hue) (several flows) are averaged
    first, then the runs give the mean and the interval."""
    keys = [x] + ([hue] if hue else []) + ["run"]
    per_run = df.filter(pl.col(metric).is_not_null()).group_by(keys, maintain_order=True).agg(pl.col(metric).cast(pl.Float64).mean())
    out: dict[Any, list] = {}
    xs = list(dict.fromkeys(df[x].to_list()))
    hues = list(dict.fromkeys(df[hue].to_list())) if hue else [None]
    for h in hues:
        sub = per_run.filter(pl.col(hue) == h) if hue else per_run
        line = []
        for xv in xs:
            vals = sub.filter(pl.col(x) == xv)[metric].to_list()
            if vals:
                m, lo, hi = mean_ci(metric, vals)
                line.append((xv, m, m if lo is None else lo, m if hi is None else hi, len(vals)))
        out[h] = line
    return out


def metric_figure(df: pl.DataFrame, metric: str, x: str, hue: Optional[str] = None, title: Optional[str] = None, connect: bool = True):
    """The metric (mean over runs, 95% CI error bars) against ``x``, one line per ``hue``
    value. ``df`` is a flows or network table. Non-numeric x values are drawn as categories
    in sweep order; ``connect=False`` draws markers only (for x values that are not a scale,
    such as flow directions).

    Raises:
        ValueError: if ``metric``, ``x`` or ``hue`` is not a column of ``df``.
    """
    for c in [metric, x] + ([hue] if hue else []):
        if c not in df.columns:
            raise ValueError(f"no column {c!r}; columns: {', '.join(df.columns)}")
    lines = metric_points(df, metric, x, hue)
    fig, ax = plt.subplots(figsize=(6.4, 4.0), dpi=100)
    xs_all = list(dict.fromkeys(df[x].to_list()))
    numeric = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in xs_all)
    pos = {v: (v if numeric else i) for i, v in enumerate(xs_all)}
    for h, pts in lines.items():
        if not pts:
            continue
        yerr = [[p[1] - p[2] for p in pts], [p[3] - p[1] for p in pts]]
        ax.errorbar([pos[p[0]] for p in pts], [p[1] for p in pts], yerr=yerr, marker="o", capsize=4, linestyle="-" if connect else "none", label=str(h) if h is not None else None)
    if not numeric:
        ax.set_xticks(list(range(len(xs_all))), [str(v) for v in xs_all], rotation=20 if len(xs_all) > 4 else 0)
    ax.set_xlabel(x)
    ax.set_ylabel(label(metric))
    n_runs = df["run"].n_unique()
    ax.set_title(title or f"{metric} (mean, 95% CI over {n_runs} run{'s' if n_runs != 1 else ''})")
    if hue and len(lines) > 1:
        ax.legend(title=hue)
    ax.grid(True, alpha=0.3)
    fig.tight_layout()
    return fig


def timeseries_figure(ts: pl.DataFrame, series: str, run: int = 0, point: int = 0):
    """One series of one run over time: a line per flow direction (or per link direction for
    ``queue_packets``).

    Raises:
        ValueError: if the series, run or point is not in the table.
    """
    sub = ts.filter((pl.col("series") == series) & (pl.col("run") == run) & (pl.col("point") == point))
    if sub.height == 0:
        raise ValueError(f"no time series {series!r} for point {point}, run {run}")
    owners = ["link", "node"] if series == "queue_packets" else ["flow"]
    owners = [o for o in owners if o in sub.columns and sub[o].null_count() < sub.height]
    fig, ax = plt.subplots(figsize=(6.4, 3.6), dpi=100)
    for key, g in sub.group_by(owners + ["direction"], maintain_order=True):
        name = " ".join(f"{o} {v}" for o, v in zip(owners, key[:-1]) if v is not None)
        ax.plot(g["time_s"].to_list(), g["value"].to_list(), drawstyle="steps-post", label=f"{name} {key[-1]}")
    ax.set_xlabel("time [s]")
    ax.set_ylabel(label(series) if series != "queue_packets" else "queue_packets [packets]")
    ax.set_title(f"{series} over time (point {point}, run {run})")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize="small")
    fig.tight_layout()
    return fig


def save(fig, stem: Union[str, Path]) -> list[Path]:
    """Writes ``stem.png`` and ``stem.svg`` (created atomically) and closes the figure."""
    from .results import _atomic

    stem = Path(stem)
    paths = []
    for ext in ("png", "svg"):
        p = stem.with_suffix(f".{ext}")
        _atomic(p, lambda tmp, ext=ext: fig.savefig(tmp, format=ext, metadata={"Date": None} if ext == "svg" else {"Software": None}))
        paths.append(p)
    plt.close(fig)
    return paths


def default_axes(results_flows: pl.DataFrame, param_keys: list[str]) -> tuple[str, Optional[str]]:
    """(x, hue) for report figures: x = the first swept key that is not a transport, hue = a
    swept transport key or the ``transport`` column when it varies, else the flow direction."""
    transport_keys = [k for k in param_keys if k.endswith("transport")]
    others = [k for k in param_keys if k not in transport_keys]
    if others:
        x = others[0]
    elif transport_keys:
        x = transport_keys[0]
    else:
        x = "flow_direction"
    if transport_keys and x not in transport_keys:
        hue: Optional[str] = transport_keys[0]
    elif results_flows["transport"].n_unique() > 1 and x != "transport":
        hue = "transport"
    else:
        hue = "flow_direction" if x != "flow_direction" else None
    return x, hue


def combine_hue(df: pl.DataFrame, x: str, hue: Optional[str], param_keys: list[str]) -> tuple[pl.DataFrame, Optional[str]]:
    """Swept keys that are neither ``x`` nor ``hue`` would otherwise be averaged together;
    fold them into the hue so each of their combinations gets its own line."""
    others = [k for k in param_keys if k not in (x, hue) and k in df.columns]
    if not others:
        return df, hue
    parts = ([hue] if hue else []) + others
    name = " / ".join(parts)
    expr = pl.concat_str([pl.col(c).cast(pl.Utf8) for c in parts], separator=" / ")
    return df.with_columns(expr.alias(name)), name


def with_flow_direction(df: pl.DataFrame) -> pl.DataFrame:
    """Adds a ``flow_direction`` column ("0 fwd") for grouping."""
    if "flow" not in df.columns:
        return df
    return df.with_columns((pl.col("flow").cast(pl.Utf8) + " " + pl.col("direction")).alias("flow_direction"))


__all__ = ["metric_figure", "timeseries_figure", "save", "metric_points", "default_axes", "with_flow_direction", "FLOW_KEYS"]
