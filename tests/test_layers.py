"""The Python package is layered, with no import cycle: pyproject.toml's import-linter
contract lists the layers (every import counts, those inside functions too)."""

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "python" / "tpsim"


def test_modules_import_only_the_layers_below_their_own():
    pytest.importorskip("importlinter")
    env = {**os.environ, "PYTHONPATH": str(ROOT / "python")}  # this checkout's sources, not an installed copy
    code = ("import sys; from importlinter.cli import lint_imports; "
            "sys.exit(lint_imports(config_filename='pyproject.toml', no_cache=True, no_logo=True))")
    p = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, f"import-linter: a layer imports one above it (or a cycle):\n{p.stdout}\n{p.stderr}"


def test_no_module_imports_the_package_itself():
    # import-linter reads ``from . import _tpsim`` (the compiled engine, which it does not see)
    # as an import of the package, and the contract ignores those: any other import of the
    # package (whose __init__ names every module) would hide an upward import.
    submodules = {p.stem for p in PACKAGE.glob("*.py")}
    bad = []
    for path in sorted(PACKAGE.glob("*.py")):
        if path.name == "__init__.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                bad += [f"{path.name}:{node.lineno}: import {a.name}" for a in node.names if a.name == "tpsim"]
            elif isinstance(node, ast.ImportFrom) and (node.module is None and node.level == 1 or node.module == "tpsim"):
                bad += [f"{path.name}:{node.lineno}: from {node.module or '.'} import {a.name}"
                        for a in node.names if a.name != "_tpsim" and a.name not in submodules]
    assert not bad, "imports of the package tpsim itself (import the module that defines the name):\n" + "\n".join(bad)
