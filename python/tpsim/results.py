"""Result tables: one row per run x flow direction, one row per run, time series, summary.

Files (written by :meth:`Results.write`, each atomically: a temporary file renamed into
place, so a failure never leaves a half-written table):

* ``flows.parquet`` / ``flows.csv`` -- one row per (run, flow, direction)
* ``network.parquet`` / ``network.csv`` -- one row per run
* ``summary.csv`` -- mean, standard deviation and 95% confidence interval of every metric
* ``timeseries.parquet`` -- binned series in long format (``series, flow, link, node,
  direction, time_s, value``)
* ``trace.parquet`` -- with ``[output] trace = true``: the per-packet event trace, one row per
  send, forward, receive and drop (``point, run, seed, time_s, event, node, layer, kind,
  flow, direction, packet, size_b, reason, duplicate``; docs/metrics.md)
* ``ns2/p<point>-run<run>.tr`` -- with ``[output] ns2_trace``: each run's packet trace as an
  ns-2 trace file (docs/ns2-trace.md)
* ``animation.parquet`` -- with ``[output] animation = true``: the network movie's trace
  (positions, hops, drops, deliveries, route changes, node events per frame;
  docs/workbench.md), read by ``tpsim animate`` and the report
* ``acks.parquet`` -- with ``[output] ack_samples = true``: the per-ACK samples, one row per
  acknowledgement a data sender processed (``point, run, seed, time_s, flow, direction,
  cwnd_bytes, ssthresh_bytes, cwnd_packets, ssthresh_packets, srtt_s, rtt_sample_s, x_bps,
  x_recv_bps, pacing_rate_bps, btlbw_bps, rtprop_s, bbr_state``; docs/metrics.md)
* ``scenario.resolved.json`` -- the scenario with every default filled in
* ``tpsim.json`` -- what :meth:`Results.read` needs to rebuild figures and the report: the
  scenario as written, its source, the sweep points (with their cases), the ``--set`` values,
  the command that reproduces the run and the engine build
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable, Optional, Union

import polars as pl

# Every name of the tables' modules, where callers have always found them.
from .columns import (  # noqa: F401
    ACKS_SCHEMA,
    ANIMATION_SCHEMA,
    FLOW_KEYS,
    LAZY_TABLES,
    NETWORK_KEYS,
    NS2_TRACE_SCHEMA,
    ROLES,
    TIMESERIES_SCHEMA,
    TRACE_SCHEMA,
    lazy_schema,
)
from .files import (  # noqa: F401
    ENOSPC_HOOK,
    OutputPathError,
    ResultsError,
    _atomic,
    _atomic_many,
    atomic_write_text,
    check_output_dir,
    check_output_file,
)
from .tables import (  # noqa: F401
    BOOTSTRAP_RESAMPLES,
    BOOTSTRAP_SEED,
    CI_BOOTSTRAP,
    CI_T,
    FLOW_COLUMNS,
    META_FORMAT,
    NETWORK_COLUMNS,
    SUMMARY_COLUMNS,
    ResultTables,
    add_roles,
    mean_ci,
    summarize,
)


class Results(ResultTables):
    """The tables of one or more runs of a scenario.

    The growing tables (time series, packet trace, movie trace, per-ACK samples) stay in
    files -- each run's in the run store while they are made (:mod:`tpsim.store`), the
    combined ones in the output directory once written -- and are read when asked for: as an
    attribute (the whole table, then kept), or lazily with :meth:`scan`.

    Attributes:
        flows: one row per (run, flow, direction); metric columns as in docs/metrics.md.
        network: one row per run.
        ns2_files: the ns-2 trace file of each run (point, run) made with
            ``[output] ns2_trace``; :meth:`write` puts them in ``ns2/``.
        engine_seconds: wall time of each run's event loop, s (not part of the tables, which
            are deterministic).
    """

    def write_report(self, directory: Union[str, Path, None] = None, command: Optional[str] = None,
                     progress: Optional[Callable[[int, int], None]] = None) -> Path:
        """Writes the figures (``figures/``: PNG and PDF each, ``figures.json``) and
        ``report.html`` into ``directory`` (default: where these results were written or read
        from); ``command`` replaces the reproduce command shown. Returns the report's path.

        Raises:
            TypeError: if ``directory`` is not a path, ``command`` not a string or
                ``progress`` not callable.
            ValueError: without a directory (:class:`OutputPathError` for an empty one, an
                existing file or a path under one).
            ResultsError: (a ValueError) if a time series or trace file's data is damaged
                (:meth:`read` checks the files' footers, not every page).
            OSError: if a file cannot be written.
        """
        from .report import write_report

        if command is not None and not isinstance(command, str):
            raise TypeError(f"command must be a string, got {type(command).__name__} {command!r:.80}")
        if progress is not None and not callable(progress):
            raise TypeError(f"progress must be a callable progress(done, total), got {type(progress).__name__} {progress!r:.80}")
        d = check_output_dir(directory, "directory") if directory is not None else self.directory
        if d is None:
            raise ValueError("write_report needs a directory: these results were not written anywhere yet")
        try:
            return write_report(self, d, command=command if command is not None else self.command, progress=progress)
        except pl.exceptions.PolarsError:
            bad = self.damaged_files()
            if bad:
                raise ResultsError(f"{bad[0]}: damaged Parquet data (expected the table tpsim run wrote; "
                                   "tpsim run again rewrites it from the stored runs)") from None
            raise
