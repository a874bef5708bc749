"""The ``tpsim`` command line.

Exit status: 0 on success, 2 for a bad scenario or bad arguments (nothing is written),
1 for a failure while running.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import Optional

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

from . import _tpsim
from .api import run as api_run
from .scenario import load

app = typer.Typer(add_completion=False, no_args_is_help=True, help="tpsim: compare transport protocols over wired and wireless networks.")
err = Console(stderr=True)


def _load_or_exit(path: Path):
    try:
        return load(path)
    except _tpsim.ScenarioError as e:
        typer.echo(f"error: invalid scenario\n{e}", err=True)
        raise typer.Exit(2)
    except OSError as e:
        typer.echo(f"error: cannot read {path}: {e.strerror}", err=True)
        raise typer.Exit(2)


@app.command()
def validate(scenario: Path = typer.Argument(..., help="Scenario file (TOML).")) -> None:
    """Check a scenario file; print every problem with its key and line."""
    sc = _load_or_exit(scenario)
    typer.echo(f"{scenario}: ok ({sc.runs} run(s), seed {sc.seed})")


@app.command()
def run(
    scenario: Path = typer.Argument(..., help="Scenario file (TOML)."),
    out: Path = typer.Option(..., "-o", "--out", help="Output directory for tables (created)."),
    seed: Optional[int] = typer.Option(None, "--seed", help="Master seed (default: simulation.seed)."),
    runs: Optional[int] = typer.Option(None, "--runs", help="Replications (default: simulation.runs)."),
    pcap: bool = typer.Option(False, "--pcap", help="Write pcap files of the links that ask for them."),
    quiet: bool = typer.Option(False, "-q", "--quiet", help="No progress bar."),
) -> None:
    """Run a scenario's replications and write flows, network, summary and time-series tables."""
    sc = _load_or_exit(scenario)
    if runs is not None and runs < 1:
        typer.echo(f"error: --runs must be at least 1, got {runs}", err=True)
        raise typer.Exit(2)
    n = sc.runs if runs is None else runs
    created = not out.exists()
    try:
        with Progress(
            TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), TimeRemainingColumn(),
            console=err, disable=quiet or not err.is_terminal,
        ) as bar:
            task = bar.add_task(sc.name, total=n)
            res = api_run(sc, seed=seed, runs=runs, out=out, pcap=pcap, progress=lambda d, t: bar.update(task, completed=d))
    except RuntimeError as e:
        typer.echo(f"error: {e}", err=True)
        if created and not (out / "runs").exists():
            shutil.rmtree(out, ignore_errors=True)
        raise typer.Exit(1)
    total = sum(res.engine_seconds)
    typer.echo(f"{n} run(s) of {sc.name}: {res.flows.height} flow rows -> {out}/ (engine {total:.3f} s)")


@app.command()
def schema(out: Optional[Path] = typer.Option(None, "-o", "--out", help="Write to a file instead of stdout.")) -> None:
    """Print the JSON Schema of the scenario format."""
    text = json.dumps(json.loads(_tpsim.json_schema()), indent=2) + "\n"
    if out is None:
        sys.stdout.write(text)
    else:
        out.write_text(text, encoding="utf-8")


@app.command()
def version() -> None:
    """Print the tpsim version."""
    typer.echo(_tpsim.__version__)


def main() -> None:
    """Entry point of the ``tpsim`` script."""
    app()


if __name__ == "__main__":
    main()
