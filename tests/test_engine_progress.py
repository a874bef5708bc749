"""The engine's progress callback: simulated time reached, reported while a long run runs,
and an exception raised by the callback stops the run."""

from __future__ import annotations

import pytest

from tpsim import _tpsim
from conftest import one_link


class Stop(Exception):
    pass


def test_progress_reports_simulated_time_and_an_exception_stops_the_run():
    # 100,000 messages per simulated second for 1000 s: far longer than the test waits.
    text = one_link(app='{ kind = "cbr", size = "100B", interval = "10us" }', duration="1000s")
    calls: list[tuple[float, float]] = []

    def progress(now_s: float, end_s: float) -> None:
        calls.append((now_s, end_s))
        if len(calls) == 2:
            raise Stop

    with pytest.raises(Stop):
        _tpsim.run(text, progress=progress)
    (t1, end1), (t2, end2) = calls
    assert end1 == end2 == 1000.0
    assert 0.0 < t1 <= t2 < 1000.0
