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
import sys
import warnings

from . import _errors
from ._errors import Terminated, _err, _one_line, _os_error, interrupted


def _on_sigterm(signum: int, frame: object) -> None:
    raise Terminated()


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


#: Columns of help output that does not go to a terminal.
HELP_WIDTH_NOT_A_TERMINAL = 120


def main() -> None:
    """Entry point of the ``tpsim`` script: every error is one line on stderr (see the module
    docstring for the exit status)."""
    fast = sys.argv[1:] in _VERSION_ARGS
    if fast:  # no typer: no click exceptions either
        typer_app = None
        no_args = usage = click_error = exit_ = abort = ()
    else:
        if not sys.stdout.isatty():
            # Help piped or captured: rich would wrap it to 80 columns; 120 keeps each
            # option's help on fewer lines (a user's TERMINAL_WIDTH wins).
            os.environ.setdefault("TERMINAL_WIDTH", str(HELP_WIDTH_NOT_A_TERMINAL))
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
        if code == 130 and not _errors._interrupt_reported:
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
        if not _errors._interrupt_reported:
            _err(word)
    except abort:
        if not _errors._interrupt_reported:
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
