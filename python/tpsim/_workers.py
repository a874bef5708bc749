"""Worker processes for a sweep's runs (``jobs`` > 1): one job at a time per worker, over a
pipe of its own.

Each worker is a ``spawn``-started process holding the only other end of its pipe, so that a
worker that dies (a crash, its memory limit, a kill) is seen at once, as the end of its pipe
and its process sentinel, and fails only the job it was running (:class:`RunCrashed`, with the
last line the worker wrote on stderr); a new worker takes its place. Nothing is left to join
at exit: on an error, an interrupt or a termination signal the parent kills its workers and
waits for them before it returns, so no thread waits on a half-written result.

Workers ignore SIGINT (a terminal's Ctrl-C reaches the whole process group; the parent ends
them), die with the parent (``PR_SET_PDEATHSIG``) and write their stderr to a temporary file
(an allocator's abort message is not the user's to read; its last line goes into the error).
"""

from __future__ import annotations

import os
import pickle
import signal
import tempfile
from typing import Any, Callable, Optional

#: The parent gives up waiting for a killed worker to be reaped after this long, s.
_REAP_S = 5.0


class RunCrashed(RuntimeError):
    """A run's worker process died (for instance at its memory limit) before returning."""


def _worker_main(conn: Any, memory_limit: Optional[int], stderr_path: str, parent: int) -> None:
    """A worker: runs the jobs it receives (argument tuples of :func:`tpsim._job._job_main`) and
    sends back ``("ok", record)`` or ``("err", exception)``; ends at ``None`` or the end of its
    pipe, or when ``parent`` (the pid of the process that started it) ends."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    fd = os.open(stderr_path, os.O_WRONLY | os.O_APPEND)
    os.dup2(fd, 2)
    os.close(fd)
    from ._draw import die_with_parent

    die_with_parent(parent)
    from ._job import _job_main

    if memory_limit is not None:
        import resource

        # The run's own memory: what the worker already maps (interpreter, engine library,
        # tpsim's modules) does not count against it.
        cap = _address_space() + memory_limit
        soft, hard = resource.getrlimit(resource.RLIMIT_AS)
        if hard != resource.RLIM_INFINITY:
            cap = min(cap, hard)  # an inherited limit (ulimit -v) cannot be raised
        resource.setrlimit(resource.RLIMIT_AS, (cap, hard))

    while True:
        try:
            job = conn.recv()
        except (EOFError, OSError):
            return
        if job is None:
            return
        try:
            answer: tuple = ("ok", _job_main(*job))
        except BaseException as e:  # sent back: the parent decides what it means
            answer = ("err", e)
        try:
            data = pickle.dumps(answer)
            if answer[0] == "err":
                pickle.loads(data)  # some exceptions pickle but cannot be rebuilt
        except Exception:  # an exception that does not pickle (or unpickle): its text does
            data = pickle.dumps(("err", RuntimeError(f"{type(answer[1]).__name__}: {answer[1]}")))
        try:
            conn.send_bytes(data)
        except OSError:
            return


def _address_space() -> int:
    """This process's virtual memory size, bytes (``VmSize``; 0 where /proc is missing)."""
    try:
        with open("/proc/self/status", encoding="ascii", errors="replace") as f:
            for line in f:
                if line.startswith("VmSize:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return 0


def _last_line(path: str) -> str:
    """What a dead worker last said: the allocator's "memory allocation of N bytes failed" if
    it said that (Rust's abort adds lines after it), else the last non-empty line of its
    stderr file (at most 300 characters; the file's last MiB is read: a backtrace, with
    ``RUST_BACKTRACE`` set, follows the allocator's line)."""
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            f.seek(max(0, f.tell() - 2**20))
            lines = [ln.strip() for ln in f.read().decode("utf-8", "replace").splitlines() if ln.strip()]
    except OSError:
        return ""
    alloc = [ln for ln in lines if ln.startswith("memory allocation of")]
    return (alloc or lines or [""])[-1][:300]


class _Worker:
    def __init__(self, ctx: Any, memory_limit: Optional[int], tmp: str, index: int):
        self.stderr = os.path.join(tmp, f"worker-{index}.stderr")
        with open(self.stderr, "wb"):
            pass
        here, there = ctx.Pipe()
        self.proc = ctx.Process(target=_worker_main, args=(there, memory_limit, self.stderr, os.getpid()), daemon=True,
                                name=f"tpsim-worker-{index}")
        self.proc.start()
        there.close()  # the worker holds the only other end: its death ends the pipe
        self.conn = here
        self.job: Optional[tuple[int, Any]] = None

    def kill(self) -> None:
        try:
            self.conn.close()
        except OSError:
            pass
        if self.proc.is_alive():
            self.proc.kill()

    def reap(self) -> None:
        self.proc.join(timeout=_REAP_S)


def run_jobs(n: int, todo: list, args: Callable, finish: Callable, memory_limit: Optional[int] = None,
             guard_env: Optional[str] = None, guard_error: Optional[Callable[[], BaseException]] = None) -> None:
    """Runs the jobs ``todo`` (``(index, job)`` pairs) on ``n`` worker processes and calls
    ``finish(index, job, record or None, error or None)`` for each as it ends. A job's own
    error (a failed run, :class:`RunCrashed` when its worker died) is passed to ``finish``;
    an ``OSError`` of a run (a full disk, a directory it cannot write) is the environment's,
    not the run's: it ends the sweep at once and is raised here, as is anything ``finish``
    raises, an interrupt, or ``guard_error()`` when a worker made the file named by the
    environment variable ``guard_env`` (set here for the workers: they found a script without
    a ``__main__`` guard). Every worker is ended before this returns or raises.

    ``memory_limit`` caps the address space each worker may add to what it maps when it
    starts (bytes; ``RLIMIT_AS``): a run's own memory, not the interpreter's.
    """
    import multiprocessing
    from multiprocessing.connection import wait

    from .labels import size_text

    ctx = multiprocessing.get_context("spawn")
    queue = list(todo)
    workers: list[_Worker] = []
    made = 0
    with tempfile.TemporaryDirectory(prefix="tpsim-workers-") as tmp:
        marker = os.path.join(tmp, "unguarded-main")
        previous = os.environ.get(guard_env) if guard_env else None
        if guard_env:
            os.environ[guard_env] = marker
        try:
            while queue or any(w.job is not None for w in workers):
                # Give every idle worker a job; start workers up to n while jobs wait.
                while len(workers) < n and len(queue) > sum(w.job is None for w in workers):
                    workers.append(_Worker(ctx, memory_limit, tmp, made))
                    made += 1
                for w in workers:
                    if w.job is None and queue:
                        w.job = queue.pop(0)
                        try:
                            w.conn.send(args(w.job[1]))
                        except OSError:
                            pass  # the worker died: seen below, with this job
                busy = [w for w in workers if w.job is not None]
                ready = set(wait([w.conn for w in busy] + [w.proc.sentinel for w in busy], timeout=0.5))
                for w in busy:
                    if w.conn not in ready and w.proc.sentinel not in ready:
                        continue
                    answer = None
                    if w.conn in ready:
                        try:
                            answer = w.conn.recv()
                        except (EOFError, OSError):
                            answer = None
                    i, job = w.job
                    w.job = None
                    if answer is None:  # the worker died with this job (or is dying: let it end)
                        w.proc.join(timeout=1.0)
                        w.kill()
                        w.reap()
                        workers.remove(w)
                        if guard_env and guard_error is not None and os.path.exists(marker):
                            raise guard_error()
                        limit = f", memory limit {size_text(memory_limit)}" if memory_limit else ""
                        why = _last_line(w.stderr)
                        code = w.proc.exitcode
                        status = f"signal {-code}" if code is not None and code < 0 else f"exit status {code}"
                        finish(i, job, None, RunCrashed(f"the run's worker process died ({status}{limit})"
                                                        + (f": {why}" if why else "")))
                        continue
                    if not w.proc.is_alive():  # answered, then died: not given another job
                        w.reap()
                        workers.remove(w)
                    kind, value = answer
                    if kind == "ok":
                        finish(i, job, value, None)
                    elif isinstance(value, OSError):
                        raise value
                    elif isinstance(value, (KeyboardInterrupt, SystemExit)):
                        raise KeyboardInterrupt
                    else:
                        finish(i, job, None, value)
            for w in workers:
                try:
                    w.conn.send(None)
                except OSError:
                    pass
            for w in workers:
                w.reap()
        finally:
            for w in workers:
                w.kill()
            for w in workers:
                w.reap()
            if guard_env and previous is None:
                os.environ.pop(guard_env, None)
            elif guard_env:
                os.environ[guard_env] = previous
