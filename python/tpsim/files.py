"""Output files written safely, without polars (so that checking an output path or storing a
run does not import the table library): atomic writes (a temporary file renamed into place,
several files all or none) and the checks of output paths."""

from __future__ import annotations

import errno
import fnmatch
import json
import os
import stat
import tempfile
from pathlib import Path
from typing import Any, Callable, Optional


#: Environment variable of the tests' full-disk hook: ``"1"`` makes every atomic write fail
#: with ENOSPC after writing its temporary file; otherwise a comma-separated list of file-name
#: patterns (``"summary.csv,*.json"``) makes only the writes of matching files fail.
ENOSPC_HOOK = "TPSIM_TEST_ENOSPC"


def _enospc_hook(path: Path) -> None:
    spec = os.environ.get(ENOSPC_HOOK)
    if spec and (spec == "1" or any(fnmatch.fnmatch(path.name, pat.strip()) for pat in spec.split(",") if pat.strip())):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))


def _target(path: Path) -> tuple[Path, bool]:
    """Where a write of ``path`` goes and whether it is replaced atomically: a symlink's
    target; a device, FIFO or socket is written in place (never replaced by a regular file)."""
    path = Path(path)
    try:
        st = os.stat(path)  # through symlinks
    except FileNotFoundError:
        st = None
    except NotADirectoryError:
        raise NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR), str(path)) from None
    if st is not None and not stat.S_ISREG(st.st_mode) and not stat.S_ISDIR(st.st_mode):
        # By the name given: /dev/stdout leads to /proc/self/fd/1, whose target (a pipe,
        # "pipe:[...]") has no path of its own.
        return path, False
    if path.is_symlink():
        path = Path(os.path.realpath(path))
        try:
            st = os.stat(path)
        except FileNotFoundError:
            return path, True
    if st is None:
        return path, True
    if stat.S_ISDIR(st.st_mode):
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), str(path))
    return path, True


def _stage(path: Path, write: Callable[[Path], Any]) -> Optional[Path]:
    """Writes ``path``'s new content to a temporary file beside it and returns that file (to
    be renamed into place), or writes a non-regular target in place and returns ``None``.
    Nothing is left behind on failure. Raises OSError naming ``path``."""
    path, regular = _target(path)
    if not regular:
        try:
            write(path)
            _enospc_hook(path)
        except OSError as e:
            raise OSError(e.errno, e.strerror or str(e), str(path)) from None
        return None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except FileExistsError:  # a parent is a file
        raise NotADirectoryError(errno.ENOTDIR, f"{os.strerror(errno.ENOTDIR)} (a parent is a file)", str(path)) from None
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as e:
        raise OSError(e.errno, e.strerror or str(e), str(path)) from None
    os.close(fd)
    try:
        write(Path(tmp))
        _enospc_hook(path)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
    except OSError as e:
        Path(tmp).unlink(missing_ok=True)
        if e.filename in (None, tmp, str(tmp)):  # name the file being written, not the temporary
            raise OSError(e.errno, e.strerror or str(e), str(path)) from None
        raise
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return Path(tmp)


def _atomic_many(items: list[tuple[Path, Callable[[Path], Any]]]) -> None:
    """Writes several files so that either all of them are replaced or none: every new content
    goes to a temporary file first, and only when all are written are they renamed into place
    (a full disk or an interrupt leaves the old files, or none, and no temporary file)."""
    staged: list[tuple[Path, Path]] = []
    try:
        for path, write in items:
            tmp = _stage(path, write)
            if tmp is not None:
                staged.append((tmp, _target(path)[0]))
        for tmp, path in staged:
            os.replace(tmp, path)
    except BaseException:
        for tmp, _ in staged:
            tmp.unlink(missing_ok=True)
        raise


def _atomic(path: Path, write: Callable[[Path], Any]) -> None:
    """Writes ``path`` atomically with ``write(tmp_path)``: a temporary file renamed into
    place, so a failure never leaves a half-written file (see :func:`_atomic_many`)."""
    _atomic_many([(Path(path), write)])


#: JSON documents longer than this (characters, written compactly) are written on one line:
#: Python's indenting encoder is pure Python (1.7 s for the 9 MB resolved scenario of 20,000
#: flows, against 0.5 s for its C encoder).
PRETTY_JSON_MAX = 1_000_000


def json_text(obj: Any, sort_keys: bool = False) -> str:
    """``obj`` as JSON text (no final newline): indented by two spaces, or on one line when
    that is longer than :data:`PRETTY_JSON_MAX` characters.

    Raises:
        TypeError: for a value JSON cannot hold.
    """
    compact = json.dumps(obj, sort_keys=sort_keys, separators=(",", ":"))
    return compact if len(compact) > PRETTY_JSON_MAX else json.dumps(obj, indent=2, sort_keys=sort_keys)


def atomic_write_text(path: Path, text: str) -> None:
    """Writes ``text`` to ``path`` atomically (temporary file + rename)."""
    _atomic(path, lambda p: p.write_text(text, encoding="utf-8"))


class ResultsError(ValueError):
    """A results directory that cannot be read: not the output directory of a tpsim run, or
    one of its files (``flows.parquet``, ``network.parquet``, ``summary.csv``, ``tpsim.json``,
    ``scenario.resolved.json``, the time series and trace tables) missing or damaged. The
    message names the file and what was expected."""


class OutputPathError(ValueError):
    """An output path that cannot be one whatever the environment: empty, an existing file
    where a directory is needed (or the reverse), or a path under a file."""


def _as_path(out: Any, what: str) -> Path:
    if isinstance(out, bool) or not isinstance(out, (str, os.PathLike)):
        raise TypeError(f"{what} must be a path (str or os.PathLike), got {type(out).__name__} {out!r:.80}")
    s = os.fspath(out)
    if not isinstance(s, str):
        s = os.fsdecode(s)
    if not s.strip():
        raise OutputPathError(f"{what}: expected a path, got an empty string")
    return Path(s)


def _existing_ancestor(p: Path, what: str) -> Path:
    """The nearest existing path of ``p`` and its parents; raises OutputPathError if it is not
    a directory (``p`` would be under a file)."""
    a = p
    while not os.path.lexists(a) and a.parent != a:
        a = a.parent
    if a != p and not a.is_dir():
        raise OutputPathError(f"{what} {p}: {a} is not a directory")
    return a


def check_output_dir(out: Any, what: str = "output directory") -> Path:
    """Checks, creating nothing, that ``out`` can be an output directory: not empty, not an
    existing file, not under a file (OutputPathError), and writable (OSError naming it: a
    read-only or special file system). Returns it as a Path.

    Raises:
        TypeError: if ``out`` is not a path.
    """
    p = _as_path(out, what)
    if os.path.lexists(p) and not p.is_dir():
        raise OutputPathError(f"{what} {p}: exists and is not a directory")
    a = _existing_ancestor(p, what)
    try:
        os.rmdir(tempfile.mkdtemp(prefix=".tpsim-probe-", dir=a))
    except OSError as e:
        raise OSError(e.errno, f"cannot write there ({e.strerror or e})", str(p)) from None
    return p


def check_output_file(out: Any, what: str = "output file") -> Path:
    """Checks that ``out`` can be an output file: not empty, not a directory, not under a
    file (OutputPathError). Returns it as a Path."""
    p = _as_path(out, what)
    if p.is_dir():
        raise OutputPathError(f"{what} {p}: is a directory")
    _existing_ancestor(p, what)
    return p
