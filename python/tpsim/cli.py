"""The ``tpsim`` command line.

Exit status: 0 on success; 2 for a bad scenario or bad arguments (nothing is run or
written); 1 when runs failed (the others are stored; re-running the same command completes
only the missing ones) or for a problem of the environment (an output that cannot be
written, a full disk, an unreachable scheduler); 130 when interrupted (Ctrl-C), 143 when
terminated (SIGTERM); finished runs are stored either way and nothing is left behind. Every error is one line on stderr (a scenario's problems: "error: invalid scenario"
and one ``file:line:col: ...`` line per problem), never a Python traceback
(``TPSIM_DEBUG=1`` shows one for an internal error).

The subcommands are in :mod:`tpsim.commands` (typer); this module imports typer only to run
them, so that ``tpsim --version`` starts fast.
"""

from __future__ import annotations

import os
import re
import sys
import unicodedata
import warnings
from pathlib import Path

#: Set once an "interrupted" or "terminated" line has been printed.
_interrupt_reported = False


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised in the main thread as Ctrl-C's ``KeyboardInterrupt`` is (the engine
    checks for both between slices of events), so that the same clean-up runs: workers
    ended, partial files removed, stored runs kept. Exit status 143."""


def _on_sigterm(signum: int, frame: object) -> None:
    raise Terminated()


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


def _click_classes(name: str) -> tuple:
    """The exception class ``name`` of click and of the copy of click that newer typers ship
    (click itself only if it is imported: a typer that does not use it raises none of its
    exceptions)."""
    out = []
    for mod in ("typer._click.exceptions", "typer.exceptions", "click.exceptions"):
        try:
            m = sys.modules.get(mod) if mod.startswith("click") else __import__(mod, fromlist=[name])
        except ImportError:
            continue
        c = getattr(m, name, None)
        if isinstance(c, type) and c not in out:
            out.append(c)
    return tuple(out)


#: Command lines answered without typer: ``tpsim --version``, ``tpsim -V``, ``tpsim version``.
_VERSION_ARGS = (["--version"], ["-V"], ["version"])


def _print_version() -> None:
    """What ``typer.echo(build_id())`` prints, without typer (nothing if stdout is closed)."""
    from ._build import build_id

    if sys.stdout is not None:
        sys.stdout.write(build_id() + "\n")
        sys.stdout.flush()


def main() -> None:
    """Entry point of the ``tpsim`` script: every error is one line on stderr (see the module
    docstring for the exit status)."""
    fast = sys.argv[1:] in _VERSION_ARGS
    if fast:  # no typer: no click exceptions either
        typer_app = None
        no_args = usage = click_error = exit_ = abort = ()
    else:
        from .commands import app as typer_app

        no_args, usage, click_error = _click_classes("NoArgsIsHelpError"), _click_classes("UsageError"), _click_classes("ClickException")
        exit_, abort = _click_classes("Exit"), _click_classes("Abort")
    if not sys.warnoptions and not os.environ.get("TPSIM_DEBUG"):
        # Library warnings (matplotlib, polars, scipy) are not the user's to act on.
        warnings.simplefilter("ignore")
    code: object = 0
    if not fast:
        import signal

        signal.signal(signal.SIGTERM, _on_sigterm)
    try:
        if typer_app is None:
            _print_version()
        else:
            code = typer_app(standalone_mode=False)
        if code == 130 and not _interrupt_reported:
            _err("interrupted")
    except no_args as e:  # `tpsim` alone: the help (typer prints it on stdout)
        if e.format_message().strip():
            e.show()
        code = e.exit_code
    except usage as e:
        ctx = getattr(e, "ctx", None)
        where = f" (see '{ctx.command_path} --help')" if ctx is not None else ""
        _err(f"error: {_one_line(e.format_message())}{where}")
        code = 2
    except click_error as e:
        _err(f"error: {_one_line(e.format_message())}")
        code = getattr(e, "exit_code", 1)
    except exit_ as e:
        code = e.exit_code
    except KeyboardInterrupt as e:
        word, code = interrupted(e)
        if not _interrupt_reported:
            _err(word)
    except abort:
        if not _interrupt_reported:
            _err("interrupted")
        code = 130
    except BrokenPipeError:  # stdout closed early (| head): stop quietly
        try:
            sys.stdout = open(os.devnull, "w")
        except OSError:  # pragma: no cover
            pass
        code = 1
    except OSError as e:
        if os.environ.get("TPSIM_DEBUG"):
            raise
        _err(_os_error(e, "cannot access"))
        code = 1
    except Exception as e:  # an internal error: one line, not a traceback
        if os.environ.get("TPSIM_DEBUG"):
            raise
        _err(f"error: internal error: {type(e).__name__}: {_one_line(e)} (please report this; "
             "TPSIM_DEBUG=1 shows the traceback)")
        code = 1
    sys.exit(code if isinstance(code, int) else 0)


if __name__ == "__main__":
    main()
