"""Shared helpers for the Python tests."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCENARIOS = ROOT / "scenarios"


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
