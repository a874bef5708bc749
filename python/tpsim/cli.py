"""The ``tpsim`` command line.

Exit status: 0 on success; 2 for a bad scenario or bad arguments (nothing is run or
written); 1 when runs failed (the others are stored; re-running the same command completes
only the missing ones); 130 when interrupted (finished runs are stored).
"""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path
from typing import List, Optional

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

from . import _tpsim
from .scenario import Scenario

app = typer.Typer(add_completion=False, no_args_is_help=True, help="tpsim: compare transport protocols over wired and wireless networks.")
err = Console(stderr=True)


def _fail(message: str, code: int = 2) -> None:
    typer.echo(message, err=True)
    raise typer.Exit(code)


def _load_or_exit(path: Path):
    from .scenario import load

    try:
        return load(path)
    except _tpsim.ScenarioError as e:
        _fail(f"error: invalid scenario\n{e}")
    except OSError as e:
        _fail(f"error: cannot read {path}: {e.strerror}")


@app.command()
def validate(scenario: Path = typer.Argument(..., help="Scenario file (TOML).")) -> None:
    """Check a scenario file (and every point of its sweep); print every problem with its key and line."""
    from .api import plan

    sc = _load_or_exit(scenario)
    try:
        p = plan(sc)
    except _tpsim.ScenarioError as e:
        _fail(f"error: invalid scenario\n{e}")
    typer.echo(f"{scenario}: ok ({len(p.points)} sweep point(s) x {sc.runs} run(s), seed {sc.seed})")


def _run(
    scenario: "Path | Scenario", out: Path, seed: Optional[int], runs: Optional[int], jobs: int, scheduler: Optional[str],
    set_: List[str], sweep: List[str], pcap: bool, quiet: bool, report: bool,
) -> None:
    from .api import SweepFailed, plan, run_plan

    sc = scenario if isinstance(scenario, Scenario) else _load_or_exit(scenario)
    if runs is not None and runs < 1:
        _fail(f"error: --runs must be at least 1, got {runs}")
    try:
        p = plan(sc, seed=seed, runs=runs, set=set_, sweep=sweep, out=out)
    except _tpsim.ScenarioError as e:
        _fail(f"error: invalid scenario\n{e}")
    total = len(p.jobs)
    todo = total - (0 if pcap else p.stored)
    try:
        with Progress(
            TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), TimeRemainingColumn(),
            console=err, disable=quiet or not err.is_terminal,
        ) as bar:
            task = bar.add_task(sc.name, total=total)
            res = run_plan(p, out, jobs=jobs, scheduler=scheduler, pcap=pcap, progress=lambda d, t: bar.update(task, completed=d))
    except SweepFailed as e:
        _fail(f"error: {e}\nFinished runs are stored in {out}/runs; fix the cause and re-run the same command to complete the rest.", 1)
    except KeyboardInterrupt:
        _fail(f"interrupted: finished runs are stored in {out}/runs; re-run the same command to complete the rest.", 130)
    except RuntimeError as e:
        _fail(f"error: {e}", 1)
    if report:
        from .report import write_report

        write_report(res, out, command="tpsim " + " ".join(shlex.quote(a) for a in sys.argv[1:]))
    total_s = sum(res.engine_seconds)
    typer.echo(
        f"{sc.name}: {len(p.points)} point(s) x {total // len(p.points)} run(s); ran {todo}, reused {total - todo}; "
        f"engine {total_s:.3f} s -> {out}/" + (" (report.html)" if report else "")
    )


@app.command()
def run(
    scenario: Path = typer.Argument(..., help="Scenario file (TOML)."),
    out: Path = typer.Option(..., "-o", "--out", help="Output directory (created); finished runs are stored in OUT/runs and reused."),
    seed: Optional[int] = typer.Option(None, "--seed", help="Master seed (default: simulation.seed)."),
    runs: Optional[int] = typer.Option(None, "--runs", help="Replications per sweep point (default: simulation.runs)."),
    jobs: int = typer.Option(0, "-j", "--jobs", help="Local worker processes (0: all cores; 1: no worker processes)."),
    scheduler: Optional[str] = typer.Option(None, "--scheduler", help="Dask scheduler address (tcp://HOST:PORT): run the jobs on its workers."),
    set_: List[str] = typer.Option([], "--set", help="KEY=VALUE set for every point, e.g. --set flows.0.app.interval=10ms (repeatable)."),
    sweep: List[str] = typer.Option([], "--sweep", help="KEY=V1,V2,... adds a sweep dimension (repeatable)."),
    pcap: bool = typer.Option(False, "--pcap", help="Write pcap files of the links that ask for them (runs again even if stored)."),
    quiet: bool = typer.Option(False, "-q", "--quiet", help="No progress bar."),
    report: bool = typer.Option(True, "--report/--no-report", help="Write figures and report.html."),
) -> None:
    """Run a scenario (every sweep point x replication) and write tables, figures and report.html."""
    _run(scenario, out, seed, runs, jobs, scheduler, set_, sweep, pcap, quiet, report)


@app.command()
def study(
    name: Optional[str] = typer.Argument(None, help="Study name, e.g. d (see --list)."),
    out: Optional[Path] = typer.Option(None, "-o", "--out", help="Output directory (default: out/study-NAME)."),
    list_: bool = typer.Option(False, "--list", help="List the reference studies."),
    seed: Optional[int] = typer.Option(None, "--seed", help="Master seed."),
    runs: Optional[int] = typer.Option(None, "--runs", help="Replications per point."),
    jobs: int = typer.Option(0, "-j", "--jobs", help="Local worker processes (0: all cores)."),
    quiet: bool = typer.Option(False, "-q", "--quiet", help="No progress bar."),
) -> None:
    """Run a reference study's scenario with its sweep and write its report."""
    from .studies import STUDIES, find

    if list_ or name is None:
        for key, (f, desc) in STUDIES.items():
            where = find(key)
            typer.echo(f"{key:4} {desc}  [{where.source if where else f + ' (not found)'}]")
        return
    path = find(name)
    if path is None:
        _fail(f"error: no study {name!r}; known: {', '.join(STUDIES)} (tpsim study --list)")
    out = out or Path("out") / f"study-{name.lower().removeprefix('study-')}"
    _run(path, out, seed, runs, jobs, None, [], [], False, quiet, True)


@app.command()
def plot(
    directory: Path = typer.Argument(..., help="Output directory of a run."),
    metric: Optional[str] = typer.Option(None, "--metric", help="Metric column (flows or network table)."),
    x: Optional[str] = typer.Option(None, "--x", help="Column on the x axis (default: the first swept key)."),
    hue: Optional[str] = typer.Option(None, "--hue", help="Column giving one line per value (e.g. transport)."),
    series: Optional[str] = typer.Option(None, "--series", help="Time series instead: goodput_kbps, delay_mean_s or queue_packets."),
    run_: int = typer.Option(0, "--run", help="Run of the time series."),
    point: int = typer.Option(0, "--point", help="Sweep point of the time series."),
    out: Optional[Path] = typer.Option(None, "-o", "--out", help="File stem for the PNG and SVG (default: DIR/figures/NAME)."),
) -> None:
    """Draw a custom figure (PNG + SVG) from a run's tables."""
    import polars as pl

    from .plot import combine_hue, default_axes, metric_figure, save, timeseries_figure, with_flow_direction

    try:
        flows = with_flow_direction(pl.read_parquet(directory / "flows.parquet"))
        network = pl.read_parquet(directory / "network.parquet")
    except OSError as e:
        _fail(f"error: {directory} holds no tpsim tables: {e}")
    params = flows.columns[flows.columns.index("point") + 1 : flows.columns.index("run")]
    try:
        if series:
            fig = timeseries_figure(pl.read_parquet(directory / "timeseries.parquet"), series, run=run_, point=point)
            stem = out or directory / "figures" / f"timeseries-{series}-p{point}-r{run_}"
        elif metric:
            df = flows if metric in flows.columns else network
            dx, dhue = default_axes(flows, params)
            xx = x or (dx if dx in df.columns else "run")
            df, hh = combine_hue(df, xx, hue if hue is not None else (dhue if dhue in df.columns else None), params)
            fig = metric_figure(df, metric, xx, hh)
            stem = out or directory / "figures" / f"custom-{metric}"
        else:
            _fail("error: give --metric M or --series S")
    except ValueError as e:
        _fail(f"error: {e}")
    for p in save(fig, stem):
        typer.echo(str(p))


@app.command()
def schema(out: Optional[Path] = typer.Option(None, "-o", "--out", help="Write to a file instead of stdout.")) -> None:
    """Print the JSON Schema of the scenario format."""
    text = json.dumps(json.loads(_tpsim.json_schema()), indent=2) + "\n"
    if out is None:
        sys.stdout.write(text)
    else:
        out.write_text(text, encoding="utf-8")


@app.command("import-ns2")
def import_ns2(
    movement: Path = typer.Argument(..., help="ns-2 movement file (setdest: $node_(i) set X_ ..., $ns_ at t \"$node_(i) setdest x y v\")."),
    traffic: Optional[Path] = typer.Argument(None, help="ns-2 traffic file (cbrgen: CBR/UDP and FTP/TCP flows)."),
    out: Path = typer.Option(..., "-o", "--out", help="Scenario file to write (TOML)."),
    first_id: Optional[int] = typer.Option(None, "--first-id", help="The files' node id that becomes node 0 (default: the smallest id in the movement file)."),
    duration: Optional[float] = typer.Option(None, "--duration", help="Simulated time, s (default: the last event rounded up to 100 s)."),
) -> None:
    """Convert ns-2 movement (and traffic) files into a self-contained tpsim scenario."""
    from .results import atomic_write_text

    try:
        mtext = movement.read_text(encoding="utf-8")
        ttext = traffic.read_text(encoding="utf-8") if traffic is not None else None
    except OSError as e:
        _fail(f"error: cannot read {e.filename}: {e.strerror}")
    try:
        text = _tpsim.ns2_to_toml(mtext, ttext, str(movement), str(traffic) if traffic else None, first_id, duration)
    except ValueError as e:
        _fail(f"error: {e}")
    try:
        Scenario(text, str(out))
    except _tpsim.ScenarioError as e:
        _fail(f"error: the converted scenario is not valid (please report this)\n{e}", 1)
    atomic_write_text(out, text)
    typer.echo(f"wrote {out}")


@app.command()
def version() -> None:
    """Print the tpsim version."""
    typer.echo(_tpsim.__version__)


def main() -> None:
    """Entry point of the ``tpsim`` script."""
    app()


if __name__ == "__main__":
    main()
