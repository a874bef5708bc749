"""Study F end to end through ``tpsim study f --quick``: every sender under every queue of both
networks with 1, 2 and 4 flows, its report laid out per network and queue, and the behaviour
BBR v3's loss bounds were written for (draft-ietf-ccwg-bbr-06 §5.5.10) read off its table."""

from __future__ import annotations

import json
import re

import polars as pl
import pytest

import tpsim
from conftest import SCENARIOS, cli_once

TRANSPORTS = {"tcp-sack", "tcp-cubic", "tcp-bbr", "tcp-bbr3", "tcp-vegas", "tcp-westwood-plus"}
QUEUES = ["DropTail", "RED", "RED + ECN", "CoDel", "CoDel + ECN", "FQ-CoDel", "FQ-CoDel + ECN"]


@pytest.fixture(scope="module")
def study(tmp_path_factory):
    out, p = cli_once(tmp_path_factory, "study", "f", "--quick", "-q")
    assert p.returncode == 0, p.stderr
    return out, pl.read_parquet(out / "flows.parquet"), pl.read_parquet(out / "network.parquet")


def test_every_sender_queue_network_and_flow_count_is_run(study):
    out, flows, net = study
    cases = {f"{n}, {q}" for n in ("wired", "802.11 chain") for q in QUEUES}
    assert set(net["case"]) == cases
    assert set(net["flows.0.transport"]) == TRANSPORTS
    assert net.height == 14 * 6 * 3  # cases x senders x flow counts, one run each
    # `copies` gives each point that many flows, every one delivering data.
    per_point = flows.group_by("point", "flows.0.copies").agg(pl.len().alias("n"), pl.col("goodput_kbps").min())
    assert (per_point["n"] == per_point["flows.0.copies"]).all()
    assert (per_point["goodput_kbps"] > 0).all()
    # The wired flows cross the 10 Mbit/s link (one hop), the chain's 4 radio hops.
    hops = dict(flows.group_by(pl.col("case").str.starts_with("wired")).agg(pl.col("hops_mean").mean()).rows())
    assert hops == {True: 1.0, False: 4.0}
    # The metrics the study compares, for every flow or point.
    assert flows["queue_delay_mean_s"].null_count() == 0 and flows["queue_delay_p95_s"].null_count() == 0
    assert net["jain_fairness"].null_count() == 0 and net["jain_fairness"].is_between(0.25, 1.0).all()
    # ECN marks only where a discipline marks, and a marking discipline marks ECN-capable TCP.
    marks = dict(net.group_by(pl.col("case").str.ends_with("ECN")).agg(pl.col("ecn_marks").sum()).rows())
    assert marks[False] == 0 and marks[True] > 0


def test_the_report_compares_senders_per_network_and_queue(study):
    out, _, _ = study
    figs = {f["name"]: f for f in json.loads((out / "figures" / "figures.json").read_text())}
    for m in ("goodput_kbps", "queue_delay_mean_s", "queue_delay_p95_s", "retransmissions", "network-jain_fairness"):
        fig = figs[m]
        assert fig["x"] == "flows.0.transport", (m, fig["x"])
        assert fig["facet"] == "case" and len(fig["facets"]) == 14, (m, fig.get("facets"))
        assert len(fig["series"]) == 3, (m, fig["series"])  # 1, 2 and 4 competing flows
    # The time series compare the six senders, alone on the wired link with DropTail.
    cwnd = figs["timeseries-cwnd_bytes"]
    assert len(cwnd["series"]) == 6 and all("flow 0 fwd" in s for s in cwnd["series"]), cwnd["series"]


def test_bbr3_loses_less_than_bbr1_in_a_shallow_droptail_buffer(study):
    # The wired bottleneck with DropTail at half its BDP (17 packets): BBR v1 probes at 5/4 of
    # its bandwidth estimate whatever the losses; BBR v3 bounds its data in flight by the
    # volume at which a round lost more than 2 %. Packets lost in the network, summed over the
    # flows of a point, for 1, 2 and 4 flows.
    _, flows, _ = study
    wired = flows.filter(pl.col("case") == "wired, DropTail")
    lost = dict(
        ((t, n), v)
        for t, n, v in wired.group_by("flows.0.transport", "flows.0.copies").agg(pl.col("dropped_segments").sum()).rows()
    )
    for n in (1, 2, 4):
        assert lost[("tcp-bbr3", n)] < lost[("tcp-bbr", n)], (n, lost[("tcp-bbr3", n)], lost[("tcp-bbr", n)])
    # With several flows the difference is large.
    assert lost[("tcp-bbr3", 4)] < 0.6 * lost[("tcp-bbr", 4)]


@pytest.mark.parametrize("report, message", [
    ('layout = { x = "flows.0.app.size" }', "report.layout.x: `flows.0.app.size` is not a swept key or `case`"),
    ('layout = { facet = "case", hue = "links.0.rate" }', "report.layout.hue: `links.0.rate` is not a swept key or `case`"),
    ('timeseries_at = { case = "wired, Drop" }', 'report.timeseries_at: no case named "wired, Drop"'),
])
def test_report_layout_and_compared_points_name_swept_keys_or_cases(tmp_path, report, message):
    text = (SCENARIOS / "study-f-cc-aqm.toml").read_text(encoding="utf-8")
    text = text[: text.index("\n[report]")] + "\n[report]\n" + report + "\n"
    path = tmp_path / "f.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(tpsim.ScenarioError, match=re.escape(message)):
        tpsim.plan(path)


def test_a_layout_moves_keys_between_axis_lines_and_panels():
    from tpsim.report import _chosen_layout

    flows = pl.DataFrame({"case": ["a"], "flows.0.copies": [1], "flows.0.transport": ["tcp"]})
    default = ("flows.0.copies", ["case", "flows.0.transport"])
    # As study F: the sender on x, the flow count in bars, the case in panels.
    layout = {"x": "flows.0.transport", "hue": "flows.0.copies", "facet": "case"}
    assert _chosen_layout(layout, flows, *default) == ("flows.0.transport", ["flows.0.copies"], "case")
    # Only a facet: the default x stays, the faceted key leaves the lines.
    assert _chosen_layout({"facet": "case"}, flows, *default) == ("flows.0.copies", ["flows.0.transport"], "case")
    # A hue that was the default x: x moves to the next swept key.
    assert _chosen_layout({"hue": "flows.0.copies"}, flows, *default) == ("case", ["flows.0.copies"], None)
    # A key the table does not have is ignored (the scenario check refuses it first).
    assert _chosen_layout({"x": "links.0.rate"}, flows, *default) == default + (None,)
