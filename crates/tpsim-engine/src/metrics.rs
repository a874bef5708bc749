//! Per-flow statistics and the result rows (definitions: docs/metrics.md).

use tpsim_core::SimTime;

/// Drop reasons. Every dropped packet has exactly one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(usize)]
pub enum DropReason {
    /// Interface queue full.
    Queue = 0,
    /// Unicast retry limit reached (802.11).
    MacRetry = 1,
    /// Flushed from a queue when its next hop was declared broken.
    LinkBreak = 2,
    /// No route (or route discovery failed / buffer timeout).
    NoRoute = 3,
    /// TTL reached zero.
    Ttl = 4,
    /// Node out of energy.
    Energy = 5,
    /// Lost to a link's error model (Bernoulli loss or explicit drop list).
    LinkError = 6,
    /// Waited longer than the radio's `queue_max_delay` in its interface queue.
    QueueTimeout = 7,
    /// Dropped by ARP: its next hop's address did not resolve, or more packets waited for it
    /// than the cache holds (scenarios with `[arp]`).
    Arp = 8,
    /// Handed to, queued at, on the wire of or propagating on a point-to-point link that is
    /// down (`[[events]]` `link_down`).
    LinkDown = 9,
    /// Handed to, queued at or being sent by an interface that is down, or arriving at one
    /// (`interface_down`).
    InterfaceDown = 10,
    /// Sent by, queued at or arriving at a node that is down (`node_down`).
    NodeDown = 11,
    /// A random early drop by a queue discipline (RED below its forced-drop region, PIE).
    AqmEarly = 12,
    /// RED's average queue in its forced-drop region.
    AqmForced = 13,
    /// CoDel's (or FQ-CoDel's) control law: the queueing delay stayed above target.
    AqmSojourn = 14,
}

/// Number of drop reasons.
pub const N_DROP_REASONS: usize = 15;

impl DropReason {
    /// All reasons, in column order.
    pub const ALL: [DropReason; N_DROP_REASONS] = [
        DropReason::Queue,
        DropReason::MacRetry,
        DropReason::LinkBreak,
        DropReason::NoRoute,
        DropReason::Ttl,
        DropReason::Energy,
        DropReason::LinkError,
        DropReason::QueueTimeout,
        DropReason::Arp,
        DropReason::LinkDown,
        DropReason::InterfaceDown,
        DropReason::NodeDown,
        DropReason::AqmEarly,
        DropReason::AqmForced,
        DropReason::AqmSojourn,
    ];
    /// The column name (`drops_<reason>`).
    pub fn column(self) -> &'static str {
        match self {
            DropReason::Queue => "drops_queue",
            DropReason::MacRetry => "drops_mac_retry",
            DropReason::LinkBreak => "drops_link_break",
            DropReason::NoRoute => "drops_no_route",
            DropReason::Ttl => "drops_ttl",
            DropReason::Energy => "drops_energy",
            DropReason::LinkError => "drops_link_error",
            DropReason::QueueTimeout => "drops_queue_timeout",
            DropReason::Arp => "drops_arp",
            DropReason::LinkDown => "drops_link_down",
            DropReason::InterfaceDown => "drops_interface_down",
            DropReason::NodeDown => "drops_node_down",
            DropReason::AqmEarly => "drops_aqm_early",
            DropReason::AqmForced => "drops_aqm_forced",
            DropReason::AqmSojourn => "drops_aqm_sojourn",
        }
    }
}

/// Statistics of one flow direction, updated on the hot path with plain arithmetic.
#[derive(Default)]
pub struct DirStats {
    pub tx_packets: u64,
    pub tx_bytes: u64,
    pub rx_packets: u64,
    pub rx_bytes: u64,
    pub first_send: Option<SimTime>,
    pub last_rx: SimTime,
    /// Delays of delivered messages, ns, in delivery order.
    pub delays_ns: Vec<u64>,
    pub delay_sum_ns: u128,
    pub net_delay_sum_ns: u128,
    pub ipdv_sum_ns: u128,
    pub prev_delay_ns: Option<u64>,
    /// RFC 3550 §6.4.1 jitter estimate, in ns (f64 state as the RFC's running average).
    pub jitter_rfc3550_ns: f64,
    /// Unique-delivery bitmap indexed by message id.
    pub seen: Vec<u64>,
}

impl DirStats {
    /// Marks message `id` delivered; false if it already was (a duplicate).
    #[inline]
    pub fn first_delivery(&mut self, id: u64) -> bool {
        set_bit(&mut self.seen, id)
    }

    /// Records a delivery of `len` bytes with end-to-end delay `delay_ns` and network delay
    /// `net_delay_ns` at time `now`.
    #[inline]
    pub fn on_delivery(&mut self, now: SimTime, len: u32, delay_ns: u64, net_delay_ns: u64) {
        self.rx_packets += 1;
        self.rx_bytes += len as u64;
        self.last_rx = now;
        self.delays_ns.push(delay_ns);
        self.delay_sum_ns += delay_ns as u128;
        self.net_delay_sum_ns += net_delay_ns as u128;
        if let Some(prev) = self.prev_delay_ns {
            let d = delay_ns.abs_diff(prev);
            self.ipdv_sum_ns += d as u128;
            // RFC 3550 §6.4.1: J += (|D(i-1,i)| - J) / 16.
            self.jitter_rfc3550_ns += (d as f64 - self.jitter_rfc3550_ns) / 16.0;
        }
        self.prev_delay_ns = Some(delay_ns);
    }
}

/// Sets bit `i` of the growable bitmap `bits`; false if it was already set.
#[inline]
pub fn set_bit(bits: &mut Vec<u64>, i: u64) -> bool {
    let w = (i / 64) as usize;
    if w >= bits.len() {
        bits.resize(w + 1 + bits.len() / 2, 0);
    }
    let bit = 1u64 << (i % 64);
    let fresh = bits[w] & bit == 0;
    bits[w] |= bit;
    fresh
}

/// Whether bit `i` of `bits` is set.
#[inline]
pub fn bit(bits: &[u64], i: u64) -> bool {
    bits.get((i / 64) as usize).is_some_and(|w| w & (1u64 << (i % 64)) != 0)
}

/// Nearest-rank percentile: the smallest sample such that at least `p`% of the samples are
/// ≤ it (`sorted` ascending, non-empty).
pub fn nearest_rank(sorted: &[u64], p: f64) -> u64 {
    let n = sorted.len();
    let rank = libm::ceil(p / 100.0 * n as f64) as usize;
    sorted[rank.clamp(1, n) - 1]
}

/// Which flow direction a flows row is about: the table's first columns.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FlowKey {
    /// Flow index (scenario flows, then background flows).
    pub flow: u32,
    /// "fwd" or "rev" (the reverse direction of a two-way flow).
    pub direction: &'static str,
    /// Sending node.
    pub src: u32,
    /// Receiving node.
    pub dst: u32,
    /// Transport name (scenario spelling).
    pub transport: &'static str,
    /// Application kind.
    pub app: &'static str,
}

/// One row of the flows table (one flow direction of one run).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FlowRow {
    pub key: FlowKey,
    pub tx_packets: u64,
    pub tx_bytes: u64,
    pub rx_packets: u64,
    pub rx_bytes: u64,
    pub pdr: Option<f64>,
    pub loss_rate: Option<f64>,
    pub goodput_kbps: Option<f64>,
    pub delay_mean_s: Option<f64>,
    pub delay_p50_s: Option<f64>,
    pub delay_p95_s: Option<f64>,
    pub delay_max_s: Option<f64>,
    pub net_delay_mean_s: Option<f64>,
    pub segment_loss_rate: Option<f64>,
    pub jitter_ipdv_s: Option<f64>,
    pub jitter_rfc3550_s: Option<f64>,
    pub rtt_mean_s: Option<f64>,
    pub retransmissions: u64,
    pub rto_timeouts: u64,
    pub fast_retransmits: u64,
    pub rto_s: Option<f64>,
    /// TCP: the sender abandoned the connection (`syn_attempts`/`data_retries`): 1, else 0.
    pub gave_up: u64,
    pub ack_packets: u64,
    pub ack_overhead: Option<f64>,
    /// Transport packets carrying this direction's data handed to IP (retransmissions too).
    pub tx_segments: u64,
    /// Of those, the packets that reached the destination transport (each counted once).
    pub rx_segments: u64,
    /// Arrivals of a packet that had already arrived (a copy that took another path, e.g. kept
    /// by AODV for a local repair after its next hop had received it): not in `rx_segments`.
    pub rx_duplicate_segments: u64,
    /// Mean number of hops (links crossed) of the received segments.
    pub hops_mean: Option<f64>,
    /// Packets none of whose copies arrived and none of which is left: lost in the network.
    pub dropped_segments: u64,
    /// Packets not arrived with a copy still queued, on a link or held at the end of the run.
    /// `tx_segments = rx_segments + dropped_segments + in_flight_segments` exactly.
    pub in_flight_segments: u64,
    pub buffered_packets: u64,
    /// IP bytes of the data packets sent (`tx_segments` of them, retransmissions included).
    pub tx_ip_bytes: u64,
    /// ns-2-style throughput: IP bytes of the data packets that arrived (first arrivals,
    /// by the application's stop) over goodput's window, kbit/s.
    pub throughput_ip_kbps: Option<f64>,
    /// ns-2-style delay: mean over arrived data packets of arrival − that packet's own send, s.
    pub packet_delay_mean_s: Option<f64>,
    /// Over the same arrived data packets: the time each waited in interface queues (every
    /// hop's queue discipline and device ring, or radio interface queue), mean and nearest-rank
    /// 95th percentile, s.
    pub queue_delay_mean_s: Option<f64>,
    pub queue_delay_p95_s: Option<f64>,
    /// Smallest, largest and mean IP size of the data packets sent, bytes (`None` if none).
    pub packet_size_min_b: Option<f64>,
    pub packet_size_max_b: Option<f64>,
    pub packet_size_mean_b: Option<f64>,
    /// Columns only this flow's transport has, (name, value): see
    /// [`tpsim_transport::TransportReport::extra`].
    pub extra: Vec<(&'static str, Option<f64>)>,
}

/// The network table's row of one run.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct NetworkRow {
    pub routing_packets: u64,
    pub normalized_routing_load: Option<f64>,
    pub mac_frames: u64,
    pub mac_load: Option<f64>,
    /// Data packets lost, by the reason of their (last copy's) drop: flow packets counted
    /// once per packet lost (as `dropped_segments`), packets of no flow direction (pure TCP
    /// ACKs, broadcasts) once per drop.
    pub drops: [u64; N_DROP_REASONS],
    /// Drops of a flow packet's copy while another copy arrived or is still under way (e.g. a
    /// frame received by its next hop whose ACK was lost, dropped at the retry limit): not a
    /// loss, so not in `drops`.
    pub dropped_copies: u64,
    /// Packets a queue discipline marked Congestion Experienced (RFC 3168), each mark counted.
    pub ecn_marks: u64,
    pub routing_drops: u64,
    /// ARP requests and replies sent (scenarios with `[arp]`; also in `mac_frames`).
    pub arp_requests: u64,
    pub arp_replies: u64,
    /// Control messages sent by type, in the order of `routing::CTRL_TYPES` (rreq, rrep,
    /// rerr, rrep_ack, hello, tc); every hop counted.
    pub routing_by_type: [u64; 6],
    /// Mean time from the start of a route discovery to its route, s (AODV).
    pub route_discovery_latency_s: Option<f64>,
    /// Route discoveries that gave up (AODV).
    pub route_discoveries_failed: u64,
    pub jain_fairness: Option<f64>,
    pub data_delivered: u64,
    pub events: u64,
    /// Mean and total energy consumed per node, J (scenarios with `[energy]`).
    pub energy_consumed_j_mean: Option<f64>,
    pub energy_consumed_j_total: Option<f64>,
    /// When the first node ran out of energy, s (`None`: none did).
    pub first_node_death_s: Option<f64>,
    /// Nodes that ran out of energy.
    pub dead_nodes: u64,
    /// 802.11 frames sent by type (DATA incl. retransmissions and broadcasts, ACK, RTS, CTS),
    /// DATA retransmissions, ACK and CTS timeouts, and receptions in error, summed over
    /// radios (zero without a radio).
    pub mac_data_frames: u64,
    pub mac_ack_frames: u64,
    pub mac_rts_frames: u64,
    pub mac_cts_frames: u64,
    pub mac_retransmissions: u64,
    pub mac_ack_timeouts: u64,
    pub mac_cts_timeouts: u64,
    pub mac_rx_errors: u64,
    /// One-hop broadcast datagrams sent (`[beacons]`).
    pub broadcasts_sent: u64,
    /// Their receptions, one per receiving node.
    pub broadcast_receptions: u64,
    /// Receptions of broadcast data packets that did not happen at a radio in decode range
    /// (power at or above the receive threshold): collisions, or the radio was busy.
    pub broadcast_missed: u64,
}

/// Long-format time series: one row per (series, owner, bin).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SeriesTable {
    /// "goodput_kbps", "delay_mean_s" or "queue_packets".
    pub series: Vec<&'static str>,
    /// Flow index (flow series) or `None`.
    pub flow: Vec<Option<u32>>,
    /// Link index (queue series of a link direction) or `None`.
    pub link: Vec<Option<u32>>,
    /// Node index (queue series of a radio interface) or `None`.
    pub node: Vec<Option<u32>>,
    /// "fwd" / "rev".
    pub direction: Vec<&'static str>,
    /// Start of the bin, s.
    pub time_s: Vec<f64>,
    /// The value (`None` where undefined, e.g. no delivery in a delay bin).
    pub value: Vec<Option<f64>>,
}

impl SeriesTable {
    /// Appends one row.
    #[allow(clippy::too_many_arguments)]
    pub fn push(
        &mut self,
        series: &'static str,
        flow: Option<u32>,
        link: Option<u32>,
        node: Option<u32>,
        direction: &'static str,
        time_s: f64,
        value: Option<f64>,
    ) {
        self.series.push(series);
        self.flow.push(flow);
        self.link.push(link);
        self.node.push(node);
        self.direction.push(direction);
        self.time_s.push(time_s);
        self.value.push(value);
    }
}

/// Everything one run produces.
#[derive(Clone, Debug)]
pub struct RunResult {
    pub flows: Vec<FlowRow>,
    pub network: NetworkRow,
    pub timeseries: SeriesTable,
    /// The per-packet event trace (`[output] trace = true`; `None` otherwise), columns as in
    /// [`crate::pkttrace::PacketTrace::table`].
    pub trace: Option<crate::table::Table>,
    /// The network movie's trace (`[output] animation = true`; `None` otherwise), columns as
    /// in [`crate::movie::MovieTrace::table`].
    pub animation: Option<crate::table::Table>,
    /// The per-ACK samples (`[output] ack_samples = true`; `None` otherwise), columns as in
    /// [`crate::acktrace::AckTrace::table`].
    pub acks: Option<crate::table::Table>,
    /// Wall-clock seconds spent in the event loop (not part of the deterministic tables).
    pub engine_seconds: f64,
}

/// Jain's fairness index (Σx)² / (n·Σx²) of `xs` (`None` if empty or all zero).
pub fn jain(xs: &[f64]) -> Option<f64> {
    if xs.is_empty() {
        return None;
    }
    let s: f64 = xs.iter().sum();
    let s2: f64 = xs.iter().map(|x| x * x).sum();
    if s2 == 0.0 {
        None
    } else {
        Some(s * s / (xs.len() as f64 * s2))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_matches_definition() {
        let v = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10];
        assert_eq!(nearest_rank(&v, 50.0), 5);
        assert_eq!(nearest_rank(&v, 95.0), 10);
        assert_eq!(nearest_rank(&v, 100.0), 10);
        assert_eq!(nearest_rank(&[7], 50.0), 7);
    }

    #[test]
    fn jain_bounds() {
        assert_eq!(jain(&[1.0, 1.0, 1.0]), Some(1.0));
        assert!((jain(&[1.0, 0.0]).unwrap() - 0.5).abs() < 1e-12);
        assert_eq!(jain(&[]), None);
    }

    #[test]
    fn duplicate_deliveries_are_detected() {
        let mut s = DirStats::default();
        assert!(s.first_delivery(0));
        assert!(s.first_delivery(1000));
        assert!(!s.first_delivery(1000));
        assert!(!s.first_delivery(0));
    }
}
