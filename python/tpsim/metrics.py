"""Short definitions of every result column, for reports and ``tpsim plot``.

The full definitions are in docs/metrics.md; a test checks that every column the engine
produces has an entry here and a row there.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional, Sequence

#: column -> (unit, definition)
METRICS: dict[str, tuple[str, str]] = {
    "tx_packets": ("messages", "messages the sending application handed to the transport"),
    "tx_bytes": ("bytes", "bytes the sending application handed to the transport"),
    "rx_packets": ("messages", "unique messages delivered to the receiving application"),
    "rx_bytes": ("bytes", "unique bytes delivered to the receiving application"),
    "pdr": ("ratio", "rx_packets / tx_packets"),
    "loss_rate": ("ratio", "1 - pdr"),
    "goodput_kbps": ("kbit/s", "bytes delivered within the active window * 8 / 1000 / window (first send to the earliest of stop and last byte delivered)"),
    "delay_mean_s": ("s", "mean of delivery time - time the application handed the message to the transport"),
    "delay_p50_s": ("s", "nearest-rank median of the message delays"),
    "delay_p95_s": ("s", "nearest-rank 95th percentile of the message delays"),
    "delay_max_s": ("s", "largest message delay"),
    "net_delay_mean_s": ("s", "mean of delivery time - first transmission of the message's first byte"),
    "segment_loss_rate": ("ratio", "1 - transport packets received / transport packets sent"),
    "jitter_ipdv_s": ("s", "mean |D_i - D_(i-1)| of consecutive delivered messages' one-way delays (RFC 3393 IPDV)"),
    "jitter_rfc3550_s": ("s", "RFC 3550 section 6.4.1 interarrival jitter estimate at the end of the run"),
    "rtt_mean_s": ("s", "mean of the transport's RTT samples (reliable transports)"),
    "retransmissions": ("packets", "transport-level retransmitted packets"),
    "rto_timeouts": ("events", "retransmission-timer expiries that retransmitted (TCP, RFC 6298 section 5.4)"),
    "fast_retransmits": ("events", "fast retransmits after duplicate ACKs (TCP, RFC 5681 section 3.2)"),
    "fast_retransmit_chunks": ("chunks", "DATA chunks the sender marked for fast retransmission (SCTP, RFC 9260 section 7.2.4)"),
    "hol_blocking_mean_s": ("s", "mean time an ordered message waited, complete, in the receiver for earlier messages of its stream (SCTP head-of-line blocking)"),
    "hol_blocking_p95_s": ("s", "nearest-rank 95th percentile of that head-of-line blocking time (SCTP)"),
    "streams_used": ("streams", "streams on which the receiver delivered messages (SCTP)"),
    "abandoned_messages": ("messages", "messages the sender abandoned under its PR-SCTP policy (RFC 3758, RFC 7496)"),
    "failovers": ("events", "times new DATA moved from the primary path to an alternate (multi-homed SCTP, RFC 9260 section 6.4.1)"),
    "pf_entries": ("events", "times a peer address became potentially failed (multi-homed SCTP with sctp.potentially_failed, RFC 7829)"),
    "failover_time_s": ("s", "from the last fault before it to the first new DATA acknowledged on the alternate (multi-homed SCTP)"),
    "failover_acked_at_s": ("s", "when new DATA first sent to the alternate after the last failover was acknowledged (multi-homed SCTP)"),
    **{f"path{k}_data_bytes": ("bytes", f"user bytes of DATA sent to the peer's address {k}, retransmissions included (multi-homed SCTP)")
       for k in range(5)},
    "rto_s": ("s", "the sender's retransmission timeout at the end of the run, without backoff (TCP, SCTP, CCID 2, stop-and-wait)"),
    "gave_up": ("connections", "1 if the TCP sender abandoned the connection (tcp.syn_attempts / tcp.data_retries)"),
    "ack_packets": ("packets", "pure acknowledgement/feedback packets sent by the receiver"),
    "ack_overhead": ("ratio", "ack_packets / tx_segments"),
    "tx_segments": ("packets", "transport packets sent with this direction's data, retransmissions included"),
    "rx_segments": ("packets", "transport packets of this direction's data that reached the destination transport, each once"),
    "rx_duplicate_segments": ("packets", "later arrivals of packets already counted in rx_segments (another copy)"),
    "hops_mean": ("hops", "mean number of links the received transport packets crossed"),
    "dropped_segments": ("packets", "this direction's data packets lost in the network (no copy arrived or is left)"),
    "in_flight_segments": ("packets", "this direction's data packets not arrived with a copy still in the network at the end"),
    "padding_bytes": ("bytes", "ns-2 TCP agents only: bytes data packets carried beyond the application's (whole packets per write)"),
    "buffered_packets": ("messages", "messages accepted by the transport but not sent at the end"),
    "tx_ip_bytes": ("bytes", "IP bytes of the data packets sent (tx_segments of them)"),
    "throughput_ip_kbps": ("kbit/s", "ns-2 style: IP bytes of the data packets that arrived by the stop * 8 / 1000 / goodput's window"),
    "packet_delay_mean_s": ("s", "ns-2 style: mean over arrived data packets of arrival - that packet's own send"),
    "queue_delay_mean_s": ("s", "mean over arrived data packets of the time each waited in interface queues, every hop summed"),
    "queue_delay_p95_s": ("s", "nearest-rank 95th percentile of those per-packet queueing delays"),
    "packet_size_min_b": ("bytes", "smallest IP size of the data packets sent"),
    "packet_size_max_b": ("bytes", "largest IP size of the data packets sent"),
    "packet_size_mean_b": ("bytes", "tx_ip_bytes / tx_segments"),
    "send_queue_drops": ("messages", "messages sent that the transport dropped because its send queue was full (TFRC, DCCP)"),
    "x_recv_bps": ("bit/s", "TFRC receiver: the receive rate X_recv it last reported (RFC 5348 section 6.2)"),
    "loss_events": ("events", "TFRC receiver: loss events detected (RFC 5348 section 5.2)"),
    "duplicate_packets": ("packets", "TFRC receiver: data packets received more than once"),
    "nofeedback_expiries": ("events", "TFRC sender: expiries of the no-feedback timer (RFC 5348 section 4.4)"),
    "dccp_lost_packets": ("packets", "data packets the DCCP sender's CCID declared lost"),
    "dccp_syncs": ("packets", "DCCP Sync packets sent (RFC 4340 section 7.5.4)"),
    "dccp_ack_ratio": ("ratio", "DCCP CCID 2 Ack Ratio at the end of the run (RFC 4341 section 6.1.2)"),
    "routing_packets": ("packets", "routing control packets transmitted, every hop counted"),
    "normalized_routing_load": ("ratio", "routing_packets / data_delivered"),
    "mac_frames": ("frames", "link-layer frames transmitted (point-to-point: every packet put on a wire)"),
    "mac_load": ("ratio", "mac_frames / data_delivered"),
    "drops_queue": ("packets", "data packets dropped by a full interface queue"),
    "drops_mac_retry": ("packets", "data packets dropped at the unicast retry limit"),
    "drops_link_break": ("packets", "data packets flushed when their next hop broke"),
    "drops_no_route": ("packets", "data packets without a route"),
    "drops_ttl": ("packets", "data packets whose TTL reached zero"),
    "drops_energy": ("packets", "data packets lost to a depleted node"),
    "drops_link_error": ("packets", "data packets lost to a link error model"),
    "drops_queue_timeout": ("packets", "data packets dropped after waiting longer than queue_max_delay"),
    "drops_arp": ("packets", "data packets dropped by ARP: unresolved next hop, or its waiting queue full"),
    "drops_link_down": ("packets", "data packets lost to a point-to-point link that is down (fault events)"),
    "drops_interface_down": ("packets", "data packets lost to an interface that is down (fault events)"),
    "drops_node_down": ("packets", "data packets lost to a node that is down (fault events)"),
    "drops_aqm_early": ("packets", "data packets a queue discipline dropped early at random (RED, PIE)"),
    "drops_aqm_forced": ("packets", "data packets RED dropped with its average queue in the forced-drop region"),
    "drops_aqm_sojourn": ("packets", "data packets CoDel or FQ-CoDel dropped for their queueing delay"),
    "ecn_marks": ("packets", "packets a queue discipline marked Congestion Experienced (RFC 3168) instead of dropping"),
    "routing_drops": ("packets", "routing control packets dropped"),
    "total_drops": ("packets", "every drop recorded: the drops_* columns + dropped_copies + routing_drops"),
    "arp_requests": ("packets", "ARP requests broadcast (scenarios with [arp])"),
    "arp_replies": ("packets", "ARP replies sent (scenarios with [arp])"),
    "routing_rreq": ("messages", "AODV RREQs sent, every hop counted"),
    "routing_rrep": ("messages", "AODV RREPs sent, every hop counted"),
    "routing_rerr": ("messages", "AODV RERRs sent, every hop counted"),
    "routing_rrep_ack": ("messages", "AODV RREP-ACKs sent"),
    "routing_hello": ("messages", "HELLO messages sent (AODV or OLSR)"),
    "routing_tc": ("messages", "OLSR TC messages sent, forwarding included"),
    "route_discovery_latency_s": ("s", "mean time from the start of an AODV route discovery to its route"),
    "route_discoveries_failed": ("discoveries", "AODV route discoveries that gave up after their retries"),
    "jain_fairness": ("index", "Jain's index of the flow directions' goodput"),
    "data_delivered": ("packets", "data packets received by destination transports"),
    "events": ("events", "events executed by the engine"),
    "energy_consumed_j_mean": ("J", "radio energy consumed per node, mean over nodes (energy model)"),
    "energy_consumed_j_total": ("J", "radio energy consumed by all nodes (energy model)"),
    "first_node_death_s": ("s", "when the first node ran out of energy (empty: none did)"),
    "dead_nodes": ("nodes", "nodes that ran out of energy"),
    "mac_data_frames": ("frames", "802.11 DATA frames sent (retransmissions and broadcasts included)"),
    "mac_ack_frames": ("frames", "802.11 ACK frames sent"),
    "mac_rts_frames": ("frames", "802.11 RTS frames sent"),
    "mac_cts_frames": ("frames", "802.11 CTS frames sent"),
    "mac_retransmissions": ("frames", "802.11 DATA frames sent with the Retry bit"),
    "mac_ack_timeouts": ("events", "ACKs that did not come (IEEE 802.11-2020 10.3.2.12)"),
    "mac_cts_timeouts": ("events", "CTSs that did not come"),
    "mac_rx_errors": ("frames", "receptions that could not be decoded (collisions, weak frames)"),
    "broadcasts_sent": ("packets", "one-hop broadcast datagrams sent ([beacons])"),
    "broadcast_receptions": ("packets", "receptions of those broadcasts, one per receiving node"),
    "broadcast_missed": ("receptions", "broadcast data receptions that did not happen at radios in decode range"),
    "dropped_copies": ("packets", "drops of a packet's copy while another copy arrived or was under way (not losses)"),
}

#: Metrics that are fractions, in [0, 1]; every other metric of :data:`METRICS` is a count,
#: a time, a rate, an energy or a ratio of counts, bounded below by 0.
UNIT_INTERVAL = frozenset({"pdr", "loss_rate", "segment_loss_rate", "jain_fairness"})


def bounds(metric: str) -> "tuple[float, float] | None":
    """The range a metric's values lie in: (0, 1) for fractions, (0, inf) for the other
    metrics of :data:`METRICS`, ``None`` for a column tpsim does not know (no bound assumed)."""
    if metric in UNIT_INTERVAL:
        return (0.0, 1.0)
    if metric in METRICS:
        return (0.0, float("inf"))
    return None


#: Time series of transport senders (congestion state, binned output, sampled at the start of each bin).
TCP_SERIES = {"cwnd_bytes": "bytes", "ssthresh_bytes": "bytes", "srtt_s": "s", "pipe_bytes": "bytes", "w_max_bytes": "bytes",
              "cwnd_packets": "packets", "ssthresh_packets": "packets", "x_bps": "bit/s", "p": "ratio",
              "pacing_rate_bps": "bit/s",
              "bbr_state": "0 Startup, 1 Drain, 2 ProbeBW (v3: DOWN), 3 ProbeRTT, 4 CRUISE, 5 REFILL, 6 UP",
              "btlbw_bps": "bit/s", "rtprop_s": "s", "inflight_hi_bytes": "bytes", "inflight_lo_bytes": "bytes",
              "bwe_bps": "bit/s", "base_rtt_s": "s"}

#: Metrics drawn for every report (the others: ``tpsim plot DIR --metric M``).
HEADLINE_FLOW_METRICS = ["goodput_kbps", "pdr", "delay_mean_s", "delay_p95_s", "jitter_ipdv_s", "segment_loss_rate"]

#: The headline flow metrics when every flow is a bulk transfer: its message delay and PDR
#: mostly measure the writer's wait for send-buffer space and the messages still queued at
#: the end, so goodput and the per-packet delay lead, the message-level metrics follow.
HEADLINE_BULK_FLOW_METRICS = ["goodput_kbps", "packet_delay_mean_s", "segment_loss_rate", "jitter_ipdv_s", "pdr",
                              "delay_mean_s"]
HEADLINE_NETWORK_METRICS = [
    "mac_frames",
    "mac_load",
    "normalized_routing_load",
    "routing_packets",
    "energy_consumed_j_mean",
    "total_drops",
    "drops_queue",
    "drops_mac_retry",
    "drops_no_route",
    "drops_link_break",
]


#: Time series (``timeseries.parquet``) that are not metric columns: series -> unit.
SERIES_UNITS: dict[str, str] = {"queue_packets": "packets", "queue_drops": "packets", "queue_marks": "packets",
                                "rx_bytes_cumulative": "bytes", **TCP_SERIES}
#: The series of a queue (a link direction's or a radio's), keyed by link or node, not flow.
QUEUE_SERIES = ("queue_packets", "queue_drops", "queue_marks")

#: Human names of metrics and series, for axis labels and tables (the unit is added from
#: :data:`METRICS`; see :func:`tpsim.labels.metric_display`).
NAMES: dict[str, str] = {
    "tx_packets": "messages sent",
    "tx_bytes": "bytes sent",
    "rx_packets": "messages delivered",
    "rx_bytes": "bytes delivered",
    "pdr": "packet delivery ratio",
    "loss_rate": "message loss rate",
    "goodput_kbps": "goodput",
    "delay_mean_s": "mean end-to-end delay",
    "delay_p50_s": "median end-to-end delay",
    "delay_p95_s": "95th-percentile end-to-end delay",
    "delay_max_s": "maximum end-to-end delay",
    "net_delay_mean_s": "mean network delay",
    "segment_loss_rate": "segment loss rate",
    "jitter_ipdv_s": "jitter (IPDV)",
    "jitter_rfc3550_s": "jitter (RFC 3550)",
    "rtt_mean_s": "mean RTT",
    "retransmissions": "retransmitted packets",
    "rto_timeouts": "retransmission timeouts",
    "fast_retransmits": "fast retransmits",
    "rto_s": "retransmission timeout",
    "gave_up": "abandoned connections",
    "ack_packets": "acknowledgement packets",
    "ack_overhead": "ACK overhead",
    "tx_segments": "transport packets sent",
    "rx_segments": "transport packets received",
    "rx_duplicate_segments": "duplicate transport packets",
    "hops_mean": "mean hop count",
    "dropped_segments": "transport packets lost",
    "in_flight_segments": "transport packets in flight at the end",
    "padding_bytes": "padding",
    "buffered_packets": "messages left in the send buffer",
    "tx_ip_bytes": "IP bytes sent",
    "throughput_ip_kbps": "throughput (IP bytes)",
    "packet_delay_mean_s": "mean packet delay",
    "queue_delay_mean_s": "mean queueing delay",
    "queue_delay_p95_s": "95th-percentile queueing delay",
    "packet_size_min_b": "smallest packet",
    "packet_size_max_b": "largest packet",
    "packet_size_mean_b": "mean packet size",
    "rx_bytes_cumulative": "bytes delivered (cumulative)",
    "routing_packets": "routing packets",
    "normalized_routing_load": "normalized routing load",
    "mac_frames": "link-layer frames",
    "mac_load": "MAC load",
    "drops_queue": "queue drops",
    "drops_mac_retry": "MAC retry-limit drops",
    "drops_link_break": "link-break drops",
    "drops_no_route": "no-route drops",
    "drops_ttl": "TTL drops",
    "drops_energy": "energy-depletion drops",
    "drops_link_error": "link-error drops",
    "drops_queue_timeout": "queue-timeout drops",
    "drops_arp": "ARP drops",
    "drops_link_down": "link-down drops",
    "drops_interface_down": "interface-down drops",
    "drops_node_down": "node-down drops",
    "drops_aqm_early": "AQM early drops",
    "drops_aqm_forced": "RED forced drops",
    "drops_aqm_sojourn": "CoDel delay drops",
    "ecn_marks": "ECN marks",
    "routing_drops": "routing packets dropped",
    "total_drops": "total drops",
    "jain_fairness": "Jain's fairness index",
    "data_delivered": "data packets delivered",
    "events": "engine events",
    "energy_consumed_j_mean": "mean energy consumed per node",
    "energy_consumed_j_total": "total energy consumed",
    "first_node_death_s": "first node death",
    "dead_nodes": "dead nodes",
    "route_discovery_latency_s": "route discovery latency",
    "queue_packets": "queue length",
    "queue_drops": "queue discipline drops per bin",
    "queue_marks": "ECN marks per bin",
    "cwnd_bytes": "congestion window",
    "ssthresh_bytes": "slow-start threshold",
    "srtt_s": "smoothed RTT",
    "pipe_bytes": "bytes in flight (pipe)",
    "w_max_bytes": "CUBIC W_max",
    "pacing_rate_bps": "pacing rate",
    "bbr_state": "BBR state",
    "btlbw_bps": "BBR bottleneck bandwidth BtlBw",
    "rtprop_s": "BBR round-trip propagation time RTprop",
    "inflight_hi_bytes": "BBR v3 inflight_hi (inflight_longterm)",
    "inflight_lo_bytes": "BBR v3 inflight_lo (inflight_shortterm)",
    "bwe_bps": "Westwood+ bandwidth estimate",
    "base_rtt_s": "Vegas BaseRTT",
    "cwnd_packets": "congestion window",
    "ssthresh_packets": "slow-start threshold",
    "fast_retransmit_chunks": "fast-retransmitted chunks",
    "abandoned_messages": "abandoned messages",
    "failovers": "failovers",
    "failover_time_s": "time to failover",
    "pf_entries": "potentially-failed entries",
    "hol_blocking_mean_s": "mean head-of-line blocking",
    "hol_blocking_p95_s": "95th-percentile head-of-line blocking",
    "streams_used": "streams used",
    "send_queue_drops": "send-queue drops",
    "x_recv_bps": "TFRC receive rate X_recv",
    "loss_events": "TFRC loss events",
    "duplicate_packets": "duplicate TFRC packets",
    "nofeedback_expiries": "TFRC no-feedback timer expiries",
    "dccp_lost_packets": "DCCP packets declared lost",
    "dccp_syncs": "DCCP Syncs",
    "dccp_ack_ratio": "DCCP Ack Ratio",
    "x_bps": "allowed sending rate X",
    "p": "loss event rate p",
    "arp_requests": "ARP requests",
    "arp_replies": "ARP replies",
    "routing_rreq": "AODV RREQs",
    "routing_rrep": "AODV RREPs",
    "routing_rerr": "AODV RERRs",
    "routing_rrep_ack": "AODV RREP-ACKs",
    "routing_hello": "HELLO messages",
    "routing_tc": "OLSR TC messages",
    "route_discoveries_failed": "failed route discoveries",
    "mac_data_frames": "802.11 DATA frames",
    "mac_ack_frames": "802.11 ACK frames",
    "mac_rts_frames": "802.11 RTS frames",
    "mac_cts_frames": "802.11 CTS frames",
    "mac_retransmissions": "802.11 retransmissions",
    "mac_ack_timeouts": "802.11 ACK timeouts",
    "mac_cts_timeouts": "802.11 CTS timeouts",
    "mac_rx_errors": "undecodable receptions",
    "broadcasts_sent": "broadcasts sent",
    "broadcast_receptions": "broadcast receptions",
    "broadcast_missed": "missed broadcast receptions",
    "dropped_copies": "dropped copies",
}


def unit_of(metric: str) -> str:
    """The unit of a metric or series ("" if unknown)."""
    if metric in METRICS:
        return METRICS[metric][0]
    return SERIES_UNITS.get(metric, "")


def metric_name(metric: str) -> str:
    """A metric's human name (``goodput_kbps`` -> ``goodput``); a column the registry does not
    know (a new transport's, say ``x_recv_bps``) keeps its raw name, so that it can be found in
    the tables."""
    return NAMES.get(metric, metric)


def label(metric: str) -> str:
    """Axis label: the metric's human name with its unit (``goodput (kbit/s)``), as
    :func:`metric_display` writes it for values in seconds."""
    return metric_display(metric, [1.0]).label


#: Seconds metrics are drawn in the largest of these units in which the largest value is >= 1.
_TIME_LADDER = [("s", 1.0), ("ms", 1e-3), ("µs", 1e-6)]
#: bit/s series are drawn in the largest of these units in which the largest value is >= 1.
_RATE_LADDER = [("Gbit/s", 1e9), ("Mbit/s", 1e6), ("kbit/s", 1e3)]
#: Metrics shown in percent.
_PERCENT_UNITS = {"ratio"}
_PERCENT_METRICS = {"pdr", "loss_rate", "segment_loss_rate"}


@dataclass(frozen=True)
class MetricDisplay:
    """How a metric is drawn: ``label`` (human name and unit) and the ``scale`` its values are
    multiplied by for that unit."""

    label: str
    unit: str
    scale: float


def metric_display(metric: str, values: Sequence[Optional[float]] = ()) -> MetricDisplay:
    """The axis label and scale of a metric (or a time series): seconds become ms (or µs)
    when the values are below 1 s, fractions of the unit interval become percent, kbit/s
    stays, bit/s series become kbit/s, Mbit/s or Gbit/s; byte series in kB above 10 kB."""
    unit = unit_of(metric)
    name = metric_name(metric)
    finite = [abs(v) for v in values if v is not None and isinstance(v, (int, float)) and math.isfinite(v)]
    top = max(finite) if finite else 0.0
    if unit == "s":
        u, f = next(((u, f) for u, f in _TIME_LADDER if top >= f), ("ms", 1e-3) if top == 0 else _TIME_LADDER[-1])
        return MetricDisplay(f"{name} ({u})", u, 1.0 / f)
    if metric in _PERCENT_METRICS:
        return MetricDisplay(f"{name} (%)", "%", 100.0)
    if unit in ("packets", "messages", "frames", "events", "hops", "nodes", "connections", "discoveries", "receptions"):
        return MetricDisplay(f"{name} ({unit})", unit, 1.0)
    if unit == "bytes" and top >= 1e4:
        return MetricDisplay(f"{name} (kB)", "kB", 1e-3)
    if unit == "bytes":
        return MetricDisplay(f"{name} (B)", "B", 1.0)
    if unit == "bit/s":
        u, f = next(((u, f) for u, f in _RATE_LADDER if top >= f), ("bit/s", 1.0))
        return MetricDisplay(f"{name} ({u})", u, 1.0 / f)
    if unit == "index":
        return MetricDisplay(f"{name} (0–1)", "0–1", 1.0)
    if unit == "ratio":
        return MetricDisplay(f"{name} (ratio)", "ratio", 1.0)
    if unit:
        return MetricDisplay(f"{name} ({unit})", unit, 1.0)
    return MetricDisplay(name, "", 1.0)
