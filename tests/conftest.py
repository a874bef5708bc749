"""Shared helpers for the Python tests."""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCENARIOS = ROOT / "scenarios"
#: Study D with two runs (the command's arguments but ``-o``): the output test_paper.py and
#: test_study_d.py share (:func:`cli_once`).
STUDY_D_RUNS_2 = ("run", str(SCENARIOS / "study-d-wired-voip.toml"), "--runs", "2", "-j", "2")
#: Study A shortened to 30 s, two runs: run once per session for every test that reads it.
STUDY_A_RUNS_2 = ("run", str(SCENARIOS / "study-a-sensor-interval.toml"), "--runs", "2", "--set",
                  "simulation.duration=30s", "-j", "2")


def _shared() -> Path:
    """The reference directory ``shared`` beside the repository: ``$TPSIM_SHARED`` if set,
    else ``../shared`` of this checkout, else ``../shared`` of the checkout this one was
    cloned from (a local clone's ``origin``). Tests that need it skip when it is missing."""
    if os.environ.get("TPSIM_SHARED"):
        return Path(os.environ["TPSIM_SHARED"])
    candidates = [ROOT.parent / "shared"]
    try:
        origin = subprocess.run(["git", "-C", str(ROOT), "config", "--get", "remote.origin.url"],
                                capture_output=True, text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        origin = ""
    if origin and "://" not in origin and ":" not in origin.split("/")[0]:
        candidates.append((ROOT / origin).resolve().parent / "shared")
    return next((d for d in candidates if d.is_dir()), candidates[0])


#: The reference directory beside the repository (see :func:`_shared`).
SHARED = _shared()
#: The real ns-2 sample files of ``shared/data/ns2``.
NS2 = SHARED / "data" / "ns2"


def load_bench(name: str, module: str | None = None) -> Any:
    """``benches/<name>.py`` as a module, registered in ``sys.modules`` as ``module`` (default
    ``bench_<name>``: its dataclasses need an entry there)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(module or f"bench_{name}", ROOT / "benches" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


def cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    """Runs ``python -m tpsim ARGS`` and returns the completed process (text output)."""
    return subprocess.run([sys.executable, "-m", "tpsim", *args], capture_output=True, text=True, cwd=cwd)


def session_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A directory that every pytest-xdist worker of this test session shares (the parent of
    the workers' own temporary directories; without xdist, the session's one)."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    """An exclusive lock on the file ``path`` (made if missing), held for the block."""
    with open(path, "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def once(tmp_path_factory: pytest.TempPathFactory, name: str, make: Callable[[Path], Any]) -> tuple[Path, Any]:
    """``make(d)`` done once per test session, whichever xdist worker asks first: returns the
    directory ``d`` it filled and the JSON value it returned. Other workers wait for the
    first and reuse its directory, which they must only read (copy it to change it). If
    ``make`` raises, nothing is kept: the next caller makes it again (and fails the same way,
    each in its own test)."""
    root = session_dir(tmp_path_factory) / "once"
    root.mkdir(exist_ok=True)
    d, done = root / name, root / f"{name}.json"
    with _locked(root / f"{name}.lock"):
        if not done.exists():
            shutil.rmtree(d, ignore_errors=True)
            value = make(d)
            done.write_text(json.dumps(value), encoding="utf-8")
    return d, json.loads(done.read_text(encoding="utf-8"))


def cli_once(tmp_path_factory: pytest.TempPathFactory, *args: str, cwd: Path | None = None) -> tuple[Path, subprocess.CompletedProcess]:
    """``python -m tpsim ARGS -o DIR`` (in ``cwd``) run once per test session (:func:`once`):
    ``DIR`` and the completed process (its exit status and output, for each caller to check).
    Callers that pass the same arguments share one output directory, which they must only
    read."""
    key = hashlib.sha256("\0".join([str(cwd), *args]).encode()).hexdigest()[:16]

    def make(d: Path) -> dict:
        p = cli(*args, "-o", str(d), cwd=cwd)
        return {"returncode": p.returncode, "stdout": p.stdout, "stderr": p.stderr}

    d, r = once(tmp_path_factory, f"cli-{key}", make)
    argv = [sys.executable, "-m", "tpsim", *args, "-o", str(d)]
    return d, subprocess.CompletedProcess(argv, r["returncode"], r["stdout"], r["stderr"])


def run_once(tmp_path_factory: pytest.TempPathFactory, text: str, *args: str, name: str = "s.toml") -> tuple[Path, subprocess.CompletedProcess]:
    """``python -m tpsim run NAME -o DIR ARGS`` of the scenario ``text`` (written to ``NAME``
    in a directory of its own), run once per test session as :func:`cli_once` does. The
    stored runs and the tables do not depend on where the file is, only on its name and text:
    a test that would run the same file with the same arguments may read ``DIR`` instead, or
    copy it to go on from it."""
    key = hashlib.sha256("\0".join([name, text, *args]).encode()).hexdigest()[:16]

    def make(d: Path) -> dict:
        d.mkdir()
        (d / name).write_text(text, encoding="utf-8")
        p = cli("run", str(d / name), "-o", str(d / "out"), *args)
        return {"returncode": p.returncode, "stdout": p.stdout, "stderr": p.stderr}

    d, r = once(tmp_path_factory, f"run-{key}", make)
    argv = [sys.executable, "-m", "tpsim", "run", str(d / name), "-o", str(d / "out"), *args]
    return d / "out", subprocess.CompletedProcess(argv, r["returncode"], r["stdout"], r["stderr"])


def require_tool(name: str) -> str:
    """The path of an external tool; skips locally if missing, fails under CI (where .ci/run
    installs it)."""
    path = shutil.which(name)
    if path is None:
        if os.environ.get("CI"):
            pytest.fail(f"{name} is not installed; .ci/run must install it")
        pytest.skip(f"{name} not installed")
    return path


def one_link(sizes: str = "standard", app: str = '{ kind = "cbr", size = "128B", interval = "20ms" }', link_extra: str = "", duration: str = "10s", extra: str = "") -> str:
    """A two-node, one-link scenario (256 kbit/s, 50 ms) with one UDP flow 0 -> 1."""
    return f"""
[simulation]
duration = "{duration}"
sizes = "{sizes}"
{extra}
[nodes]
count = 2

[[links]]
nodes = [0, 1]
rate = "256kbps"
delay = "50ms"
{link_extra}

[[flows]]
src = 0
dst = 1
transport = "udp"
app = {app}
"""
