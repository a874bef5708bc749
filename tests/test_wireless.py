"""Wireless scenarios: placement, radio keys and their errors, end to end over 802.11."""

from __future__ import annotations

import polars as pl
import pytest

import tpsim
from conftest import SCENARIOS, cli, one_link


def chain(n: int = 2, spacing: str = "100m", radio: str = "", extra_nodes: str = "", flow_app: str = '{ kind = "cbr", size = "512B", interval = "100ms", start = "1s" }') -> str:
    return f"""
[simulation]
duration = "10s"
drain = "1s"

[nodes]
count = {n}
placement = {{ kind = "grid", columns = {n}, spacing = "{spacing}" }}
{extra_nodes}

[radio]
{radio}

[[flows]]
src = 0
dst = {n - 1}
transport = "udp"
app = {flow_app}
"""


def test_example_chain_runs_and_more_hops_cost_delay():
    # The file sweeps the transport: --sweep (not --set, which is refused for a swept key) picks UDP.
    res = tpsim.run(SCENARIOS / "example-wifi-chain.toml", runs=1, sweep=[("flows.0.transport", ["udp"])])
    d = res.flows.group_by("flows.0.dst").agg(pl.col("delay_mean_s").mean()).sort("flows.0.dst")["delay_mean_s"].to_list()
    assert d == sorted(d) and d[0] > 0
    assert res.network["mac_frames"].min() > 0


def test_range_key_sets_the_decode_range():
    # Two nodes 300 m apart: out of the ns-2 default 250 m range, inside a 350 m one.
    out = tpsim.run(tpsim.Scenario(chain(spacing="300m")))
    assert out.flows["rx_packets"][0] == 0 and out.network["drops_no_route"][0] > 0
    inr = tpsim.run(tpsim.Scenario(chain(spacing="300m", radio='range = "350m"\ncs_range = "700m"')))
    assert inr.flows["rx_packets"][0] == inr.flows["tx_packets"][0] > 0


@pytest.mark.parametrize(
    "radio, nodes, key, what",
    [
        ('data_rate = "3Mbps"', "", "radio.data_rate", "not a rate of this standard"),
        ('standard = "802.11g"', "", "radio.standard", "unknown variant"),
        ('range = "250m"\nrx_threshold = "1e-10W"', "", "radio.range", "not both"),
        ('cs_range = "100m"\nrange = "250m"', "", "radio.cs_range", "shorter than the decode range"),
        ('tx_power = "20"', "", "radio.tx_power", "missing unit"),
        ('exponent = 3.0', "", "radio.exponent", "log-distance"),
        ("capture_ratio = 0.5", "", "radio.capture_ratio", "at least 1"),
        ("", "", "", ""),
    ],
)
def test_radio_errors_name_key_and_line(radio, nodes, key, what):
    text = chain(radio=radio, extra_nodes=nodes)
    if not key:
        tpsim.Scenario(text)  # the base is valid
        return
    with pytest.raises(tpsim.ScenarioError) as e:
        tpsim.Scenario(text)
    d = e.value.diagnostics[0]
    assert d["path"] == key and what in d["message"], e.value.diagnostics
    line = next(i for i, l in enumerate(text.splitlines(), 1) if l.startswith(key.split(".")[-1]))
    assert d["line"] == line


def test_placement_errors():
    text = chain().replace('placement = { kind = "grid", columns = 2, spacing = "100m" }', 'placement = { kind = "explicit", positions = [["0m", "0m"]] }')
    with pytest.raises(tpsim.ScenarioError, match="expected 2 positions"):
        tpsim.Scenario(text)
    text = chain().replace('placement = { kind = "grid", columns = 2, spacing = "100m" }\n', "")
    with pytest.raises(tpsim.ScenarioError, match="needs `nodes.placement`"):
        tpsim.Scenario(text)
    text = chain().replace('spacing = "100m"', 'area = ["1km", "1km"]')
    with pytest.raises(tpsim.ScenarioError, match="does not apply to placement kind"):
        tpsim.Scenario(text)


def test_uniform_placement_is_reproducible_and_differs_between_runs():
    text = chain(n=20).replace('{ kind = "grid", columns = 20, spacing = "100m" }', '{ kind = "uniform", area = ["600m", "600m"] }')
    a = tpsim.run(tpsim.Scenario(text), runs=3, seed=4).flows
    b = tpsim.run(tpsim.Scenario(text), runs=3, seed=4).flows
    assert a.equals(b)
    assert a["delay_mean_s"].n_unique() > 1 or a["rx_packets"].n_unique() > 1


def test_cli_runs_a_wireless_scenario(tmp_path):
    p = cli("run", str(SCENARIOS / "example-wifi-chain.toml"), "-o", str(tmp_path / "o"), "--runs", "1", "--no-report")
    assert p.returncode == 0, p.stderr


@pytest.mark.parametrize(
    "radio, key, what",
    [
        ('tx_power = "0W"', "radio.tx_power", "greater than 0"),
        ('rx_threshold = "1W"', "radio.rx_threshold", "no link could exist"),
        ('rts_threshold = "-1B"', "radio.rts_threshold", "negative"),
        ('data_rate = "54Mbps"', "radio.data_rate", "not a rate of this standard"),
        ('error_model = "ber"', "radio.error_model", 'applies to reception = "sinr"'),
        ('reception = "sinr"\nerror_model = "per"', "radio.error_model", "ber"),
        ('reception = "sinr"\nerror_model = "ber"\npreamble_detection_db = nan', "radio.preamble_detection_db", "finite"),
        ('reception = "sinr"\npreamble_detection_db = 3.0', "radio.preamble_detection_db", 'applies to error_model = "ber"'),
        ('reception = "sinr"\npreamble_detection_window = "4us"', "radio.preamble_detection_window", 'applies to error_model = "ber"'),
        ('preamble_detection_window = "4us"', "radio.preamble_detection_window", 'applies to reception = "sinr"'),
        ('reception = "sinr"\nstandard = "802.11a"\nerror_model = "ber"', "radio.error_model", "802.11b rates only"),
        ('queue_max_delay = "0s"', "radio.queue_max_delay", "greater than 0"),
        ('queue = 50\n[arp]\npending_queue = 0', "arp.pending_queue", "at least 1"),
        ('queue = 50\n[arp]\nwait_reply_timeout = "0s"', "arp.wait_reply_timeout", "greater than 0"),
        ('queue = 50\n[arp]\ndead_timeout = "0s"', "arp.dead_timeout", "greater than 0"),
        ('queue = 50\n[arp]\npreset = "ns4"', "arp.preset", "ns2"),
        ('queue = 50\n[arp]\nlearn = "all"', "arp.learn", "overheard"),
        ('queue = 50\n[arp]\npending = 3', "arp.pending", "pending_queue"),
    ],
)
def test_more_radio_errors(radio, key, what):
    with pytest.raises(tpsim.ScenarioError) as e:
        tpsim.Scenario(chain(radio=radio))
    d = e.value.diagnostics[0]
    assert d["path"] == key and what in d["message"], e.value.diagnostics


def test_arp_needs_a_radio():
    with pytest.raises(tpsim.ScenarioError) as e:
        tpsim.Scenario(one_link(extra="[arp]"))
    d = e.value.diagnostics[0]
    assert d["path"] == "arp" and "needs a radio" in d["message"], e.value.diagnostics


@pytest.mark.parametrize("preset", ["ns3", "ns2", "rfc"])
def test_arp_frames_show_in_the_network_table(preset):
    res = tpsim.run(tpsim.Scenario(chain(n=3, spacing="200m") + f'\n[arp]\npreset = "{preset}"\n'))
    net = res.network.row(0, named=True)
    assert (net["arp_requests"], net["arp_replies"], net["drops_arp"]) == (2, 2, 0)
    assert res.flows["pdr"][0] == 1.0


@pytest.mark.parametrize(
    "routing, key, ok",
    [
        ('protocol = "aodv"\npreset = "ns3"', "", True),
        ('protocol = "olsr"\npreset = "ns3"', "routing.preset", False),
        ('protocol = "aodv"\nhello = false', "", True),
        ('protocol = "oracle"\njitter = "5ms"', "routing.jitter", False),
        ('protocol = "static"\nhello = true', "routing.hello", False),
    ],
)
def test_routing_keys_apply_to_their_protocols(routing, key, ok):
    text = chain(n=3) + f"\n[routing]\n{routing}\n"
    if ok:
        assert tpsim.run(tpsim.Scenario(text)).flows["rx_packets"][0] > 0
        return
    with pytest.raises(tpsim.ScenarioError) as e:
        tpsim.Scenario(text)
    d = e.value.diagnostics[0]
    assert d["path"] == key and "does not apply to routing protocol" in d["message"], e.value.diagnostics


def test_radio_interface_queues_have_a_time_series():
    res = tpsim.run(SCENARIOS / "example-wifi-chain.toml", runs=1, set=["flows.0.app.rate=400kbps"])
    q = res.timeseries.filter(
        (pl.col("series") == "queue_packets") & (pl.col("flows.0.transport") == "udp") & (pl.col("flows.0.dst") == 4)
    )
    assert q["link"].null_count() == q.height
    assert sorted(q["node"].unique().to_list()) == [0, 1, 2, 3, 4]
    # At 400 kbit/s over 4 hops the source's queue fills; the destination's stays empty.
    by_node = q.group_by("node").agg(pl.col("value").mean()).sort("node")["value"].to_list()
    assert by_node[0] > 1.0 and by_node[4] == 0.0
