"""tpsim: a network simulator for comparing transport protocols.

Quick use::

    import tpsim
    sc = tpsim.load("scenarios/study-d-wired-voip.toml")
    res = tpsim.run(sc, runs=3)
    res.flows        # polars DataFrame, one row per run x flow direction
    res.write("out") # flows/network/summary/timeseries files

Metric definitions: docs/metrics.md.
"""

from ._tpsim import RunLimitError, ScenarioError, __version__
from .api import RunCrashed, RunFailure, RunTooLarge, SchedulerError, SweepFailed, plan, run
from .results import OutputPathError, Results
from .scenario import Scenario, json_schema, load

__all__ = ["ScenarioError", "RunLimitError", "RunTooLarge", "RunCrashed", "SchedulerError", "OutputPathError", "Scenario", "Results", "RunFailure", "SweepFailed", "load", "plan", "run", "json_schema", "__version__"]
