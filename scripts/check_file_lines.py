#!/usr/bin/env python3
"""Fails if a production Rust file under crates/*/src has more than MAX_LINES lines.

A file's lines are counted up to its trailing `#[cfg(test)] mod tests` block, if any. Test
code is not counted: files named `tests.rs` or `*_tests.rs`, and files under a `tests/`
directory. Function length is clippy's `too_many_lines` (clippy.toml); this is the file
length that clippy does not check.
"""

import re
import sys
from pathlib import Path

MAX_LINES = 1200

TEST_BLOCK = re.compile(r"^#\[cfg\(test\)\]\s*\n(\s*#\[[^\n]*\]\s*\n)*\s*mod tests\b", re.M)


def is_test_file(path: Path) -> bool:
    return path.name == "tests.rs" or path.name.endswith("_tests.rs") or "tests" in path.parts[:-1]


def production_lines(text: str) -> int:
    """Lines before the last `#[cfg(test)] mod tests` block (all of them if there is none)."""
    blocks = list(TEST_BLOCK.finditer(text))
    if blocks:
        text = text[: blocks[-1].start()]
    return len(text.splitlines())


def main() -> int:
    root = Path(__file__).resolve().parent.parent
    bad = []
    for crate in sorted((root / "crates").iterdir()):
        if not (crate / "src").is_dir():
            continue
        for path in sorted((crate / "src").rglob("*.rs")):
            if is_test_file(path.relative_to(crate / "src")):
                continue
            n = production_lines(path.read_text(encoding="utf-8"))
            if n > MAX_LINES:
                bad.append(f"{path.relative_to(root)}: {n} lines of production code, more than {MAX_LINES}")
    for line in bad:
        print(line, file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
