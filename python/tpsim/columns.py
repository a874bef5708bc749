"""Columns of the result tables: the identifier columns of the flows and network tables, and
the names and column types of the growing tables (time series, packet trace, movie trace,
per-ACK samples) that :class:`tpsim.results.Results` keeps in files.

Below the run store (:mod:`tpsim.store`) and the tables (:mod:`tpsim.tables`), which both
read these files with these types.
"""

from __future__ import annotations

from typing import Any, Iterable

import polars as pl

#: Identifier columns of the flows table (everything else is a metric). ``role`` is ``main``
#: for the scenario's own flows (``[[flows]]``, ``[sensors]``, ns-2 traffic) and
#: ``background`` for the random ``[background]`` flows that follow them.
FLOW_KEYS = ["point", "run", "seed", "flow", "direction", "src", "dst", "transport", "app", "role"]
#: Roles of flows (``role`` column).
ROLES = ("main", "background")
#: Identifier columns of the network table (before the swept parameters' columns).
NETWORK_KEYS = ["point", "run", "seed"]


#: The tables of :class:`tpsim.results.Results` kept in files and read only when asked for
#: (attribute access reads one whole; :meth:`~tpsim.results.Results.scan` reads lazily).
LAZY_TABLES = ("timeseries", "trace", "animation", "acks")


#: Column types of the time series (``timeseries.parquet``), in column order after the run's
#: identity.
TIMESERIES_SCHEMA = {
    "series": pl.Utf8, "flow": pl.UInt32, "link": pl.UInt32, "node": pl.UInt32, "direction": pl.Utf8,
    "time_s": pl.Float64, "value": pl.Float64,
}

#: Column types of the packet trace (``trace.parquet``), in column order after the run's
#: identity (``point``, swept keys, ``run``, ``seed``).
TRACE_SCHEMA = {
    "time_s": pl.Float64, "event": pl.Utf8, "node": pl.UInt32, "layer": pl.Utf8, "kind": pl.Utf8,
    "flow": pl.UInt32, "direction": pl.Utf8, "packet": pl.UInt32, "size_b": pl.UInt32, "reason": pl.Utf8,
    "duplicate": pl.Boolean,
}

#: Column types of the ns-2 columns the trace has with ``[output] ns2_trace``
#: (docs/ns2-trace.md), after those of :data:`TRACE_SCHEMA`.
NS2_TRACE_SCHEMA = {
    "uid": pl.UInt32, "hop": pl.UInt32, "src": pl.UInt32, "sport": pl.UInt32, "dst": pl.UInt32,
    "dport": pl.UInt32, "ttl": pl.UInt32, "ns2_type": pl.Utf8, "message": pl.Utf8,
}


#: Column types of the network movie's trace (``animation.parquet``), in column order after
#: the run's identity.
ANIMATION_SCHEMA = {
    "time_s": pl.Float64, "kind": pl.Utf8, "node": pl.UInt32, "peer": pl.UInt32, "old_peer": pl.UInt32,
    "flow": pl.UInt32, "direction": pl.Utf8, "reason": pl.Utf8, "packets": pl.UInt64, "bytes": pl.UInt64,
    "span_s": pl.Float64, "x_m": pl.Float64, "y_m": pl.Float64, "range_m": pl.Float64,
}


#: Column types of the per-ACK samples (``acks.parquet``), in column order after the run's
#: identity (docs/metrics.md, "Per-ACK samples").
ACKS_SCHEMA = {
    "time_s": pl.Float64, "flow": pl.UInt32, "direction": pl.Utf8, "cwnd_bytes": pl.Float64,
    "ssthresh_bytes": pl.Float64, "cwnd_packets": pl.Float64, "ssthresh_packets": pl.Float64, "srtt_s": pl.Float64,
    "rtt_sample_s": pl.Float64, "x_bps": pl.Float64, "x_recv_bps": pl.Float64, "pacing_rate_bps": pl.Float64,
    "btlbw_bps": pl.Float64, "rtprop_s": pl.Float64, "bbr_state": pl.Float64,
}


def lazy_schema(kind: str, columns: Iterable[str]) -> dict[str, Any]:
    """The column types of the lazy table ``kind`` (one of :data:`LAZY_TABLES`) after the
    run's identity, for a table with ``columns`` (a trace has the ns-2 columns only if it was
    recorded with them)."""
    if kind == "trace":
        return {**TRACE_SCHEMA, **(NS2_TRACE_SCHEMA if "uid" in columns else {})}
    return {"timeseries": TIMESERIES_SCHEMA, "animation": ANIMATION_SCHEMA, "acks": ACKS_SCHEMA}[kind]
