"""Render worker processes for the report's figures (standard library only: the command
line starts them before it imports polars, so that they import matplotlib while the runs and
tables are made).

The workers are :mod:`tpsim._draw` loaded by path: they import matplotlib, not polars or the
rest of tpsim. On Linux one process imports matplotlib and forks the others. Each worker has
a job pipe and an answer pipe (:func:`tpsim._draw.read_frame` framing) and ends at the end of
its job pipe, so the workers end with this process; they also die with their parent
(``PR_SET_PDEATHSIG``), even when it is killed.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any, Optional

#: Most render worker processes a report starts (each costs about 0.7 s of CPU time to
#: import matplotlib where it cannot be forked from one that has).
MAX_WORKERS = 8
_DRAW = Path(__file__).resolve().with_name("_draw.py")


def cpus() -> int:
    """Cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def workers_for(n_figures: Optional[int], workers: Optional[int] = None) -> int:
    """How many worker processes draw ``n_figures`` figures (``None``: not known yet):
    ``workers`` if given (1: draw in this process), else one per usable core, at most
    :data:`MAX_WORKERS` and one per figure; 1 where worker processes cannot be started (not
    POSIX)."""
    if workers is not None:
        if workers < 1:
            raise ValueError(f"workers must be at least 1, got {workers}")
        n = workers
    else:
        n = min(cpus(), MAX_WORKERS)
    if n_figures is not None:
        n = min(n, max(n_figures, 1))
    return n if n > 1 and os.name == "posix" else 1


class Pool:
    """``n`` render worker processes; :meth:`submit` jobs, read ``answers`` (a queue of
    ``(job id, {format: bytes} or None, error text or None, CPU s the job took)``),
    :meth:`close` when done."""

    _BOOT = ("import importlib.util, sys; "
             "s = importlib.util.spec_from_file_location('tpsim_render_worker', sys.argv[1]); "
             "m = importlib.util.module_from_spec(s); sys.modules[s.name] = m; s.loader.exec_module(m); "
             "m.worker_main([int(a) for a in sys.argv[2:]])")

    def __init__(self, n: int):
        import queue
        import subprocess
        import tempfile
        import threading

        self.n = n
        self.jobs: "queue.Queue" = queue.Queue()
        self.answers: "queue.Queue" = queue.Queue()
        self.procs: list = []
        self.stderr = tempfile.TemporaryFile()
        env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", MKL_NUM_THREADS="1",
                   TPSIM_PARENT_PID=str(os.getpid()))
        ends = []  # (child's read end, child's write end, our write end, our read end)
        try:
            for _ in range(n):
                jr, jw = os.pipe()
                ar, aw = os.pipe()
                ends.append((jr, aw, jw, ar))
            groups = [ends] if sys.platform.startswith("linux") else [[e] for e in ends]
            for group in groups:
                fds = [fd for e in group for fd in e[:2]]
                self.procs.append(subprocess.Popen(
                    [sys.executable, "-c", self._BOOT, str(_DRAW), *map(str, fds)], pass_fds=fds, env=env,
                    stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=self.stderr))
        except BaseException:
            for e in ends:
                os.close(e[2])
                os.close(e[3])
            self.stderr.close()
            raise
        finally:
            for e in ends:
                os.close(e[0])
                os.close(e[1])
        self.pipes = [(os.fdopen(e[2], "wb"), os.fdopen(e[3], "rb")) for e in ends]
        self.threads = [threading.Thread(target=self._feed, args=pipe, daemon=True) for pipe in self.pipes]
        for t in self.threads:
            t.start()

    def _feed(self, w, r) -> None:
        from ._draw import read_frame, write_frame

        while True:
            job = self.jobs.get()
            if job is None:
                return
            try:
                write_frame(w, job)
                self.answers.put(read_frame(r))
            except Exception as e:  # the worker died: its jobs are drawn by the caller
                self.answers.put((job[0], None, f"render worker ended: {type(e).__name__}: {e}", 0.0))
                while True:
                    job = self.jobs.get()
                    if job is None:
                        return
                    self.answers.put((job[0], None, "render worker ended", 0.0))

    def submit(self, jid: int, spec: dict[str, Any], formats: list[str]) -> None:
        self.jobs.put((jid, spec, formats))

    def close(self, kill: bool = False) -> None:
        """Ends the workers (jobs not taken yet are dropped); ``kill``: at once, not after the
        job they are drawing (or their start)."""
        import queue

        if kill:
            for p in self.procs:
                p.kill()

        while True:
            try:
                self.jobs.get_nowait()
            except queue.Empty:
                break
        for _ in self.threads:
            self.jobs.put(None)
        for w, r in self.pipes:
            for f in (w, r):
                try:
                    f.close()
                except OSError:
                    pass
        for p in self.procs:
            try:
                p.wait(timeout=10)
            except Exception:
                p.kill()
                p.wait()
        self.stderr.close()


_early: Optional[Pool] = None


def prestart(workers: Optional[int] = None) -> None:
    """Starts the render workers now (they import matplotlib while this process does other
    work); the next report takes them (:func:`take`). Does nothing where there would be one."""
    global _early
    n = workers_for(None, workers)
    if _early is None and n > 1:
        try:
            _early = Pool(n)
        except OSError:
            _early = None
        else:
            import atexit

            atexit.register(_close_early)


def _close_early() -> None:
    """At exit: ends prestarted workers no report took (bad input, a run that failed)."""
    global _early
    pool, _early = _early, None
    if pool is not None:
        pool.close(kill=True)


def take(n: int) -> Optional[Pool]:
    """Render workers for ``n`` > 1 figures' worth: the prestarted ones if any (closing those
    beyond ``n`` is not needed: idle workers cost nothing), else new ones; ``None`` if they
    cannot be started."""
    global _early
    pool, _early = _early, None
    if pool is not None:
        return pool
    try:
        return Pool(n)
    except OSError:
        return None
