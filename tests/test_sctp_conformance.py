"""The SCTP conformance table (docs/sctp-conformance.md) is generated from a run of the cases:
it must be current, list at least 25 cases, each naming its RFC section, and all must pass."""

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_conformance_table_is_current_and_every_case_passes():
    p = subprocess.run(
        [sys.executable, str(ROOT / "scripts/sctp_conformance.py"), "--check"],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert p.returncode == 0, p.stderr
    rows = [l for l in (ROOT / "docs/sctp-conformance.md").read_text().splitlines() if l.startswith("| `")]
    assert len(rows) >= 25
    for row in rows:
        cells = [c.strip() for c in row.strip("|").split(" | ")]
        assert re.search(r"RFC \d+ §\d", cells[-2]), row
        assert cells[-1] == "pass", row
