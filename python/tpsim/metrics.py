"""Short definitions of every result column, for reports and ``tpsim plot``.

The full definitions are in docs/metrics.md; a test checks that every column the engine
produces has an entry here and a row there.
"""

from __future__ import annotations

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
    "rto_s": ("s", "the sender's retransmission timeout at the end of the run, without backoff (TCP)"),
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
    "routing_drops": ("packets", "routing control packets dropped"),
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


#: Time series of TCP senders (binned output, sampled at the start of each bin).
TCP_SERIES = {"cwnd_bytes": "bytes", "ssthresh_bytes": "bytes", "srtt_s": "s", "pipe_bytes": "bytes", "w_max_bytes": "bytes",
              "cwnd_packets": "packets", "ssthresh_packets": "packets"}

#: Metrics drawn for every report (the others: ``tpsim plot DIR --metric M``).
HEADLINE_FLOW_METRICS = ["goodput_kbps", "pdr", "delay_mean_s", "delay_p95_s", "jitter_ipdv_s", "segment_loss_rate"]
HEADLINE_NETWORK_METRICS = [
    "mac_frames",
    "mac_load",
    "normalized_routing_load",
    "routing_packets",
    "energy_consumed_j_mean",
    "drops_queue",
    "drops_mac_retry",
    "drops_no_route",
    "drops_link_break",
]


def label(metric: str) -> str:
    """Axis label: the column name with its unit."""
    unit = METRICS.get(metric, ("", ""))[0]
    return f"{metric} [{unit}]" if unit else metric
