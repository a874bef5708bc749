#!/usr/bin/env python3
"""A full disk under a parallel sweep: ``tpsim study d -j 2`` writing to a 200 KiB file system,
tried many times; each try must end with one error line and exit status 1 within 5 s, leaving
no temporary directory and no process behind.

    sudo python benches/full_disk.py [--tries 50] [--size 200k] [--dir MOUNTED_DIR] [--timeout 30]

Without ``--dir`` the script mounts a tmpfs of ``--size`` (needs root) and unmounts it at the
end; with ``--dir`` it writes into that directory (a small file system you made). Prints one
line per try and a summary; exits 1 if any try failed. Standard library only.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def descendants(pid: int) -> list[int]:
    parent: dict[int, int] = {}
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                parent[int(d.name)] = int((d / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                pass
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        kids = [c for c, pp in parent.items() if pp == p]
        out += kids
        todo += kids
    return out


def one_try(target: Path, tmp: Path, timeout: float) -> tuple[bool, str]:
    """One ``tpsim study d -j 2`` into ``target``; (passed, what happened)."""
    for entry in target.iterdir():
        shutil.rmtree(entry) if entry.is_dir() else entry.unlink()
    t0 = time.monotonic()
    proc = subprocess.Popen([sys.executable, "-m", "tpsim", "study", "d", "-j", "2", "-q", "-o", str(target / "d")],
                            cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=dict(os.environ, TMPDIR=str(tmp)))
    try:
        _, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        kids = descendants(proc.pid)
        proc.kill()
        for k in kids:
            try:
                os.kill(k, 9)
            except OSError:
                pass
        proc.communicate()
        return False, f"no exit within {timeout:g} s"
    wall = time.monotonic() - t0
    lines = err.strip().splitlines()
    problems = []
    if proc.returncode != 1:
        problems.append(f"exit status {proc.returncode}")
    if wall > 5:
        problems.append(f"{wall:.1f} s")
    if len(lines) != 1 or not lines[0].startswith("error: ") or "No space left on device" not in err:
        problems.append(f"stderr {err.strip()[:200]!r}")
    if "Traceback" in err:
        problems.append("a traceback")
    left = list(tmp.iterdir())
    if left:
        problems.append(f"left in TMPDIR: {[p.name for p in left]}")
        for p in left:
            shutil.rmtree(p, ignore_errors=True)
    return not problems, f"{wall:.2f} s, exit {proc.returncode}" + (": " + "; ".join(problems) if problems else "")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tries", type=int, default=50)
    ap.add_argument("--size", default="200k", help="tmpfs size (mount's size= option)")
    ap.add_argument("--dir", type=Path, help="write into this directory of a small file system instead of mounting one")
    ap.add_argument("--timeout", type=float, default=30.0, help="seconds before a try counts as hung")
    a = ap.parse_args()
    mounted = None
    if a.dir is None:
        mounted = Path(tempfile.mkdtemp(prefix="tpsim-full-disk-"))
        r = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={a.size}", "tmpfs", str(mounted)], capture_output=True, text=True)
        if r.returncode != 0:
            mounted.rmdir()
            print(f"cannot mount a tmpfs ({r.stderr.strip() or r.returncode}); run as root or give --dir", file=sys.stderr)
            return 2
        target = mounted
    else:
        target = a.dir
    tmp = Path(tempfile.mkdtemp(prefix="tpsim-full-disk-tmp-"))
    passed = 0
    try:
        for i in range(a.tries):
            ok, what = one_try(target, tmp, a.timeout)
            passed += ok
            print(f"try {i + 1:3}: {'ok  ' if ok else 'FAIL'} {what}", flush=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        if mounted is not None:
            subprocess.run(["umount", str(mounted)], check=False)
            mounted.rmdir()
    print(f"{passed} of {a.tries} tries ended with the error within 5 s and left nothing behind")
    return 0 if passed == a.tries else 1


if __name__ == "__main__":
    sys.exit(main())
