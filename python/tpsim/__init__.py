"""tpsim: a network simulator for comparing transport protocols.

Quick use::

    import tpsim
    sc = tpsim.load("scenarios/study-d-wired-voip.toml")
    res = tpsim.run(sc, runs=3)
    res.flows              # polars DataFrame, one row per run x flow direction
    res.write("out")       # flows/network/summary/timeseries files
    res.write_report()     # figures (PNG + PDF) and report.html in out/
    tpsim.Results.read("out")  # the same results, read back

With ``jobs`` > 1 the runs go to worker processes that import the calling script again: a
script needs an ``if __name__ == "__main__":`` guard around its code.

Errors are exceptions of this package (docs/workbench.md, "Python API"): ScenarioError,
RunTooLarge, OutputPathError and ResultsError (ValueErrors: bad input, a damaged results
directory), SweepFailed, RunLimitError, RunCrashed, SchedulerError and MainGuardError
(RuntimeErrors); a TypeError names the parameter of the wrong type, an OSError the file
that cannot be read or written.

Metric definitions: docs/metrics.md.
"""

# The package's names are imported when first used (PEP 562), so that ``import tpsim`` and the
# ``tpsim`` command load polars, matplotlib and scipy only for what needs them.

import importlib
from typing import TYPE_CHECKING, Any, List

from ._tpsim import RunLimitError, ScenarioError, __version__

if TYPE_CHECKING:  # what type checkers and IDEs see; at run time, __getattr__ below
    from . import api, cases, labels, metrics, movie, ns2trace, plot, report, results, scenario, studies, sweep
    from .api import MainGuardError, RunCrashed, RunFailure, RunTooLarge, SchedulerError, SweepFailed, plan, run
    from .files import ResultsError
    from .results import OutputPathError, Results
    from .scenario import Scenario, json_schema, load

#: Public name -> the module that defines it.
_LAZY = {
    "MainGuardError": "api", "RunCrashed": "api", "RunFailure": "api", "RunTooLarge": "api", "SchedulerError": "api",
    "SweepFailed": "api", "plan": "api", "run": "api",
    "OutputPathError": "results", "Results": "results", "ResultsError": "files",
    "Scenario": "scenario", "json_schema": "scenario", "load": "scenario",
}
#: Submodules reachable as attributes after ``import tpsim`` (``tpsim.api.build_id``).
_SUBMODULES = ("api", "cases", "cli", "commands", "labels", "metrics", "movie", "ns2trace", "plot", "progress", "report", "results",
               "scenario", "studies", "sweep")

__all__ = ["ScenarioError", "RunLimitError", "RunTooLarge", "RunCrashed", "SchedulerError", "MainGuardError", "OutputPathError", "ResultsError", "Scenario", "Results", "RunFailure", "SweepFailed", "load", "plan", "run", "json_schema", "__version__"]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is not None:
        value = getattr(importlib.import_module(f".{module}", __name__), name)
        globals()[name] = value  # later look-ups skip this function
        return value
    if name in _SUBMODULES:
        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> List[str]:
    return sorted(set(__all__) | set(_SUBMODULES) | {n for n in globals() if n.startswith("__")})
