"""The ``tpsim`` command's error lines and exit statuses, shared by :mod:`tpsim.cli` (the
entry point, no typer) and :mod:`tpsim.commands` (the subcommands): every error is one line
on stderr, with control characters escaped. See :mod:`tpsim.cli` for the exit statuses."""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path

#: Set once an "interrupted" or "terminated" line has been printed.
_interrupt_reported = False


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised in the main thread as Ctrl-C's ``KeyboardInterrupt`` is (the engine
    checks for both between slices of events), so that the same clean-up runs: workers
    ended, partial files removed, stored runs kept. Exit status 143."""


def interrupted(e: KeyboardInterrupt) -> "tuple[str, int]":
    """The word and exit status for an interrupt: ``("terminated", 143)`` for SIGTERM,
    ``("interrupted", 130)`` for Ctrl-C."""
    return ("terminated", 143) if isinstance(e, Terminated) else ("interrupted", 130)


def _fail(message: str, code: int = 2) -> None:
    import typer

    global _interrupt_reported
    _interrupt_reported = _interrupt_reported or code in (130, 143)
    typer.echo(_escape_controls(message), err=True)
    raise typer.Exit(code)


def _err(message: str) -> None:
    import typer

    typer.echo(_escape_controls(message), err=True)


def _one_line(text: object) -> str:
    """``text`` on one line (whitespace runs, newlines included, become one space)."""
    return " ".join(str(text).split())


#: A diagnostic line of a ScenarioError: ``file:line:col: message``.
_DIAG = re.compile(r"^\S.*:\d+:\d+: \S")


def _scenario_error(e: Exception) -> str:
    """The message of a ScenarioError: "error: invalid scenario" and one ``file:line:col:``
    line per problem (a newline quoted from the scenario, e.g. in a key, is shown as ``\\n``),
    or one line for an error without a place (a bad --set or --sweep)."""
    lines = str(e).splitlines()
    if not lines or not _DIAG.match(lines[0]):
        return f"error: {_one_line(e)}"
    diags: list[str] = []
    for line in lines:
        if _DIAG.match(line) or not diags:
            diags.append(line)
        else:
            diags[-1] += "\\n" + line
    return "error: invalid scenario\n" + "\n".join(diags)


def _escape_controls(text: str) -> str:
    """``text`` with control characters other than newline and tab escaped (``\\x1b``), so
    that quoted input cannot move the cursor or recolour the terminal."""
    return "".join(c if c in "\n\t" or not unicodedata.category(c).startswith("C") or c.isprintable()
                   else c.encode("unicode_escape").decode("ascii") for c in text)


def _path_arg(value: str, what: str) -> Path:
    """A path argument; an empty one is an error (exit 2), not the current directory."""
    if not value.strip():
        _fail(f"error: {what}: expected a path, got an empty string")
    return Path(value)


def _os_error(e: OSError, doing: str = "cannot write") -> str:
    """One line for an OSError: what failed, on which path, why."""
    where = f" {e.filename}" if e.filename else ""
    return f"error: {doing}{where}: {_one_line(e.strerror or e)}"
