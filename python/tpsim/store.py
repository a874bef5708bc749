"""The run store: each finished run on disk, so that a sweep's parent process holds only the
small tables of its runs, and an interrupted sweep resumes without redoing finished runs.

A run with key ``K`` (:func:`tpsim.api.run_key`) is stored in a directory (``OUT/runs``, or
a temporary directory for results not written anywhere) as:

* ``K.json`` -- the record: the run's identity (point, swept values, replication, seed), its
  flows and network rows, its engine time, the names and sizes of its other files, and a
  checksum. It is written last, atomically: a run is stored exactly when its record is there,
  whole, and names only files that are there.
* ``K.timeseries.parquet``, ``K.trace.parquet``, ``K.acks.parquet``,
  ``K.animation.parquet`` -- the run's time series, packet trace, per-ACK samples and movie
  trace, as the engine wrote them (the trace and the samples while the run went), with the
  engine's column types; :func:`scan` reads them with the documented types.
* ``K.tr`` -- the run's ns-2 trace text (``[output] ns2_trace``), written by the engine while
  the run went.

Results combine runs by streaming these files (polars ``scan_parquet`` / ``sink_parquet``),
never by holding every run in memory.

Integrity. A stored run is reused only if :func:`load` finds it whole; otherwise it is made
again (the caller warns on stderr). The checks, in order:

* the record's **checksum**: its last member is ``"checksum": "<SHA-256 hex>"``, the hash of the
  record's bytes before that member (so checking it needs no second serialization; any edit,
  a changed counter included, fails it);
* its **format** (:data:`FORMAT`; records of other formats also have other keys, as the key
  hashes the format) and its **key**;
* its **shape** (:func:`check_record`): ``flows`` columns of equal lengths, counters and other
  metrics numbers within their bounds (:func:`tpsim.metrics.bounds`: none negative), names
  and identity of the right types. A checksum covers what was written, not whether the
  writer was right: this catches a record that was consistent when written but is not a run;
* its **other files** (time series, traces): each must have the exact name of its kind, the
  size the record gives, and for Parquet the ``PAR1`` magic at both ends. They are not
  hashed: a trace can be hundreds of MB and a study reuses thousands of runs, so hashing
  would cost as much as reading every trace on each reuse, while a ``stat`` and two 4-byte
  reads cost microseconds. Size and magic catch what happens to files in practice (a
  truncated or partly written file, one replaced by another, the zeros a crash can leave
  in place of a file's content); an edit inside a file that keeps its size and ends is not
  detected.

Reusing a stored run thus costs reading, hashing, parsing and checking its record (a few kB:
its flow rows) and a look at its files: on study C's 480 stored runs (4.6 kB records, one
time series file each), 0.20 ms per run against 0.09 ms for reading and parsing alone
(0.08 ms of it the shape checks, 0.01 ms the files, 0.005 ms the hash), about 0.1 s in all
(twice per command: the plan counts the stored runs, then they are loaded). ``tpsim run`` of
study C reusing all 480 took 5.4-7.0 s, against 6.0-7.6 s without the checks (a busy 2-core
machine: the checks are within its noise).
"""

from __future__ import annotations

import hashlib
import json
import math
import os
from pathlib import Path
from typing import Any, Iterable, Optional, Sequence

#: Version of the record format (``format`` in ``K.json``); a record of another format is
#: not reused (its run is made again). 3: checksum and file sizes.
FORMAT = 3

#: Outputs a run may write to files, and the name of each file (after the key).
PARQUET_KINDS = ("timeseries", "trace", "acks", "animation")
SUFFIX = {**{k: f".{k}.parquet" for k in PARQUET_KINDS}, "ns2": ".tr"}

#: Keys every record has.
RECORD_KEYS = ("format", "key", "run", "seed", "point", "params", "flows", "network", "files", "sizes")

#: The checksum member, the record's last: ``"checksum": "<64 hex digits>"}``.
CHECKSUM_KEY = "checksum"
_CHECKSUM_HEAD = f', "{CHECKSUM_KEY}": "'.encode()
#: Bytes after the checksum's head: 64 hex digits, ``"}`` and an optional newline.
_CHECKSUM_TAIL = 64 + 2

#: Columns of the flows table that are not metrics: the flow's identity.
_FLOW_IDS = {"flow": int, "src": int, "dst": int, "direction": str, "transport": str, "app": str}
#: The magic bytes at both ends of a Parquet file.
_PARQUET_MAGIC = b"PAR1"


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


def record_text(store: Path, rec: dict[str, Any]) -> str:
    """The text of record ``rec`` (whose ``files`` are in ``store``), as :func:`load`
    checks it: its content with the size of each file it names (``sizes``), then the checksum
    of the bytes before it. Sets ``rec["sizes"]``."""
    rec["sizes"] = {kind: (store / name).stat().st_size for kind, name in rec["files"].items()}
    body = json.dumps(rec)  # ASCII (ensure_ascii): the text is its bytes
    assert body.endswith("}") and len(body) > 2
    head = body[:-1]
    digest = hashlib.sha256(head.encode("ascii")).hexdigest()
    return f'{head}, "{CHECKSUM_KEY}": "{digest}"}}\n'


def load(store: Path, key: str) -> Optional[dict[str, Any]]:
    """Run ``key``'s record if the run is stored whole (see the module doc): the record is
    readable, its checksum right, of this format, of this run and of a run's shape, and
    every file it names is there with its size. ``None`` if there is no record; raises
    ``ValueError`` saying what is wrong with a damaged one."""
    path = record_path(store, key)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as e:
        raise ValueError(f"unreadable ({e.strerror or type(e).__name__})") from None
    at = data.rfind(_CHECKSUM_HEAD, max(0, len(data) - len(_CHECKSUM_HEAD) - _CHECKSUM_TAIL - 1))
    if at < 0:
        raise ValueError("no checksum (truncated, or not a record of this tpsim)")
    stored = data[at + len(_CHECKSUM_HEAD):].rstrip(b"\n")
    if not stored.endswith(b'"}') or hashlib.sha256(data[:at]).hexdigest().encode() != stored[:-2]:
        raise ValueError("its checksum does not match its content")
    try:
        rec = json.loads(data)
    except (UnicodeDecodeError, ValueError, RecursionError) as e:
        raise ValueError(f"unreadable ({type(e).__name__})") from None
    if not isinstance(rec, dict):
        raise ValueError("not a record")
    rec.pop(CHECKSUM_KEY, None)
    check_record(rec, key)
    for kind, name in rec["files"].items():
        _check_file(store / name, kind, rec["sizes"][kind])
    return rec


def _check_file(path: Path, kind: str, size: int) -> None:
    """A stored run's file ``kind`` is there, of ``size`` bytes, and (Parquet) has the
    Parquet magic at both ends."""
    try:
        with open(path, "rb") as f:
            actual = os.fstat(f.fileno()).st_size
            if actual != size:
                raise ValueError(f"its file {path.name} has {actual} bytes, not {size}")
            if kind in PARQUET_KINDS:
                start = f.read(4)
                f.seek(max(0, size - 4))
                if start != _PARQUET_MAGIC or f.read(4) != _PARQUET_MAGIC:
                    raise ValueError(f"its file {path.name} is not Parquet")
    except FileNotFoundError:
        raise ValueError(f"its file {path.name} is missing") from None
    except OSError as e:
        raise ValueError(f"its file {path.name} is unreadable ({e.strerror or type(e).__name__})") from None


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def check_record(rec: dict[str, Any], key: str) -> None:
    """Checks that ``rec`` has the shape of run ``key``'s record; raises ``ValueError`` naming
    the first thing that is not as :func:`tpsim.api.execute` writes it: a missing entry, the
    wrong format or key, identity values that are not non-negative integers, ``flows`` not a
    table of equal-length columns with ``flow`` and ``direction``, ``network`` not a row,
    a metric not a number or outside its bounds (:func:`tpsim.metrics.bounds`; a counter is
    never negative), ``files`` other than this run's file names, or ``sizes`` not their byte
    counts."""
    missing = [k for k in RECORD_KEYS if k not in rec]
    if missing:
        raise ValueError(f"incomplete record (no {missing[0]})")
    if rec["format"] != FORMAT:
        raise ValueError(f"record format {rec['format']!r:.20}, this tpsim writes {FORMAT}")
    if rec["key"] != key:
        raise ValueError("the record of another run")
    for k in ("point", "run", "seed"):
        if not _is_int(rec[k]) or not 0 <= rec[k] < 2**64:
            raise ValueError(f"{k} is {rec[k]!r:.40}, expected a non-negative integer")
    if not isinstance(rec["params"], dict):
        raise ValueError("params is not a table")
    es = rec.get("engine_seconds", 0.0)
    if isinstance(es, bool) or not isinstance(es, (int, float)) or not es >= 0:
        raise ValueError(f"engine_seconds is {es!r:.40}, expected seconds")
    if not isinstance(rec.get("ns2_trace", ""), str):
        raise ValueError("ns2_trace is not a format name")

    flows = rec["flows"]
    if not isinstance(flows, dict) or not all(isinstance(c, list) for c in flows.values()):
        raise ValueError("flows is not a table of columns")
    for k in ("flow", "direction"):
        if k not in flows:
            raise ValueError(f"flows has no column {k}")
    n = len(flows["flow"])
    for name, col in flows.items():
        if len(col) != n:
            raise ValueError(f"flows column {name} has {len(col)} rows, flow has {n}")
        want = _FLOW_IDS.get(name)
        if want is str:
            if not all(isinstance(v, str) for v in col):
                raise ValueError(f"flows column {name} holds a value that is not text")
        elif want is int:
            if not all(_is_int(v) and v >= 0 for v in col):
                raise ValueError(f"flows column {name} holds a value that is not a non-negative integer")
        else:
            _check_metric("flows", name, col)
    net = rec["network"]
    if not isinstance(net, dict):
        raise ValueError("network is not a row")
    for name, v in net.items():
        if v is None:
            continue
        lo, hi = _bounds(name)
        if type(v) not in _NUMBER_TYPES:
            raise ValueError(f"network column {name} holds {v!r:.40}, expected a number")
        if v < lo or v > hi:
            raise ValueError(f"network column {name} holds {v!r:.40}, outside [{lo:g}, {hi:g}]")

    files, sizes = rec["files"], rec["sizes"]
    if not isinstance(files, dict) or any(k not in SUFFIX or v != f"{key}{SUFFIX[k]}" for k, v in files.items()):
        raise ValueError("files does not name this run's files")
    if not isinstance(sizes, dict) or set(sizes) != set(files) or not all(_is_int(v) and v >= 0 for v in sizes.values()):
        raise ValueError("sizes does not give the size of each of its files")


#: Types of a metric's values, and of the values not null.
_NUMBER_TYPES = {int, float}
_METRIC_TYPES = {int, float, type(None)}
#: Bounds of each metric seen (:func:`tpsim.metrics.bounds`, unbounded for unknown columns).
_BOUNDS: dict[str, tuple[float, float]] = {}


def _bounds(name: str) -> tuple[float, float]:
    b = _BOUNDS.get(name)
    if b is None:
        from .metrics import bounds

        b = _BOUNDS[name] = bounds(name) or (-math.inf, math.inf)
    return b


def _check_metric(table: str, name: str, values: list) -> None:
    """Every value of metric column ``name`` is null or a number within its bounds (NaN,
    which compares with nothing, is let through: an undefined float)."""
    if not set(map(type, values)) <= _METRIC_TYPES:
        v = next(v for v in values if type(v) not in _METRIC_TYPES)
        raise ValueError(f"{table} column {name} holds {v!r:.40}, expected a number")
    nums = [v for v in values if v is not None and v == v]
    lo, hi = _bounds(name)
    if nums and (min(nums) < lo or max(nums) > hi):
        v = next(v for v in nums if v < lo or v > hi)
        raise ValueError(f"{table} column {name} holds {v!r:.40}, outside [{lo:g}, {hi:g}]")


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

    from .columns import lazy_schema

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


#: Up to this many runs, :func:`scan` reads each run's file by a scan of its own; beyond, by
#: one scan per stretch of files with one schema. One scan per run makes polars' planning
#: grow with the square of the runs (30 s for 2,000 runs); one scan over many files reads
#: several at once (study C's four traced points: a 1.0 GB peak, against 0.3 GB one by one).
SCAN_EACH_MAX = 64


def scan(parts: Sequence[tuple[dict[str, Any], Path]], kind: str) -> Any:
    """Every run's output ``kind`` as one LazyFrame: each run's rows in the engine's order,
    runs in the order of ``parts`` (pairs of the run's identity -- ``point``, swept values,
    ``run``, ``seed`` -- and its file), the identity as the first columns (see
    :data:`SCAN_EACH_MAX` for how the files are read)."""
    import polars as pl

    from .columns import lazy_schema

    types = identity_types([i for i, _ in parts])
    if len(parts) <= SCAN_EACH_MAX:
        frames = []
        for ident, path in parts:
            lf = scan_one(path, kind)
            frames.append(lf.select([pl.lit(ident[k], dtype=t).alias(k) for k, t in types.items()] + [pl.all()]))
        return pl.concat(frames, how="diagonal_relaxed")
    segments: list[tuple[dict[str, Any], list[tuple[dict[str, Any], str]]]] = []
    for ident, path in parts:
        schema = dict(pl.read_parquet_schema(path))
        if segments and segments[-1][0] == schema:
            segments[-1][1].append((ident, str(path)))
        else:
            segments.append((schema, [(ident, str(path))]))
    frames = []
    for schema, runs in segments:
        paths = [p for _, p in runs]
        lf = pl.scan_parquet(paths, include_file_paths="_file")
        idents = [pl.col("_file").replace_strict(paths, [i[k] for i, _ in runs], return_dtype=t).alias(k)
                  for k, t in types.items()]
        frames.append(lf.select(idents + [pl.col(c).cast(t) for c, t in lazy_schema(kind, list(schema)).items()]))
    return frames[0] if len(frames) == 1 else pl.concat(frames, how="diagonal_relaxed")
