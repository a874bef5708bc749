"""What the ``tpsim`` command and ``import tpsim`` load: each command imports what it needs when
it needs it (``tpsim --version`` neither typer nor polars, ``tpsim validate`` no polars,
matplotlib or scipy). These tests check the modules imported, not the time taken (benchmarks
measure that), and the progress bar of ``tpsim.run(progress=True)``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import tpsim
from conftest import SCENARIOS, one_link

#: Runs the tpsim command (its entry point, tpsim.cli:main) with the arguments given, then
#: writes the names of the modules imported to the file named by TPSIM_TEST_MODULES.
COMMAND = """
import json, os, sys
sys.argv = ["tpsim", *sys.argv[1:]]
from tpsim.cli import main
try:
    main()
finally:
    with open(os.environ["TPSIM_TEST_MODULES"], "w") as f:
        json.dump(sorted(sys.modules), f)
"""

#: Libraries that the commands below must not import.
DATA = ("polars", "matplotlib", "scipy", "numpy", "pyarrow", "jinja2")


def command(tmp_path: Path, *args: str) -> tuple[subprocess.CompletedProcess, set[str]]:
    """Runs ``tpsim ARGS``; returns the process and the modules it had imported at the end."""
    listing = tmp_path / "modules.json"
    env = dict(os.environ, TPSIM_TEST_MODULES=str(listing))
    p = subprocess.run([sys.executable, "-c", COMMAND, *args], capture_output=True, text=True, cwd=tmp_path, env=env)
    return p, set(json.loads(listing.read_text()))


def tops(modules: set[str]) -> set[str]:
    """The top-level packages among ``modules``."""
    return {m.split(".")[0] for m in modules}


@pytest.mark.parametrize("args", [["--version"], ["-V"], ["version"]])
def test_version_imports_neither_typer_nor_the_python_layers(tmp_path, args):
    p, mods = command(tmp_path, *args)
    assert p.returncode == 0 and p.stdout == tpsim.api.build_id() + "\n" and p.stderr == "", p.stderr
    loaded = tops(mods) & {"typer", "click", "rich", "pydantic", *DATA}
    assert not loaded, f"tpsim {' '.join(args)} imported {sorted(loaded)}"
    assert not {"tpsim.api", "tpsim.results", "tpsim.commands"} & mods


def test_version_through_typer_prints_the_same(tmp_path):
    # `--version` after another option is parsed by typer: the same text.
    p, mods = command(tmp_path, "--version", "validate")
    assert p.returncode == 0 and p.stdout == tpsim.api.build_id() + "\n", p.stderr
    assert "typer" in tops(mods)


def test_validate_imports_no_data_libraries(tmp_path):
    p, mods = command(tmp_path, "validate", str(SCENARIOS / "study-d-wired-voip.toml"))
    assert p.returncode == 0 and ": ok (48 sweep point(s)" in p.stdout, p.stderr
    loaded = tops(mods) & {"rich", *DATA}
    assert not loaded, f"tpsim validate imported {sorted(loaded)}"
    assert not {"tpsim.results", "tpsim.plot", "tpsim.report"} & mods


def test_validate_error_imports_no_data_libraries(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text("[simulation]\nduration = 5\n")
    p, mods = command(tmp_path, "validate", str(bad))
    assert p.returncode == 2 and p.stderr.startswith("error: invalid scenario\n"), p.stderr
    loaded = tops(mods) & {"rich", *DATA}
    assert not loaded, f"tpsim validate (an invalid scenario) imported {sorted(loaded)}"


def test_run_of_an_invalid_scenario_imports_no_data_libraries(tmp_path):
    (tmp_path / "s.toml").write_text(one_link(duration="2s"))
    p, mods = command(tmp_path, "run", "s.toml", "-o", "out", "--sweep", "flows.0.nope=1,2")
    assert p.returncode == 2 and p.stderr.startswith("error: --sweep: unknown key"), p.stderr
    loaded = tops(mods) & {"rich", *DATA}
    assert not loaded, f"tpsim run (a bad --sweep) imported {sorted(loaded)}"


def test_quiet_run_draws_no_bar(tmp_path):
    (tmp_path / "s.toml").write_text(one_link(duration="2s"))
    p, mods = command(tmp_path, "run", "s.toml", "-o", "out", "-q", "--no-report", "-j", "1")
    assert p.returncode == 0 and p.stderr == "", p.stderr
    assert "rich" not in tops(mods), "-q: no progress bar, no rich"
    assert "matplotlib" not in tops(mods), "--no-report: no figures"


def test_import_tpsim_is_lazy():
    code = (
        "import sys, tpsim\n"
        "before = {m.split('.')[0] for m in sys.modules}\n"
        "assert set(tpsim.__all__) <= set(dir(tpsim)) and 'api' in dir(tpsim)\n"
        "assert tpsim.run.__module__ == 'tpsim.api' and tpsim.Results.__module__ == 'tpsim.results'\n"
        "assert tpsim.sweep.expand and tpsim.api.build_id().startswith(tpsim.__version__ + '+')\n"
        "try:\n    tpsim.no_such_name\nexcept AttributeError as e:\n    assert 'no_such_name' in str(e)\n"
        "else:\n    raise AssertionError('no AttributeError')\n"
        "ns = {}\nexec('from tpsim import *', ns)\nassert {'run', 'Results', 'ScenarioError'} <= set(ns)\n"
        "print(sorted(before & {'polars', 'typer', 'rich', 'matplotlib', 'scipy', 'numpy'}))\n"
    )
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == "[]", f"import tpsim imported {p.stdout.strip()}"


def test_api_progress_bar(tmp_path):
    sc = tpsim.Scenario(one_link(duration="2s"), "bar.toml")
    code = (
        "import sys, tpsim\n"
        "sc = tpsim.Scenario(open('s.toml').read(), 'bar.toml')\n"
        "res = tpsim.run(sc, runs=2, progress=sys.argv[1] == 'bar')\n"
        "print(res.flows.height, sorted({m.split('.')[0] for m in sys.modules} & {'rich'}))\n"
    )
    (tmp_path / "s.toml").write_text(sc.written)
    bar = subprocess.run([sys.executable, "-c", code, "bar"], capture_output=True, text=True, cwd=tmp_path)
    assert bar.returncode == 0, bar.stderr
    assert bar.stdout.split()[-1] == "['rich']"
    # Off a terminal rich draws the final state once: the scenario's name and the runs done.
    assert "bar" in bar.stderr and "2/2" in bar.stderr, bar.stderr
    plain = subprocess.run([sys.executable, "-c", code, "none"], capture_output=True, text=True, cwd=tmp_path)
    assert plain.returncode == 0 and plain.stderr == "" and plain.stdout.split()[-1] == "[]", plain.stderr


def test_api_progress_callable_still_counts_runs():
    seen = []
    res = tpsim.run(tpsim.Scenario(one_link(duration="2s")), runs=2, progress=lambda done, total: seen.append((done, total)))
    assert res.flows.height and seen[0] == (0, 2) and seen[-1] == (2, 2)
    with pytest.raises(TypeError, match="progress must be True, False or a callable"):
        tpsim.run(tpsim.Scenario(one_link(duration="2s")), progress="yes")
