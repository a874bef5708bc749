"""The progress bar of ``tpsim run`` and ``tpsim.run(progress=True)``, drawn by rich on stderr:
runs done of the total, the simulated seconds of a run made in this process (so that a single
long run shows progress), then the report step. rich is imported only when a bar is drawn."""

from __future__ import annotations

import os
import sys
from typing import Any, Callable, Optional

_console: Any = None


def console() -> Any:
    """The rich console on stderr that bars are drawn on."""
    global _console
    if _console is None:
        from rich.console import Console

        _console = Console(stderr=True)
    return _console


def stderr_is_terminal() -> bool:
    """Whether rich draws on stderr as on a terminal. A stderr that is not a terminal, without
    ``FORCE_COLOR`` or ``TTY_COMPATIBLE`` in the environment, is answered without importing
    rich (rich would answer no too)."""
    if "FORCE_COLOR" not in os.environ and "TTY_COMPATIBLE" not in os.environ:
        try:
            if not sys.stderr.isatty():
                return False
        except (AttributeError, ValueError):  # no stderr, or a closed one
            return False
    return bool(console().is_terminal)


class RunProgress:
    """A context manager that shows a run's progress bar while it is open (if ``enabled``).

    Its methods are the callbacks of :func:`tpsim.api.run_plan`: :meth:`runs_done` for
    ``progress``, :meth:`sim_time` for ``sim_progress``, and :meth:`report_step` gives the
    ``progress`` of :meth:`Results.write_report`. They do nothing when not enabled.
    """

    def __init__(self, name: str, total: int, enabled: bool = True, remaining: bool = True) -> None:
        self.name = name
        self.total = total
        self.enabled = enabled
        self._remaining = remaining
        self._bar: Any = None
        self._runs: Any = None
        self._sim: Any = None

    def __enter__(self) -> "RunProgress":
        if self.enabled:
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

            columns = [TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn()]
            if self._remaining:
                columns.append(TimeRemainingColumn())
            self._bar = Progress(*columns, console=console())
            self._bar.__enter__()
            if self.total:
                self._runs = self._bar.add_task(self.name, total=self.total)
                self._sim = self._bar.add_task("", total=None, visible=False)
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._bar is not None:
            self._bar.__exit__(*exc)
            self._bar = None

    def runs_done(self, done: int, total: int) -> None:
        """``progress(done, total)``: runs finished (stored ones included)."""
        if self._bar is not None and self._runs is not None:
            self._bar.update(self._runs, completed=done)
            self._bar.update(self._sim, visible=False)

    def sim_time(self, job: int, now_s: float, end_s: float) -> None:
        """``sim_progress(job, now_s, end_s)``: the simulated seconds of a run made in this
        process."""
        if self._bar is not None and self._sim is not None:
            self._bar.update(self._sim, description=f"  run {job + 1}/{self.total}, simulated s", completed=now_s,
                             total=end_s, visible=True)

    def report_step(self) -> Optional[Callable[[int, int], None]]:
        """Adds the report step to the bar; returns its ``progress(done, total)`` (figures,
        then the page), or ``None`` when not enabled."""
        if self._bar is None:
            return None
        bar, step = self._bar, self._bar.add_task("report (figures, report.html)", total=None)
        return lambda done, total: bar.update(step, completed=done, total=total)
