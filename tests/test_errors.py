"""Bad input: one clear error naming key and line, exit status 2, nothing written."""

from __future__ import annotations

import re

import pytest

import tpsim
from conftest import SCENARIOS, cli

BASE = (SCENARIOS / "study-d-wired-voip.toml").read_text()


def mutate(old: str, new: str) -> str:
    assert old in BASE, old
    return BASE.replace(old, new, 1)


#: The end of flow 0's application line, after which a mutation adds flow 0's `tcp` table.
APP_END = 'stop = "10s" }\n'


def line_of(text: str, needle: str) -> int:
    return next(i for i, l in enumerate(text.splitlines(), 1) if needle in l)


CASES = {
    "unknown key": (mutate("queue = 50 ", "queu = 50 "), "links.0.queu", "queu = 50", "unknown field"),
    "missing unit": (mutate('delay = "50ms"', "delay = 50"), "links.0.delay", "delay = 50", "missing unit"),
    "wrong unit": (mutate('delay = "50ms"', 'delay = "50kbps"'), "links.0.delay", 'delay = "50kbps"', "unknown unit"),
    "negative rate": (mutate('rate = "256kbps"', 'rate = "-256kbps"'), "links.0.rate", "rate = ", "negative"),
    "node index out of range": (mutate("dst = 1", "dst = 7"), "flows.0.dst", "dst = 7", "out of range"),
    "unreachable destination": (mutate("count = 2", "count = 3").replace("dst = 1", "dst = 2"), "flows.0.dst", "dst = 2", "unreachable"),
    "oversized UDP message": (mutate('size = "128B"', 'size = "1501B"'), "flows.0.app.size", "app = {", "does not fit the path MTU"),
    "malformed TOML": (mutate("[nodes]", "[nodes"), "", "[nodes", "malformed TOML"),
    "zero SYN attempts": (
        mutate(APP_END, APP_END + 'tcp = { syn_attempts = 0 }\n'),
        "flows.0.tcp.syn_attempts", "tcp = {", "at least 1 SYN",
    ),
    "zero delayed-ACK segments": (
        mutate(APP_END, APP_END + 'tcp = { delayed_ack_segments = 0 }\n'),
        "flows.0.tcp.delayed_ack_segments", "tcp = {", "at least 1 segment",
    ),
    "fault event on a missing link": (
        BASE + '\n[[events]]\nat = "5s"\nkind = "link_down"\nlink = 7\n',
        "events.0.link", "link = 7", "link index 7 out of range",
    ),
    "fault event with an unknown kind": (
        BASE + '\n[[events]]\nat = "5s"\nkind = "link_flap"\nlink = 0\n',
        "events.0.kind", 'kind = "link_flap"', "unknown variant",
    ),
    "misspelt queue-discipline key": (
        mutate("queue = 50 ", 'queue = 50\naqm = { kind = "codel", targt = "5ms" } '),
        "links.0.aqm.targt", "aqm = {", "did you mean `target`",
    ),
    "unknown queue discipline": (
        mutate("queue = 50 ", 'queue = 50\naqm = { kind = "blue" } '),
        "links.0.aqm.kind", "aqm = {", "unknown variant `blue`",
    ),
    "RED thresholds out of order": (
        mutate("queue = 50 ", 'queue = 50\naqm = { kind = "red", min_th = 20, max_th = 10 } '),
        "links.0.aqm.max_th", "aqm = {", "greater than min_th",
    ),
    "device queue of thousands of packets": (
        mutate("queue = 50 ", "queue = 50\ndevice_queue = 5000 "),
        "links.0.device_queue", "device_queue = 5000", "at most 1000 packets",
    ),
    "on-off source without an off period": (
        mutate('app = { kind = "cbr", size', 'app = { kind = "on-off", on = "1s", size'),
        "flows.0.app.kind", "app = {", "needs `off`",
    ),
    "zero SYN timeout": (
        mutate(APP_END, APP_END + 'tcp = { syn_rto = "0s" }\n'),
        "flows.0.tcp.syn_rto", "tcp = {", "greater than 0",
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_cli_reports_key_and_line_and_writes_nothing(case, tmp_path):
    text, key, line_text, what = CASES[case]
    f = tmp_path / "bad.toml"
    f.write_text(text)
    out = tmp_path / "out"
    p = cli("run", str(f), "-o", str(out))
    assert p.returncode == 2, (p.returncode, p.stderr)
    assert not out.exists()
    line = line_of(text, line_text)
    assert re.search(rf"bad\.toml:{line}:\d+: ", p.stderr), p.stderr
    if key:
        assert f"key `{key}`" in p.stderr, p.stderr
    assert what in p.stderr, p.stderr
    assert "Traceback" not in p.stderr
    v = cli("validate", str(f))
    assert v.returncode == 2 and what in v.stderr


@pytest.mark.parametrize("case", list(CASES))
def test_python_api_raises_scenario_error(case):
    text, key, line_text, what = CASES[case]
    with pytest.raises(tpsim.ScenarioError) as exc:
        tpsim.Scenario(text, "bad.toml")
    assert isinstance(exc.value, ValueError)
    d = exc.value.diagnostics[0]
    assert d["line"] == line_of(text, line_text)
    assert d["path"] == key
    assert what in d["message"]


def test_every_problem_is_reported_at_once():
    text = mutate('rate = "256kbps"', 'rate = "0kbps"').replace("dst = 1", "dst = 9")
    with pytest.raises(tpsim.ScenarioError) as exc:
        tpsim.Scenario(text)
    paths = [d["path"] for d in exc.value.diagnostics]
    assert paths == ["links.0.rate", "flows.0.dst"]


def test_validate_reports_every_misspelt_key_at_once_with_a_suggestion(tmp_path):
    # Three typos, three tables: one `tpsim validate` names all three, each on its own line
    # with the valid key it is closest to.
    text = mutate("queue = 50 ", "queu = 50 ").replace("\nduration = ", "\nduratoin = ").replace("count = 2", "cuont = 2")
    f = tmp_path / "bad.toml"
    f.write_text(text)
    p = cli("validate", str(f))
    assert p.returncode == 2
    found = re.findall(r"bad\.toml:(\d+):\d+: key `([^`]+)`: unknown field .*; did you mean `(\w+)`\?", p.stderr)
    assert found == [(str(line_of(text, "duratoin")), "simulation.duratoin", "duration"),
                     (str(line_of(text, "cuont")), "nodes.cuont", "count"),
                     (str(line_of(text, "queu = 50")), "links.0.queu", "queue")], p.stderr


def test_runs_below_one_is_refused(tmp_path):
    p = cli("run", str(SCENARIOS / "study-d-wired-voip.toml"), "-o", str(tmp_path / "o"), "--runs", "0")
    assert p.returncode == 2 and "--runs" in p.stderr
    assert not (tmp_path / "o").exists()
    with pytest.raises(tpsim.ScenarioError):
        tpsim.run(SCENARIOS / "study-d-wired-voip.toml", runs=0)


def test_missing_file_is_a_clear_error(tmp_path):
    p = cli("validate", str(tmp_path / "nope.toml"))
    assert p.returncode == 2 and "cannot read" in p.stderr
