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

Metric definitions: docs/metrics.md.
"""

from ._tpsim import RunLimitError, ScenarioError, __version__
from .api import MainGuardError, RunCrashed, RunFailure, RunTooLarge, SchedulerError, SweepFailed, plan, run
from .results import OutputPathError, Results
from .scenario import Scenario, json_schema, load

__all__ = ["ScenarioError", "RunLimitError", "RunTooLarge", "RunCrashed", "SchedulerError", "MainGuardError", "OutputPathError", "Scenario", "Results", "RunFailure", "SweepFailed", "load", "plan", "run", "json_schema", "__version__"]
