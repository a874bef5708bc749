"""One job: the engine's run of one (sweep point, replication), in the calling process, a
worker process (:mod:`tpsim._workers`) or a Dask worker, with its growing outputs in the run
store (:mod:`tpsim.store`) or returned as columns."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Callable, Optional

from . import _tpsim, store

#: Environment variable of the deterministic failure hook used by the tests: "POINT:RUN"
#: makes that job raise instead of running.
FAIL_HOOK = "TPSIM_TEST_FAIL_RUN"


def _job_main(text: str, source: str, seed: int, run: int, point: int, pcap_dir: Optional[str],
              max_wall_s: Optional[float] = None, runs_dir: Optional[str] = None, key: str = "",
              progress: Optional[Callable[[float, float], Any]] = None) -> dict[str, Any]:
    """Executes one job (in this process, a worker process or a Dask worker); ``progress``
    (in this process only) is the engine's ``progress(now_s, end_s)`` callback, in simulated
    seconds. With ``runs_dir``, the run's growing and large outputs (time series, traces,
    per-ACK samples, movie trace) go to its files in that store while it runs
    (:mod:`tpsim.store`) and the returned dict names them under ``files``; without, they
    come back as columns."""
    if os.environ.get(FAIL_HOOK) == f"{point}:{run}":
        raise RuntimeError(f"deliberate failure ({FAIL_HOOK} test hook)")
    if os.environ.get(FAIL_HOOK) == f"{point}:{run}:abort":
        os.abort()  # a crashing worker (tests)
    kwargs: dict[str, Any] = {"seed": seed, "run": run, "pcap_dir": pcap_dir, "max_wall_s": max_wall_s}
    if progress is not None:
        kwargs["progress"] = progress
    if runs_dir is None:
        res = _tpsim.run(text, source, **kwargs)
        res.pop("files", None)
        return res
    d = Path(runs_dir)
    files = store.run_files(d, key)
    try:
        res = _tpsim.run(text, source, files=files, **kwargs)
        res["files"] = store.settle(d, key, res["files"], files)
    except BaseException:
        store.discard(d, key)
        raise
    return res
