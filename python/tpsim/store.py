"""The run store: each finished run on disk, so that a sweep's parent process holds only the
small tables of its runs, and an interrupted sweep resumes without redoing finished runs.

A run with key ``K`` (:func:`tpsim.api.run_key`) is stored in a directory (``OUT/runs``, or
a temporary directory for results not written anywhere) as:

* ``K.json`` -- the record: the run's identity (point, swept values, replication, seed), its
  flows and network rows, its engine time and the names of its other files. It is written
  last, atomically: a run is stored exactly when its record is there and names only files
  that are there.
* ``K.timeseries.parquet``, ``K.trace.parquet``, ``K.acks.parquet``,
  ``K.animation.parquet`` -- the run's time series, packet trace, per-ACK samples and movie
  trace, as the engine wrote them (the trace and the samples while the run went), with the
  engine's column types; :func:`scan` reads them with the documented types.
* ``K.tr`` -- the run's ns-2 trace text (``[output] ns2_trace``), written by the engine while
  the run went.

Results combine runs by streaming these files (polars ``scan_parquet`` / ``sink_parquet``),
never by holding every run in memory.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Iterable, Optional, Sequence

#: Version of the record format (``format`` in ``K.json``); a record of another format is
#: not reused (its run is made again).
FORMAT = 2

#: Outputs a run may write to files, and the name of each file (after the key).
PARQUET_KINDS = ("timeseries", "trace", "acks", "animation")
SUFFIX = {**{k: f".{k}.parquet" for k in PARQUET_KINDS}, "ns2": ".tr"}

#: Keys every record has.
RECORD_KEYS = ("format", "key", "run", "seed", "point", "params", "flows", "network", "files")


def record_path(store: Path, key: str) -> Path:
    """Where run ``key``'s record is."""
    return store / f"{key}.json"


def file_path(store: Path, key: str, kind: str) -> Path:
    """Where run ``key`` keeps its output ``kind`` (one of :data:`SUFFIX`)."""
    return store / f"{key}{SUFFIX[kind]}"


def partial_path(path: Path) -> Path:
    """Where an output is written while its run goes (renamed to ``path`` when it is done)."""
    return path.with_name(path.name + ".part")


def run_files(store: Path, key: str, kinds: Iterable[str] = SUFFIX) -> dict[str, str]:
    """The partial files (:func:`partial_path`) to hand to the engine for run ``key``, by
    output: what the engine is to write while it runs."""
    return {k: str(partial_path(file_path(store, key, k))) for k in kinds}


def settle(store: Path, key: str, written: dict[str, Any], asked: Iterable[str]) -> dict[str, str]:
    """After run ``key`` finished: renames the partial files the engine wrote (``written``,
    by output) into place, removes the partial files of outputs it did not write (``asked``
    but not made), and returns the record's ``files`` entry (output -> file name)."""
    out = {}
    for kind in asked:
        final = file_path(store, key, kind)
        part = partial_path(final)
        if kind in written:
            os.replace(part, final)
            out[kind] = final.name
        else:
            part.unlink(missing_ok=True)
    return out


def discard(store: Path, key: str) -> None:
    """Removes run ``key``'s partial files (a run that failed or was interrupted)."""
    for kind in SUFFIX:
        partial_path(file_path(store, key, kind)).unlink(missing_ok=True)


def remove(store: Path, key: str) -> None:
    """Removes run ``key``'s files, partial or whole (a run whose record could not be
    written is not stored)."""
    discard(store, key)
    for kind in SUFFIX:
        file_path(store, key, kind).unlink(missing_ok=True)


def load(store: Path, key: str) -> Optional[dict[str, Any]]:
    """Run ``key``'s record if the run is stored whole: the record is readable, of this
    format, of this run, and every file it names is there. ``None`` if there is no record;
    raises ``ValueError`` saying what is wrong with a damaged one."""
    path = record_path(store, key)
    if not path.exists():
        return None
    try:
        rec = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as e:
        raise ValueError(f"unreadable ({type(e).__name__})") from None
    if not isinstance(rec, dict) or any(k not in rec for k in RECORD_KEYS):
        raise ValueError("incomplete record")
    if rec["format"] != FORMAT:
        raise ValueError(f"record format {rec['format']!r}, this tpsim writes {FORMAT}")
    if rec["key"] != key:
        raise ValueError("the record of another run")
    files = rec["files"]
    if not isinstance(files, dict) or any(k not in SUFFIX or not isinstance(v, str) for k, v in files.items()):
        raise ValueError("incomplete record")
    missing = [v for v in files.values() if not (store / v).is_file()]
    if missing:
        raise ValueError(f"its file {missing[0]} is missing")
    return rec


def resolve_files(store: Path, rec: dict[str, Any]) -> dict[str, Path]:
    """The paths of the files a record names."""
    return {k: store / v for k, v in rec.get("files", {}).items()}


def spill(store: Path, key: str, res: dict[str, Any]) -> dict[str, str]:
    """Writes the outputs of a run made without files (a Dask worker returns them as
    columns) into the store, as the engine would have, and takes them out of ``res``;
    returns the record's ``files`` entry."""
    import polars as pl

    from . import ns2trace

    out = {}
    for kind in PARQUET_KINDS:
        cols = res.pop(kind, None)
        if cols is None:
            continue
        path = file_path(store, key, kind)
        frame = pl.DataFrame(cols, strict=False)
        frame.write_parquet(partial_path(path))
        os.replace(partial_path(path), path)
        out[kind] = path.name
        if kind == "trace" and res.get("ns2_trace"):
            tr = file_path(store, key, "ns2")
            ns2trace.write(frame, partial_path(tr), res["ns2_trace"])
            os.replace(partial_path(tr), tr)
            out["ns2"] = tr.name
    return out


def scan_one(path: Path, kind: str) -> Any:
    """One run's output file ``kind`` as a LazyFrame with the documented column types (a
    trace without ns-2 columns keeps only the plain ones)."""
    import polars as pl

    from .results import lazy_schema

    lf = pl.scan_parquet(path)
    names = lf.collect_schema().names()
    return lf.select([pl.col(c).cast(t) for c, t in lazy_schema(kind, names).items()])


def identity_types(idents: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The column types of the runs' identity columns (``point``, swept keys, ``run``,
    ``seed``): ``point`` and ``run`` UInt32, ``seed`` UInt64, a swept key the type polars
    gives its values across every run (e.g. Float64 for 5 and 7.5)."""
    import polars as pl

    if not idents:
        return {}
    frames = [pl.DataFrame({k: [v] for k, v in i.items()}, strict=False) for i in idents]
    schema = dict(pl.concat(frames, how="vertical_relaxed").schema)
    fixed = {"point": pl.UInt32, "run": pl.UInt32, "seed": pl.UInt64}
    return {k: fixed.get(k, t) for k, t in schema.items()}


def scan(parts: Sequence[tuple[dict[str, Any], Path]], kind: str) -> Any:
    """Every run's output ``kind`` as one LazyFrame: each run's rows in the engine's order,
    runs in the order of ``parts`` (pairs of the run's identity -- ``point``, swept values,
    ``run``, ``seed`` -- and its file), the identity as the first columns."""
    import polars as pl

    types = identity_types([i for i, _ in parts])
    frames = []
    for ident, path in parts:
        lf = scan_one(path, kind)
        frames.append(lf.select([pl.lit(ident[k], dtype=t).alias(k) for k, t in types.items()] + [pl.all()]))
    return pl.concat(frames, how="diagonal_relaxed")
