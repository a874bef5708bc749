"""The ``tpsim`` command's subcommands (a typer app); :func:`tpsim.cli.main` runs it. Kept
apart from :mod:`tpsim.cli` so that ``tpsim --version`` need not import typer.

No ``from __future__ import annotations`` here: typer would then evaluate every parameter's
annotation string each time the command starts (a few ms)."""

import json
import re
import shlex
import sys
from pathlib import Path
from typing import List, Optional

import typer

from . import _tpsim
from ._errors import _fail, _one_line, _os_error, _path_arg, _scenario_error, interrupted
from .progress import RunProgress, stderr_is_terminal
from .scenario import Scenario

app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False,
                  context_settings={"help_option_names": ["-h", "--help"]},
                  help="tpsim: compare transport protocols over wired and wireless networks.")


def _load_or_exit(path: str):
    from .scenario import load

    p = _path_arg(path, "SCENARIO")
    try:
        return load(p)
    except _tpsim.ScenarioError as e:
        _fail(_scenario_error(e))
    except OSError as e:
        _fail(f"error: cannot read {p}: {_one_line(e.strerror or e)}")


def _version_flag(value: bool) -> None:
    if value:
        from ._build import build_id

        typer.echo(build_id())
        raise typer.Exit(0)


@app.callback()
def _root(
    version: bool = typer.Option(False, "--version", "-V", help="Print the tpsim version and exit.", is_eager=True,
                                 callback=_version_flag),
) -> None:
    """tpsim: compare transport protocols over wired and wireless networks."""


@app.command()
def validate(scenario: str = typer.Argument(..., help="Scenario file (TOML).")) -> None:
    """Check a scenario file (and every point of its sweep); print every problem with its key and line."""
    from .api import RunTooLarge, check_points

    sc = _load_or_exit(scenario)
    try:
        n = check_points(sc)
    except _tpsim.ScenarioError as e:
        _fail(_scenario_error(e))
    except RunTooLarge as e:
        _fail(f"error: {_one_line(e)}")
    typer.echo(f"{scenario}: ok ({n} sweep point(s) x {sc.runs} run(s), seed {sc.seed})")


def _failed_runs(e, out: Path) -> str:
    """The message of a sweep with failed runs: one line, plus one line per failed run when
    several failed."""
    total = getattr(e, "total", None) or len(e.failures) + e.completed
    head = (f"error: {len(e.failures)} of {total} runs failed ({e.completed} stored in {out / 'runs'}; "
            "re-run the same command to complete the rest)")
    if len(e.failures) == 1:
        return f"{head}: {_one_line(e.failures[0])}"
    return head + ":\n" + "\n".join(f"  {_one_line(f)}" for f in e.failures)


def _run(
    scenario: "str | Scenario", out_arg: str, seed: Optional[int], runs: Optional[int], jobs: int, scheduler: Optional[str],
    set_: List[str], sweep: List[str], pcap: bool, quiet: bool, report: bool,
    limits: "tuple[str, Optional[float], Optional[str]]" = ("auto", None, None), force: bool = False,
) -> None:
    from .api import RunTooLarge, SchedulerError, SweepFailed, check_scheduler, parse_size, plan, run_plan

    if report:  # the report's render workers import matplotlib while the runs are planned and run
        from ._pool import prestart

        prestart()
    out = _path_arg(out_arg, "-o/--out")
    # plan() reads the file: it refuses one too large to fit before parsing it
    sc = scenario if isinstance(scenario, Scenario) else _path_arg(scenario, "SCENARIO")
    if runs is not None and runs < 1:
        _fail(f"error: --runs must be at least 1, got {runs}")
    max_memory, run_time_limit, run_memory = limits
    try:
        run_memory_limit = parse_size(run_memory, "--run-memory-limit") if run_memory is not None else None
        if max_memory.strip().lower() != "auto":
            parse_size(max_memory, "--max-memory")
        if run_time_limit is not None and not (run_time_limit > 0 and run_time_limit < float("inf")):
            raise ValueError(f"--run-time-limit: expected seconds greater than 0, found {run_time_limit}")
        if scheduler is not None:
            try:
                check_scheduler(scheduler)
            except ValueError:
                raise ValueError(f"--scheduler: expected an address such as tcp://HOST:8786, got {scheduler!r:.200}") from None
        p = plan(sc, seed=seed, runs=runs, set=set_, sweep=sweep, out=out, max_memory=max_memory,
                 run_memory_limit=run_memory_limit, force=force)
    except _tpsim.ScenarioError as e:
        _fail(_scenario_error(e))
    except (RunTooLarge, ValueError, TypeError) as e:
        _fail(f"error: {_one_line(e)}")
    except OSError as e:  # the scenario file (the plan writes nothing)
        _fail(f"error: cannot read {e.filename or sc}: {_one_line(e.strerror or e)}")
    sc = p.base
    from .files import OutputPathError, check_output_dir

    try:
        check_output_dir(out, "output directory (-o)")
    except OutputPathError as e:
        _fail(f"error: {_one_line(e)}")
    except OSError as e:
        _fail(_os_error(e, "cannot write the output directory"), 1)
    total = len(p.jobs)
    todo = total - (0 if pcap else p.stored)
    if jobs > 1 and scheduler is None:
        from ._pool import cpus

        if jobs > cpus():
            typer.echo(f"note: -j {jobs}: this machine lets tpsim use {cpus()} core(s); at most {cpus()} worker processes", err=True)
    command = "tpsim " + " ".join(shlex.quote(a) for a in sys.argv[1:])
    try:
        # The bar: runs done and, for a run made in this process, its simulated seconds.
        with RunProgress(sc.name, total, enabled=not quiet and stderr_is_terminal()) as bar:
            res = run_plan(p, out, jobs=jobs, scheduler=scheduler, pcap=pcap, progress=bar.runs_done if bar.enabled else None,
                           run_time_limit=run_time_limit, run_memory_limit=run_memory_limit, command=command,
                           sim_progress=bar.sim_time if bar.enabled else None)
            if report:
                res.write_report(out, command=command, progress=bar.report_step())
    except SweepFailed as e:
        _fail(_failed_runs(e, out), 1)
    except KeyboardInterrupt as e:
        word, code = interrupted(e)
        _fail(f"{word}: finished runs are stored in {out / 'runs'}; re-run the same command to complete the rest.", code)
    except SchedulerError as e:
        _fail(f"error: {_one_line(e)}", 1)
    except OSError as e:
        _fail(_os_error(e) + f" (stored runs in {out / 'runs'} are intact; re-run the same command once fixed)", 1)
    except RuntimeError as e:
        _fail(f"error: {_one_line(e)}", 1)
    typer.echo(
        f"{sc.name}: {len(p.points)} point(s) x {total // len(p.points)} run(s); ran {todo}, reused {total - todo}; "
        f"engine {res.engine_seconds_now:.3f} s -> {out}/" + (" (report.html)" if report else "")
    )


@app.command()
def run(
    scenario: str = typer.Argument(..., help="Scenario file (TOML)."),
    out: str = typer.Option(..., "-o", "--out", help="Output directory (created); finished runs are stored in OUT/runs and reused."),
    seed: Optional[int] = typer.Option(None, "--seed", help="Master seed (default: simulation.seed)."),
    runs: Optional[int] = typer.Option(None, "--runs", help="Replications per sweep point (default: simulation.runs)."),
    jobs: int = typer.Option(0, "-j", "--jobs", help="Local worker processes (0: one per core, once runs prove long enough to be worth them; 1: no worker processes)."),
    scheduler: Optional[str] = typer.Option(None, "--scheduler", help="Dask scheduler address (tcp://HOST:PORT): run the jobs on its workers."),
    set_: List[str] = typer.Option([], "--set", help="KEY=VALUE set for every point, e.g. --set flows.0.app.interval=10ms (repeatable; a key the sweep or a case sets is an error)."),
    sweep: List[str] = typer.Option([], "--sweep", help="KEY=V1,V2,... adds a sweep dimension or replaces the file's values (repeatable); list values in brackets: KEY=[5m/s,5m/s],[10m/s,10m/s]."),
    pcap: bool = typer.Option(False, "--pcap", help="Write pcap files of the links that ask for them (runs again even if stored)."),
    quiet: bool = typer.Option(False, "-q", "--quiet", help="No progress bar."),
    report: bool = typer.Option(True, "--report/--no-report", help="Write figures and report.html."),
    max_memory: str = typer.Option("auto", "--max-memory", help="Refuse, before running, a point whose run the engine estimates to need more memory (auto: what this machine has available)."),
    force: bool = typer.Option(False, "--force", help="Run even where the estimates say the runs or the sweep would not fit this machine's memory."),
    run_time_limit: Optional[float] = typer.Option(None, "--run-time-limit", help="Stop a run after this many seconds of wall time; it fails alone."),
    run_memory_limit: Optional[str] = typer.Option(None, "--run-memory-limit", help="Cap the memory each run may take beyond its worker process's start, e.g. 4GB (runs in worker processes); a run over it fails alone, one the engine estimates over it is refused before anything runs."),
) -> None:
    """Run a scenario (every sweep point x replication) and write tables, figures and report.html."""
    _run(scenario, out, seed, runs, jobs, scheduler, set_, sweep, pcap, quiet, report, (max_memory, run_time_limit, run_memory_limit),
         force)


@app.command()
def study(
    name: Optional[str] = typer.Argument(None, help="Study name, e.g. d (see --list)."),
    out: Optional[str] = typer.Option(None, "-o", "--out", help="Output directory (default: out/study-NAME)."),
    list_: bool = typer.Option(False, "--list", help="List the reference studies."),
    seed: Optional[int] = typer.Option(None, "--seed", help="Master seed."),
    runs: Optional[int] = typer.Option(None, "--runs", help="Replications per point."),
    jobs: int = typer.Option(0, "-j", "--jobs", help="Local worker processes (0: one per core, once runs prove long enough to be worth them)."),
    quiet: bool = typer.Option(False, "-q", "--quiet", help="No progress bar."),
    set_: List[str] = typer.Option([], "--set", help="KEY=VALUE set for every point, e.g. --set simulation.duration=30s (repeatable)."),
    sweep: List[str] = typer.Option([], "--sweep", help="KEY=V1,V2,... replaces a swept key's values or adds a dimension (repeatable)."),
    quick: bool = typer.Option(False, "--quick", help="A preview: one replication per point (same as --runs 1)."),
    force: bool = typer.Option(False, "--force", help="Run even where the estimates say the runs or the sweep would not fit this machine's memory."),
) -> None:
    """Run a reference study's scenario with its sweep and write its report."""
    from .studies import STUDIES, find

    if quick:
        if runs not in (None, 1):
            _fail(f"error: --quick runs one replication per point; it cannot be combined with --runs {runs}")
        runs = 1

    if list_ or name is None:
        for key, (f, desc) in STUDIES.items():
            try:
                where = find(key)
            except _tpsim.ScenarioError as e:
                typer.echo(f"{key:4} {desc}  [{_study_error(e)}]")
                continue
            typer.echo(f"{key:4} {desc}  [{where.source if where else f + ' (not found)'}]")
        return
    try:
        path = find(name)
    except _tpsim.ScenarioError as e:
        _fail(f"error: study {name}: {_study_error(e)}")
    if path is None:
        _fail(f"error: no study {name!r}; known: {', '.join(STUDIES)} (tpsim study --list)")
    out = out if out is not None else str(Path("out") / f"study-{name.lower().removeprefix('study-')}")
    _run(path, out, seed, runs, jobs, None, set_, sweep, False, quiet, True, force=force)


def _study_error(e: Exception) -> str:
    """One line for a study file that is not a valid scenario (``$TPSIM_SCENARIOS`` or
    ``./scenarios`` may hold one): its first problem, ``file:line:col: ...``, and how many
    more there are."""
    diags = [l for l in _scenario_error(e).splitlines() if l != "error: invalid scenario"]
    first = _one_line(diags[0].removeprefix("error: ")) if diags else _one_line(e)
    more = len(diags) - 1
    return first + (f" (and {more} more problem{'s' * (more > 1)}: tpsim validate shows them)" if more > 0 else "")


def _read_results(directory: Path):
    """The stored results of DIRECTORY, or exit 2 with a one-line reason naming the file."""
    from .results import Results, ResultsError

    if not directory.is_dir():
        _fail(f"error: {directory} is not a directory (expected the output directory of tpsim run)")
    try:
        return Results.read(directory)
    except ResultsError as e:
        _fail(f"error: {_one_line(e)}")


def _table_error(res, e: Exception) -> None:
    """Exit 2 naming the table whose data is damaged (polars failed reading it), or with
    polars' message if every table reads."""
    bad = res.damaged_files()
    if bad:
        _fail(f"error: {bad[0]}: damaged Parquet data (expected the table tpsim run wrote; "
              "tpsim run again rewrites it from the stored runs)")
    _fail(f"error: {_one_line(e)}")


def _ranges(values: list[int]) -> str:
    """``[0, 1, 2, 5]`` -> ``0-2, 5``."""
    out: list[str] = []
    for v in values:
        if out and "-" not in out[-1] and int(out[-1]) == v - 1:
            out[-1] = f"{out[-1]}-{v}"
        elif out and "-" in out[-1] and int(out[-1].split("-")[1]) == v - 1:
            out[-1] = f"{out[-1].split('-')[0]}-{v}"
        else:
            out.append(str(v))
    return ", ".join(out) or "none"


def _formats(values: List[str]) -> list[str]:
    from .plot import FORMATS

    out: list[str] = []
    for v in values:
        for f in v.split(","):
            f = f.strip().lower().lstrip(".")
            if not f:
                continue
            if f not in FORMATS:
                _fail(f"error: --format: unknown format {f!r}; formats: {', '.join(FORMATS)}")
            if f not in out:
                out.append(f)
    return out or ["png", "svg"]


@app.command()
def plot(
    directory_arg: str = typer.Argument(..., metavar="DIRECTORY", help="Output directory of a run."),
    metric: Optional[str] = typer.Option(None, "--metric", help="Metric column (flows or network table), e.g. goodput_kbps."),
    x: Optional[str] = typer.Option(None, "--x", help="Column on the x axis (default: the first swept key with numeric values)."),
    hue: Optional[str] = typer.Option(None, "--hue", help="Column(s) giving one series per value, comma-separated (e.g. transport)."),
    facet: Optional[str] = typer.Option(None, "--facet", help="Column giving one panel per value (default: the flow role when there is background traffic; past 8 series, the last swept keys)."),
    kind: str = typer.Option("auto", "--kind", help="auto (lines for a numeric x, bars otherwise), line, bar or points."),
    series: Optional[str] = typer.Option(None, "--series", help="Time series instead: goodput_kbps, delay_mean_s, queue_packets, cwnd_bytes, ..."),
    run_: int = typer.Option(0, "--run", help="Run of the time series."),
    point: int = typer.Option(0, "--point", help="Sweep point of the time series."),
    xlabel: Optional[str] = typer.Option(None, "--xlabel", help="x-axis label (default: the key's name and unit)."),
    ylabel: Optional[str] = typer.Option(None, "--ylabel", help="y-axis label (default: the metric's name and unit)."),
    title: Optional[str] = typer.Option(None, "--title", help="Title ('' for none)."),
    format_: List[str] = typer.Option([], "--format", "-f", help="png, svg and/or pdf (repeatable or comma-separated; default: png,svg). PDF embeds TrueType fonts."),
    out: Optional[str] = typer.Option(None, "-o", "--out", help="File stem of the figure (default: DIR/figures/NAME)."),
    keep: bool = typer.Option(False, "--keep", help="Keep the figure in the report: tpsim report draws it again (from the tables as they are then) after its own."),
) -> None:
    """Draw a figure (PNG, SVG, PDF) from a run's stored tables."""
    import polars as pl

    from .labels import did_you_mean
    from .plot import draw, param_columns, save
    from .report import custom_layout, custom_spec, keep_request
    from .results import FLOW_KEYS, NETWORK_KEYS, OutputPathError, check_output_file

    directory = _path_arg(directory_arg, "DIRECTORY")
    if not (metric or series):
        _fail("error: give --metric M or --series S")
    if kind not in ("auto", "line", "bar", "points"):
        _fail(f"error: --kind: expected auto, line, bar or points, got {kind!r}")
    formats = _formats(format_)
    stem_arg = None
    if out is not None:
        try:
            stem_arg = check_output_file(out, "-o/--out")
        except OutputPathError as e:
            _fail(f"error: {_one_line(e)}")
    if not directory.is_dir():
        _fail(f"error: {directory} is not a directory (expected the output directory of tpsim run)")
    res = _read_results(directory)
    flows, network = res.flows, res.network
    params = param_columns(flows) or list(res.param_keys)
    if "flow" in flows.columns:
        from .plot import with_flow_direction

        flows = with_flow_direction(flows)
    try:
        if series:
            ts = res.timeseries
            names = sorted(ts["series"].unique().to_list()) if ts.height else []
            if series not in names:
                _fail(f"error: no time series {series!r}{did_you_mean(series, names)}; series: {', '.join(names) or 'none (output.timeseries = false?)'}")
            have = ts.filter(pl.col("series") == series)
            if have.filter((pl.col("point") == point) & (pl.col("run") == run_)).height == 0:
                pts, rs = sorted(have["point"].unique().to_list()), sorted(have["run"].unique().to_list())
                _fail(f"error: no time series {series!r} for --point {point} --run {run_}; it has points "
                      f"{_ranges(pts)} and runs {_ranges(rs)}")
            req: dict = {"series": series, "point": point, "run": run_}
            stem = stem_arg or directory / "figures" / f"timeseries-{series}-p{point}-r{run_}"
        else:
            assert metric is not None
            flow_metrics = [c for c in flows.columns if c not in FLOW_KEYS + params + ["flow_direction"] and flows.schema[c].is_numeric()]
            net_metrics = [c for c in network.columns if c not in NETWORK_KEYS + params and network.schema[c].is_numeric()]
            if metric not in flow_metrics + net_metrics:
                _fail(f"error: no column {metric!r}{did_you_mean(metric, flow_metrics + net_metrics)}; "
                      f"flow metrics: {', '.join(flow_metrics)}; network metrics: {', '.join(net_metrics)}")
            hues_arg = [h.strip() for h in hue.split(",") if h.strip()] if hue is not None else None
            df, xx, hues, _ = custom_layout(res, metric, x, hues_arg)
            for opt, col in [("--x", xx), ("--facet", facet)] + [("--hue", h) for h in hues]:
                if col is not None and col not in df.columns:
                    table = "flows" if metric in flow_metrics else "network"
                    metrics = set(flow_metrics if metric in flow_metrics else net_metrics)
                    others = [c for c in df.columns if c not in metrics and c not in params]
                    _fail(f"error: {opt}: no column {col!r} in the {table} table{did_you_mean(col, list(df.columns))}; "
                          f"swept keys: {', '.join(params) or 'none'}; other columns: {', '.join(others)} (or a metric)")
            req = {"metric": metric, "x": xx, "hue": hues, "facet": facet, "kind": kind}
            stem = stem_arg or directory / "figures" / f"custom-{metric}"
        req.update(name=stem.name, title=title, xlabel=xlabel, ylabel=ylabel)
        fig = draw(*custom_spec(res, req))
    except pl.exceptions.PolarsError as e:
        _table_error(res, e)
    except (ValueError, KeyError) as e:
        _fail(f"error: {_one_line(e)}")
    except OSError as e:
        _fail(_os_error(e, "cannot read"))
    try:
        paths = save(fig, stem, formats)
        if keep:
            keep_request(directory / "figures", req)
    except OSError as e:
        _fail(_os_error(e), 1)
    except ValueError as e:  # a damaged kept.json (ResultsError)
        _fail(f"error: {_one_line(e)}")
    for p in paths:
        typer.echo(str(p))
    if keep:
        typer.echo(f"kept in the report: tpsim report {directory} draws it as figures/{stem.name}")


@app.command()
def report(
    directory_arg: str = typer.Argument(..., metavar="DIRECTORY", help="Output directory of a run."),
    quiet: bool = typer.Option(False, "-q", "--quiet", help="No progress bar."),
) -> None:
    """(Re)build the figures and report.html of DIRECTORY from its stored tables."""
    from ._pool import prestart

    directory = _path_arg(directory_arg, "DIRECTORY")
    if directory.is_dir():  # the render workers import matplotlib while the tables are read
        prestart()
    res = _read_results(directory)
    from .files import ResultsError

    try:
        with RunProgress("", 0, enabled=not quiet and stderr_is_terminal(), remaining=False) as bar:
            path = res.write_report(directory, progress=bar.report_step())
    except ResultsError as e:
        _fail(f"error: {_one_line(e)}")
    except OSError as e:
        _fail(_os_error(e), 1)
    typer.echo(str(path))


@app.command()
def animate(
    directory_arg: str = typer.Argument(..., metavar="DIRECTORY", help="Output directory of a run with [output] animation = true."),
    point: Optional[int] = typer.Option(None, "--point", help="Sweep point (default: the first with a movie trace)."),
    run_: Optional[int] = typer.Option(None, "--run", help="Replication (default: the first with a movie trace)."),
    out: Optional[str] = typer.Option(None, "-o", "--out", help="HTML file to write (default: DIRECTORY/movie.html)."),
) -> None:
    """Write the network movie of one run: a self-contained HTML player (no network access)."""
    from .movie import NoMovie, write_movie
    from .files import OutputPathError, check_output_file

    directory = _path_arg(directory_arg, "DIRECTORY")
    target = directory / "movie.html"
    if out is not None:
        try:
            target = check_output_file(out, "-o/--out")
        except OutputPathError as e:
            _fail(f"error: {_one_line(e)}")
    res = _read_results(directory)
    import polars as pl

    try:
        path = write_movie(res, target, point=point, run=run_)
    except NoMovie as e:
        _fail(f"error: {directory}: {_one_line(e)}")
    except pl.exceptions.PolarsError as e:
        _table_error(res, e)
    except OSError as e:
        _fail(_os_error(e), 1)
    typer.echo(str(path))


@app.command()
def schema(out: Optional[str] = typer.Option(None, "-o", "--out", help="Write to a file instead of stdout.")) -> None:
    """Print the JSON Schema of the scenario format."""
    text = json.dumps(json.loads(_tpsim.json_schema()), indent=2) + "\n"
    if out is None:
        sys.stdout.write(text)
    else:
        _write_output_file(out, text)


def _write_output_file(out: str, text: str) -> Path:
    """Writes ``text`` to the file ``out`` (-o) atomically; exit 2 for a path that cannot be a
    file, 1 if it cannot be written (nothing half-written either way)."""
    from .files import OutputPathError, atomic_write_text, check_output_file

    try:
        path = check_output_file(out, "-o/--out")
    except OutputPathError as e:
        _fail(f"error: {_one_line(e)}")
    try:
        atomic_write_text(path, text)
    except OSError as e:
        _fail(_os_error(e), 1)
    return path


def _read_text_file(path: Path, what: str) -> str:
    """A UTF-8 text input file; a clear error (exit 2) if it is missing, a directory or binary."""
    from .scenario import read_limited

    try:
        data = read_limited(path)
    except OSError as e:
        _fail(f"error: cannot read the {what} {path}: {_one_line(e.strerror or e)}")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        _fail(f"error: {path}:{line}: the {what} is not UTF-8 text (byte 0x{data[e.start]:02x} at offset {e.start})")
    raise AssertionError("unreachable")


@app.command("import-ns2")
def import_ns2(
    movement: str = typer.Argument(..., help="ns-2 movement file (setdest: $node_(i) set X_ ..., $ns_ at t \"$node_(i) setdest x y v\")."),
    traffic: Optional[str] = typer.Argument(None, help="ns-2 traffic file (cbrgen: CBR/UDP and FTP/TCP flows)."),
    out: str = typer.Option(..., "-o", "--out", help="Scenario file to write (TOML)."),
    first_id: Optional[int] = typer.Option(None, "--first-id", min=0, max=2**32 - 1, help="The files' node id that becomes node 0 (default: the smallest id in the movement file)."),
    duration: Optional[float] = typer.Option(None, "--duration", help="Simulated time, s (default: the last event rounded up to 100 s)."),
) -> None:
    """Convert ns-2 movement (and traffic) files into a self-contained tpsim scenario."""
    from .files import OutputPathError, check_output_file

    mpath = _path_arg(movement, "MOVEMENT")
    tpath = _path_arg(traffic, "TRAFFIC") if traffic is not None else None
    try:
        check_output_file(out, "-o/--out")
    except OutputPathError as e:
        _fail(f"error: {_one_line(e)}")
    if duration is not None and not (0 < duration <= _MAX_SECONDS):
        _fail(f"error: --duration: expected seconds greater than 0 and at most {_MAX_SECONDS:.0f}, got {duration}")
    mtext = _read_text_file(mpath, "ns-2 movement file")
    ttext = _read_text_file(tpath, "ns-2 traffic file") if tpath is not None else None
    if first_id is not None:
        ids = [int(i) for i in re.findall(r"\$?node_\(([0-9]+)\)", mtext)]
        if ids and min(ids) < first_id:
            _fail(f"error: {mpath}: node id {min(ids)} is below --first-id {first_id} (the id that becomes node 0)")
    try:
        text = _tpsim.ns2_to_toml(mtext, ttext, str(mpath), str(tpath) if tpath else None, first_id, duration)
    except (ValueError, OverflowError) as e:
        _fail(f"error: {_one_line(e)}")
    try:
        Scenario(text, str(out))
    except _tpsim.ScenarioError as e:
        _fail(f"error: the converted scenario is not valid (please report this)\n{e}", 1)
    _write_output_file(out, text)
    typer.echo(f"wrote {out}", err=True)  # on stderr: `-o /dev/stdout` is the scenario alone


@app.command("ns2-trace")
def ns2_trace(
    directory_arg: str = typer.Argument(..., metavar="DIRECTORY", help="Output directory of a run made with [output] ns2_trace."),
    fmt: str = typer.Option("auto", "--format", help="old (CMU wireless), new (wireless, -t tags), wired (+ - r d), or auto: wired for a run without radio frames, else old."),
    point: int = typer.Option(0, "--point", help="Sweep point."),
    run_: int = typer.Option(0, "--run", help="Replication."),
    out: Optional[str] = typer.Option(None, "-o", "--out", help="File to write (default: standard output)."),
) -> None:
    """Write one run's packet trace (trace.parquet) as an ns-2 trace file."""
    from . import ns2trace

    directory = _path_arg(directory_arg, "DIRECTORY")
    if fmt not in ns2trace.FORMATS and fmt != "auto":
        _fail(f"error: --format: unknown format {fmt!r}; formats: {', '.join(ns2trace.FORMATS)}")
    res = _read_results(directory)
    if not res.has("trace"):
        _fail(f"error: {directory} has no trace.parquet: run with --set output.ns2_trace=old (or new, wired)")
    trace = res.scan("trace")
    if not all(c in trace.collect_schema().names() for c in ns2trace.NS2_COLUMNS):
        _fail(f"error: {directory}/trace.parquet has no ns-2 columns: run with --set output.ns2_trace=old (or new, wired)")
    rows = ns2trace.run_trace(trace, point, run_).collect()
    if rows.height == 0:
        _fail(f"error: the trace has no rows of point {point}, run {run_}")
    if fmt == "auto":
        fmt = ns2trace.default_format(rows)
    if out is None:
        for line in ns2trace.lines(rows, fmt):
            sys.stdout.write(line + "\n")
        return
    try:
        n = ns2trace.write(rows, out, fmt)
    except OSError as e:
        _fail(_os_error(e))
    typer.echo(f"wrote {out} ({n} lines)", err=True)


#: The latest time tpsim can represent, s (2^64 - 1 ns).
_MAX_SECONDS = 18_446_744_073.0


@app.command()
def version() -> None:
    """Print the tpsim version."""
    from ._build import build_id

    typer.echo(build_id())

