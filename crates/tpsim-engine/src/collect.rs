//! The metrics collector: per flow direction counters and delays, drops by reason, frame
//! counts, and the binned time series; at the end of a run it turns them into the flows and
//! network rows (definitions: docs/metrics.md). It learns everything through calls; it never
//! looks into a transport, a device or a routing protocol.

use crate::energy::EnergyModel;
use crate::metrics::{
    bit, jain, nearest_rank, set_bit, DirStats, DropReason, FlowKey, FlowRow, NetworkRow, SeriesTable, N_DROP_REASONS,
};
use tpsim_core::SimTime;
use tpsim_transport::{Message, TransportReport};
use tpsim_wire::ip::DEFAULT_TTL;

/// A flow direction as the scenario defines it.
pub struct DirInfo {
    /// Its identity in the flows table.
    pub key: FlowKey,
    /// The sending endpoint.
    pub tx_ep: u32,
    /// When the application stops generating.
    pub stop: SimTime,
    /// Total bytes of a finite transfer.
    pub total: Option<u64>,
    /// Whether its transport drops messages at a bounded send queue (TFRC, DCCP): then the
    /// row has a `send_queue_drops` column.
    pub send_queue: bool,
    /// Addresses of the receiving node whose data bytes are counted apart in the time series
    /// (`goodput_path<k>_kbps`, a multi-homed association); 0 for none.
    pub paths: usize,
}

/// Names of the per-path goodput series, by the receiving node's address index.
pub const PATH_GOODPUT_SERIES: [&str; 5] = [
    "goodput_path0_kbps",
    "goodput_path1_kbps",
    "goodput_path2_kbps",
    "goodput_path3_kbps",
    "goodput_path4_kbps",
];

struct Dir {
    info: DirInfo,
    stats: DirStats,
    tx_segments: u64,
    rx_segments: u64,
    /// Arrivals of packets (by `seq`) that had arrived before.
    rx_duplicates: u64,
    /// Bitmap by packet `seq`: arrived at the destination transport.
    arrived: Vec<u64>,
    /// By packet `seq`: the reason of the latest drop of one of its copies (`NO_DROP`: none).
    last_drop: Vec<u8>,
    /// Drops of this direction's packet copies, whatever became of the other copies.
    drop_events: u64,
    /// Sum over received segments of the hops they took.
    rx_hops: u64,
    /// Application bytes delivered by the end of the goodput window (the stop time).
    rx_bytes_window: u64,
    /// When the last byte of a finite transfer was delivered.
    done_at: Option<SimTime>,
    /// The first packet `seq` sent at or after the warm-up: earlier packets are not counted
    /// (`u32::MAX` until the warm-up ends).
    seq_floor: u32,
    /// The sender's and receiver's reports at the end of the warm-up (their counters are
    /// subtracted from the final reports).
    reports_floor: (TransportReport, TransportReport),
    /// Messages counted as sent that the transport dropped because its send queue was full.
    send_queue_drops: u64,
    /// IP bytes of the data packets sent since the warm-up, and the smallest and largest.
    tx_ip_bytes: u64,
    tx_ip_min: u32,
    tx_ip_max: u32,
    /// By packet `seq`: when the source transport sent it, ns.
    sent_at: Vec<u64>,
    /// Over the first arrivals of packets sent since the warm-up: the sum of (arrival − send)
    /// ns, and the IP bytes of those that arrived by the application's stop.
    rx_packet_delay_ns: u128,
    rx_ip_bytes_window: u64,
    /// Over the same first arrivals: each packet's wait in interface queues, ns, in arrival
    /// order, and their sum.
    rx_queue_ns: Vec<u64>,
    rx_queue_sum_ns: u128,
}

/// [`Dir::last_drop`] of a packet none of whose copies was dropped.
const NO_DROP: u8 = u8::MAX;

/// What became of a direction's packets at the end of a run.
struct Fates {
    /// Lost packets, by the reason of their last copy's drop.
    lost: [u64; N_DROP_REASONS],
    /// Packets not arrived with a copy still in the network.
    in_flight: u64,
    /// Copy drops that were not losses.
    dropped_copies: u64,
}

struct Series {
    bin: u64,
    n_bins: usize,
    /// [dir][bin] bytes delivered.
    rx_bytes: Vec<Vec<u64>>,
    /// [dir][path][bin] data bytes that arrived (first copies) at the receiver's address
    /// `path`, for directions with [`DirInfo::paths`].
    path_rx: Vec<Vec<Vec<u64>>>,
    /// [dir][bin] (sum of delays ns, count).
    delay: Vec<Vec<(u128, u64)>>,
    /// [dir][bin] (sum of |D(i-1, i)| ns between consecutive deliveries, count), and [dir]
    /// the delay of the direction's latest delivery.
    ipdv: Vec<Vec<(u128, u64)>>,
    prev_delay: Vec<Option<u64>>,
    /// [dev][bin] ∫ waiting packets dt, packet·ns.
    q_area: Vec<Vec<f64>>,
    /// [dev] for the queues under a discipline (`aqm`): [bin] (drops, marks) it made.
    q_verdicts: Vec<Option<Vec<(u32, u32)>>>,
    /// [dir] the sending transport's congestion state at each bin start: the series' names
    /// (from the first sample) and the values, bin after bin.
    congestion: Vec<(Vec<&'static str>, Vec<Option<f64>>)>,
    /// Next bin start at which congestion state is sampled.
    next_sample: SimTime,
    /// Bins sampled so far.
    sampled: usize,
}

/// What the other parts of the world report for the network row at the end of a run: counters
/// since the start of the run.
#[derive(Clone, Default)]
pub struct NetworkInputs {
    /// Routing control packets sent (every hop) and dropped.
    pub routing_packets: u64,
    /// Routing control packets dropped.
    pub routing_drops: u64,
    /// Control messages sent by type (`CTRL_TYPES` order).
    pub routing_by_type: [u64; 6],
    /// Route discoveries completed and the sum of their latencies, s.
    pub route_discovery_latency_s: (u64, f64),
    /// Route discoveries that failed.
    pub route_discoveries_failed: u64,
    /// 802.11 counters summed over radios.
    pub mac: tpsim_mac::DcfStats,
    /// ARP requests and replies sent.
    pub arp_requests: u64,
    /// ARP replies sent.
    pub arp_replies: u64,
    /// Events executed.
    pub events: u64,
}

/// One run's metrics.
pub struct Collector {
    dirs: Vec<Dir>,
    drops: [u64; N_DROP_REASONS],
    dropped_copies: u64,
    ecn_marks: u64,
    mac_frames: u64,
    broadcasts_sent: u64,
    broadcast_receptions: u64,
    /// Broadcast data frames × receivers in decode range (power ≥ receive threshold).
    broadcast_expected: u64,
    series: Option<Series>,
    end_run: SimTime,
    /// Before this instant nothing is counted (`[simulation] warmup`).
    warmup: SimTime,
    /// The network counters at the end of the warm-up, subtracted from the final ones.
    floor: NetworkFloor,
}

/// Network counters at the end of the warm-up.
#[derive(Default)]
struct NetworkFloor {
    drops: [u64; N_DROP_REASONS],
    ecn_marks: u64,
    mac_frames: u64,
    broadcasts_sent: u64,
    broadcast_receptions: u64,
    broadcast_expected: u64,
    inputs: NetworkInputs,
    /// Energy consumed by all nodes, J.
    energy_j: f64,
}

impl Collector {
    /// A collector for a run ending at `end_run` that counts from `warmup` on, with time
    /// series in bins of `bin` ns if asked (`Some`). With a warm-up, the world calls
    /// [`Collector::end_warmup`] at `warmup` before any other event of that instant.
    pub fn new(end_run: SimTime, warmup: SimTime, bin: Option<u64>) -> Collector {
        Collector {
            dirs: Vec::new(),
            drops: [0; N_DROP_REASONS],
            dropped_copies: 0,
            ecn_marks: 0,
            mac_frames: 0,
            broadcasts_sent: 0,
            broadcast_receptions: 0,
            broadcast_expected: 0,
            series: bin.map(|bin| {
                let bin = bin.max(1);
                Series {
                    bin,
                    n_bins: end_run.0.div_ceil(bin).max(1) as usize,
                    rx_bytes: Vec::new(),
                    path_rx: Vec::new(),
                    delay: Vec::new(),
                    ipdv: Vec::new(),
                    prev_delay: Vec::new(),
                    q_area: Vec::new(),
                    q_verdicts: Vec::new(),
                    congestion: Vec::new(),
                    next_sample: SimTime::ZERO,
                    sampled: 0,
                }
            }),
            end_run,
            warmup,
            floor: NetworkFloor::default(),
        }
    }

    /// The warm-up ends now: packets sent from here on are counted, and the counters so far
    /// (network `inputs`, energy consumed by all nodes `energy_j` J, every direction's sender
    /// and receiver reports from `reports(dir)`) are subtracted from the final ones.
    pub fn end_warmup(
        &mut self,
        inputs: NetworkInputs,
        energy_j: f64,
        reports: impl Fn(u32) -> (TransportReport, TransportReport),
    ) {
        for (i, d) in self.dirs.iter_mut().enumerate() {
            d.seq_floor = d.tx_segments as u32;
            d.reports_floor = reports(i as u32);
        }
        self.floor = NetworkFloor {
            drops: self.drops,
            ecn_marks: self.ecn_marks,
            mac_frames: self.mac_frames,
            broadcasts_sent: self.broadcasts_sent,
            broadcast_receptions: self.broadcast_receptions,
            broadcast_expected: self.broadcast_expected,
            inputs,
            energy_j,
        };
    }

    /// The time-series bins, (width ns, count), if series are recorded.
    pub fn bins(&self) -> Option<(u64, usize)> {
        self.series.as_ref().map(|s| (s.bin, s.n_bins))
    }

    /// Adds a flow direction; returns its index.
    pub fn add_direction(&mut self, info: DirInfo) -> u32 {
        if let Some(sr) = &mut self.series {
            sr.rx_bytes.push(vec![0; sr.n_bins]);
            let paths = info.paths.min(PATH_GOODPUT_SERIES.len());
            sr.path_rx.push(vec![vec![0; sr.n_bins]; paths]);
            sr.delay.push(vec![(0, 0); sr.n_bins]);
            sr.ipdv.push(vec![(0, 0); sr.n_bins]);
            sr.prev_delay.push(None);
            sr.congestion.push((Vec::new(), Vec::new()));
        }
        self.dirs.push(Dir {
            info,
            stats: DirStats::default(),
            tx_segments: 0,
            rx_segments: 0,
            rx_duplicates: 0,
            arrived: Vec::new(),
            last_drop: Vec::new(),
            drop_events: 0,
            rx_hops: 0,
            rx_bytes_window: 0,
            done_at: None,
            seq_floor: if self.warmup > SimTime::ZERO { u32::MAX } else { 0 },
            reports_floor: Default::default(),
            send_queue_drops: 0,
            tx_ip_bytes: 0,
            tx_ip_min: u32::MAX,
            tx_ip_max: 0,
            sent_at: Vec::new(),
            rx_packet_delay_ns: 0,
            rx_ip_bytes_window: 0,
            rx_queue_ns: Vec::new(),
            rx_queue_sum_ns: 0,
        });
        self.dirs.len() as u32 - 1
    }

    /// Number of flow directions.
    pub fn directions(&self) -> u32 {
        self.dirs.len() as u32
    }

    /// The sending endpoint of direction `dir`.
    pub fn tx_endpoint(&self, dir: u32) -> u32 {
        self.dirs[dir as usize].info.tx_ep
    }

    /// Sets the number of devices whose queue lengths are recorded.
    pub fn set_devices(&mut self, n: usize) {
        if let Some(sr) = &mut self.series {
            sr.q_area = vec![vec![0.0; sr.n_bins]; n];
            sr.q_verdicts = vec![None; n];
        }
    }

    /// Device `dev`'s queue is under a discipline: its drops and marks get series.
    pub fn set_aqm_device(&mut self, dev: usize) {
        if let Some(sr) = &mut self.series {
            sr.q_verdicts[dev] = Some(vec![(0, 0); sr.n_bins]);
        }
    }

    /// Device `dev`'s discipline dropped (`mark` false) or marked a packet at `now`.
    pub fn queue_verdict(&mut self, dev: u32, now: SimTime, mark: bool) {
        let Some(sr) = &mut self.series else { return };
        let b = ((now.0 / sr.bin) as usize).min(sr.n_bins - 1);
        if let Some(bins) = &mut sr.q_verdicts[dev as usize] {
            let (drops, marks) = &mut bins[b];
            *if mark { marks } else { drops } += 1;
        }
    }

    /// The application of `dir` handed a `len`-byte message to its transport at `now`
    /// (not counted during the warm-up).
    #[inline]
    pub fn app_sent(&mut self, dir: u32, now: SimTime, len: u32) {
        if now < self.warmup {
            return;
        }
        let s = &mut self.dirs[dir as usize].stats;
        s.tx_packets += 1;
        s.tx_bytes += len as u64;
        s.first_send.get_or_insert(now);
    }

    /// A message of `dir` the application sent at `now` was dropped by the transport's full
    /// send queue (after [`Collector::app_sent`] counted it).
    pub fn send_queue_drop(&mut self, dir: u32, now: SimTime) {
        if now >= self.warmup {
            self.dirs[dir as usize].send_queue_drops += 1;
        }
    }

    /// A segment carrying `dir`'s data was handed to IP at `now` as a packet of `ip_len`
    /// bytes: its number within the direction (the packet's `seq`).
    #[inline]
    pub fn segment_sent(&mut self, dir: u32, ip_len: u32, now: SimTime) -> u32 {
        let d = &mut self.dirs[dir as usize];
        d.tx_segments += 1;
        d.last_drop.push(NO_DROP);
        d.sent_at.push(now.0);
        let seq = (d.tx_segments - 1) as u32;
        if seq >= d.seq_floor {
            d.tx_ip_bytes += ip_len as u64;
            d.tx_ip_min = d.tx_ip_min.min(ip_len);
            d.tx_ip_max = d.tx_ip_max.max(ip_len);
        }
        seq
    }

    /// Packet `seq` of `dir` (a copy of it, `ip_len` bytes) reached its destination at `now`
    /// with TTL `ttl` left, having waited `queue_ns` ns in interface queues on its way; only
    /// its first arrival counts, later ones are duplicates; packets sent during the warm-up
    /// are not counted. Returns whether it was a counted duplicate.
    #[inline]
    #[allow(clippy::too_many_arguments)]
    pub fn segment_received(&mut self, dir: u32, seq: u32, ttl: u8, ip_len: u32, queue_ns: i64, now: SimTime) -> bool {
        let d = &mut self.dirs[dir as usize];
        if seq < d.seq_floor {
            return false;
        }
        if !set_bit(&mut d.arrived, seq as u64) {
            d.rx_duplicates += 1;
            return true;
        }
        d.rx_segments += 1;
        d.rx_packet_delay_ns += now.0.saturating_sub(d.sent_at[seq as usize]) as u128;
        debug_assert!(
            queue_ns >= 0,
            "packet {seq} of direction {dir} left a queue it never entered"
        );
        let wait = queue_ns.max(0) as u64;
        d.rx_queue_ns.push(wait);
        d.rx_queue_sum_ns += wait as u128;
        if now <= d.info.stop {
            d.rx_ip_bytes_window += ip_len as u64;
        }
        // Every forwarding node decremented the TTL once (RFC 791 §3.2).
        d.rx_hops += (DEFAULT_TTL.saturating_sub(ttl) as u64) + 1;
        false
    }

    /// Data bytes `payload` of direction `dir` arrived for the first time at the receiver's
    /// address `path` (directions with [`DirInfo::paths`]; others ignore it).
    pub fn path_received(&mut self, dir: u32, path: usize, payload: u32, now: SimTime) {
        let Some(sr) = &mut self.series else { return };
        if let Some(bins) = sr.path_rx[dir as usize].get_mut(path) {
            let b = ((now.0 / sr.bin) as usize).min(sr.n_bins - 1);
            bins[b] += payload as u64;
        }
    }

    /// Whether direction `dir` counts its data per receiving address.
    #[inline]
    pub fn tracks_paths(&self, dir: u32) -> bool {
        self.dirs[dir as usize].info.paths > 0
    }

    /// Whether an event at `now` of packet `seq` of direction `dir` (`NO_DIR`: a packet of no
    /// direction) is counted, and so traced: a direction's packets sent from the warm-up on,
    /// other packets' events from the warm-up on.
    #[inline]
    pub fn counted(&self, dir: u32, seq: u32, now: SimTime) -> bool {
        match self.dirs.get(dir as usize) {
            Some(d) => seq >= d.seq_floor,
            None => now >= self.warmup,
        }
    }

    /// Whether the warm-up is over at `now` (what is not tied to a packet is counted then).
    #[inline]
    pub fn after_warmup(&self, now: SimTime) -> bool {
        now >= self.warmup
    }

    /// The flows-table identity of direction `dir`.
    pub fn key(&self, dir: u32) -> &FlowKey {
        &self.dirs[dir as usize].info.key
    }

    /// Message `m` of `dir` reached its application at `now`; its first byte was first sent
    /// at `first_tx`. A duplicate delivery is ignored; a message created during the warm-up
    /// counts only in the time series.
    pub fn delivered(&mut self, dir: u32, m: Message, first_tx: SimTime, now: SimTime) {
        let d = &mut self.dirs[dir as usize];
        if !d.stats.first_delivery(m.id) {
            return;
        }
        let delay = now.saturating_since(m.created).0;
        if let Some(sr) = &mut self.series {
            let b = ((now.0 / sr.bin) as usize).min(sr.n_bins - 1);
            sr.rx_bytes[dir as usize][b] += m.len as u64;
            let c = &mut sr.delay[dir as usize][b];
            c.0 += delay as u128;
            c.1 += 1;
            // RFC 3393's IPDV between this delivery and the direction's previous one.
            if let Some(prev) = sr.prev_delay[dir as usize].replace(delay) {
                let j = &mut sr.ipdv[dir as usize][b];
                j.0 += delay.abs_diff(prev) as u128;
                j.1 += 1;
            }
        }
        if m.created < self.warmup {
            return;
        }
        d.stats.on_delivery(now, m.len, delay, now.saturating_since(first_tx).0);
        if now <= d.info.stop {
            d.rx_bytes_window += m.len as u64;
        }
        if d.info.total.is_some_and(|t| d.stats.rx_bytes >= t) && d.done_at.is_none() {
            d.done_at = Some(now);
        }
    }

    /// A copy of data packet `seq` of direction `dir` was dropped for `reason`. Whether the
    /// packet is lost is known at the end of the run (no copy arrived and none is left); a
    /// data packet of no direction (`NO_DIR`: a pure TCP ACK, a broadcast) counts at once.
    #[inline]
    pub fn dropped(&mut self, dir: u32, seq: u32, reason: DropReason) {
        if dir == crate::packet::NO_DIR {
            self.drops[reason as usize] += 1;
            return;
        }
        let d = &mut self.dirs[dir as usize];
        if seq >= d.seq_floor {
            d.drop_events += 1;
        }
        d.last_drop[seq as usize] = reason as u8;
    }

    /// The fate of every packet of direction `dir`, given the bitmap (by `seq`) of packets
    /// with a copy still in the network.
    fn fates(&self, dir: usize, alive: &[u64]) -> Fates {
        let d = &self.dirs[dir];
        let mut f = Fates {
            lost: [0; N_DROP_REASONS],
            in_flight: 0,
            dropped_copies: 0,
        };
        let mut lost = 0;
        let floor = d.seq_floor as usize;
        for (seq, &reason) in d.last_drop.iter().enumerate().skip(floor) {
            let seq = seq as u64;
            if bit(&d.arrived, seq) {
                continue;
            }
            if bit(alive, seq) {
                f.in_flight += 1;
            } else {
                // A packet that neither arrived nor is left was dropped (every path out of the
                // network that is not an arrival is a drop with a reason).
                debug_assert_ne!(reason, NO_DROP, "packet {seq} of direction {dir} vanished");
                if let Some(&r) = DropReason::ALL.get(reason as usize) {
                    f.lost[r as usize] += 1;
                    lost += 1;
                }
            }
        }
        f.dropped_copies = d.drop_events - lost;
        f
    }

    /// A frame went onto a link or the air.
    #[inline]
    pub fn mac_frame(&mut self) {
        self.mac_frames += 1;
    }

    /// A queue discipline marked a packet Congestion Experienced.
    pub fn ecn_marked(&mut self) {
        self.ecn_marks += 1;
    }

    /// A one-hop broadcast data packet was sent.
    pub fn broadcast_sent(&mut self) {
        self.broadcasts_sent += 1;
    }

    /// A broadcast data frame reaches `n` radios in decode range.
    pub fn broadcast_expected(&mut self, n: u64) {
        self.broadcast_expected += n;
    }

    /// A node received a broadcast data packet.
    pub fn broadcast_received(&mut self) {
        self.broadcast_receptions += 1;
    }

    /// Device `dev`'s queue held `len` packets from `*changed` until `now` and is about to
    /// change: adds `len × (now − *changed)` packet·ns to its queue integral, split across
    /// bins, and moves `*changed` to `now`.
    #[inline]
    pub fn queue_changed(&mut self, dev: u32, len: usize, changed: &mut SimTime, now: SimTime) {
        let Some(sr) = &mut self.series else { return };
        let len = len as f64;
        let mut t = changed.0;
        *changed = now;
        if len == 0.0 {
            return;
        }
        let row = &mut sr.q_area[dev as usize];
        while t < now.0 {
            let b = (t / sr.bin) as usize;
            if b >= sr.n_bins {
                break;
            }
            let bin_end = ((b as u64 + 1) * sr.bin).min(now.0);
            row[b] += len * (bin_end - t) as f64;
            t = bin_end;
        }
    }

    /// Whether an event at `t` must first sample the congestion state.
    #[inline]
    pub fn sample_due(&self, t: SimTime) -> bool {
        self.series.as_ref().is_some_and(|sr| t >= sr.next_sample)
    }

    /// Samples the congestion state of every direction's sender at each bin start before
    /// `t`; `report(ep)` gives endpoint `ep`'s report.
    pub fn sample(&mut self, t: SimTime, report: impl Fn(u32) -> TransportReport) {
        let Some(sr) = &mut self.series else { return };
        while sr.next_sample < t && sr.sampled < sr.n_bins {
            for (i, d) in self.dirs.iter().enumerate() {
                let r = report(d.info.tx_ep);
                let (names, values) = &mut sr.congestion[i];
                if names.is_empty() {
                    names.extend(r.congestion.iter().map(|&(n, _)| n));
                }
                values.extend(r.congestion.iter().map(|&(_, v)| v));
            }
            sr.sampled += 1;
            sr.next_sample = SimTime(sr.sampled as u64 * sr.bin);
        }
    }

    /// The flows rows, and the packet losses they imply in the network counters (call once,
    /// before [`Collector::network_row`]). `ends(dir)` gives the direction's sender report,
    /// receiver report and messages still buffered at the sender; `alive[dir]` the bitmap (by
    /// `seq`) of its packets with a copy still in the network.
    pub fn flow_rows(
        &mut self,
        alive: &[Vec<u64>],
        ends: impl Fn(u32) -> (TransportReport, TransportReport, u64),
    ) -> Vec<FlowRow> {
        let ns = 1e9;
        let end = self.end_run;
        let fates: Vec<Fates> = (0..self.dirs.len()).map(|i| self.fates(i, &alive[i])).collect();
        for f in &fates {
            for (total, lost) in self.drops.iter_mut().zip(f.lost) {
                *total += lost;
            }
            self.dropped_copies += f.dropped_copies;
        }
        let mut flows = Vec::with_capacity(self.dirs.len());
        for (i, d) in self.dirs.iter_mut().enumerate() {
            let (tx, rx, buffered) = ends(i as u32);
            let (tx0, rx0) = &d.reports_floor;
            let tx_segments = d.tx_segments.saturating_sub(d.seq_floor as u64);
            let fate = &fates[i];
            let s = &mut d.stats;
            let frac = |a: u64, b: u64| if b > 0 { Some(a as f64 / b as f64) } else { None };
            let pdr = frac(s.rx_packets, s.tx_packets);
            let done_at = d.done_at.unwrap_or(SimTime::NEVER);
            // The bytes delivered within the window over the window (docs/metrics.md).
            let window = s.first_send.and_then(|t0| {
                let t1 = d.info.stop.min(end).min(done_at);
                let active = t1.saturating_since(t0).as_secs_f64();
                (active > 0.0).then_some(active)
            });
            let goodput = window.map(|w| d.rx_bytes_window as f64 * 8.0 / 1000.0 / w);
            s.delays_ns.sort_unstable();
            d.rx_queue_ns.sort_unstable();
            let have_queue = !d.rx_queue_ns.is_empty();
            let have = s.rx_packets > 0;
            let mean = |sum: u128| have.then(|| sum as f64 / s.rx_packets as f64 / ns);
            let rtt_samples = tx.rtt_samples - tx0.rtt_samples;
            let rtt_sum_ns = tx.rtt_sum_ns - tx0.rtt_sum_ns;
            let rtt = (rtt_samples > 0).then(|| rtt_sum_ns as f64 / rtt_samples as f64 / ns);
            let ack_packets = rx.stats.ack_segments - rx0.stats.ack_segments;
            flows.push(FlowRow {
                key: d.info.key.clone(),
                tx_packets: s.tx_packets,
                tx_bytes: s.tx_bytes,
                rx_packets: s.rx_packets,
                rx_bytes: s.rx_bytes,
                pdr,
                loss_rate: pdr.map(|p| 1.0 - p),
                goodput_kbps: goodput,
                delay_mean_s: mean(s.delay_sum_ns),
                delay_p50_s: have.then(|| nearest_rank(&s.delays_ns, 50.0) as f64 / ns),
                delay_p95_s: have.then(|| nearest_rank(&s.delays_ns, 95.0) as f64 / ns),
                delay_max_s: s.delays_ns.last().map(|&m| m as f64 / ns),
                net_delay_mean_s: mean(s.net_delay_sum_ns),
                segment_loss_rate: frac(d.rx_segments, tx_segments).map(|r| 1.0 - r),
                jitter_ipdv_s: (s.rx_packets > 1).then(|| s.ipdv_sum_ns as f64 / (s.rx_packets - 1) as f64 / ns),
                jitter_rfc3550_s: (s.rx_packets > 1).then(|| s.jitter_rfc3550_ns / ns),
                rtt_mean_s: rtt,
                retransmissions: tx.stats.retransmissions - tx0.stats.retransmissions,
                rto_timeouts: tx.timeouts - tx0.timeouts,
                fast_retransmits: tx.fast_retransmits - tx0.fast_retransmits,
                rto_s: tx.rto.map(|r| r.as_secs_f64()),
                gave_up: tx.gave_up as u64,
                ack_packets,
                ack_overhead: frac(ack_packets, tx_segments),
                tx_segments,
                rx_segments: d.rx_segments,
                rx_duplicate_segments: d.rx_duplicates,
                hops_mean: (d.rx_segments > 0).then(|| d.rx_hops as f64 / d.rx_segments as f64),
                dropped_segments: fate.lost.iter().sum(),
                in_flight_segments: fate.in_flight,
                tx_ip_bytes: d.tx_ip_bytes,
                throughput_ip_kbps: window.map(|w| d.rx_ip_bytes_window as f64 * 8.0 / 1000.0 / w),
                packet_delay_mean_s: (d.rx_segments > 0)
                    .then(|| d.rx_packet_delay_ns as f64 / d.rx_segments as f64 / ns),
                queue_delay_mean_s: have_queue.then(|| d.rx_queue_sum_ns as f64 / d.rx_queue_ns.len() as f64 / ns),
                queue_delay_p95_s: have_queue.then(|| nearest_rank(&d.rx_queue_ns, 95.0) as f64 / ns),
                packet_size_min_b: (tx_segments > 0).then_some(d.tx_ip_min as f64),
                packet_size_max_b: (tx_segments > 0).then_some(d.tx_ip_max as f64),
                packet_size_mean_b: (tx_segments > 0).then(|| d.tx_ip_bytes as f64 / tx_segments as f64),
                // Sender buffers are first in, first out: the messages still buffered are the
                // latest written, so those of the warm-up are the excess over the messages
                // counted since.
                buffered_packets: buffered.min(s.tx_packets),
                extra: tx
                    .extra
                    .into_iter()
                    .chain(rx.rx_extra)
                    .chain(
                        d.info
                            .send_queue
                            .then_some(("send_queue_drops", Some(d.send_queue_drops as f64))),
                    )
                    .collect(),
            });
        }
        flows
    }

    /// The network row, from this collector's counters, the flows rows and what the other
    /// parts report.
    pub fn network_row(&self, flows: &[FlowRow], inputs: NetworkInputs, energy: Option<&EnergyModel>) -> NetworkRow {
        let delivered: u64 = flows.iter().map(|f| f.rx_segments).sum();
        let goodputs: Vec<f64> = flows.iter().filter_map(|f| f.goodput_kbps).collect();
        let f = &self.floor;
        let total_j = energy.map(|e| e.nodes.iter().map(|n| n.consumed_j).sum::<f64>() - f.energy_j);
        let mac = inputs.mac.since(&f.inputs.mac);
        let routing_packets = inputs.routing_packets - f.inputs.routing_packets;
        let mut drops = self.drops;
        for (d, d0) in drops.iter_mut().zip(f.drops) {
            *d -= d0;
        }
        let mut routing_by_type = inputs.routing_by_type;
        for (n, n0) in routing_by_type.iter_mut().zip(f.inputs.routing_by_type) {
            *n -= n0;
        }
        let (discoveries, latency_sum_s) = inputs.route_discovery_latency_s;
        let (discoveries0, latency_sum0_s) = f.inputs.route_discovery_latency_s;
        let discoveries = discoveries - discoveries0;
        let mac_frames = self.mac_frames - f.mac_frames;
        let broadcast_receptions = self.broadcast_receptions - f.broadcast_receptions;
        NetworkRow {
            energy_consumed_j_mean: total_j.zip(energy).map(|(t, e)| t / e.nodes.len().max(1) as f64),
            energy_consumed_j_total: total_j,
            first_node_death_s: energy
                .and_then(|e| e.nodes.iter().filter_map(|n| n.dead_at).min())
                .map(|t| t.as_secs_f64()),
            mac_data_frames: mac.data_sent,
            mac_ack_frames: mac.ack_sent,
            mac_rts_frames: mac.rts_sent,
            mac_cts_frames: mac.cts_sent,
            mac_retransmissions: mac.data_retries,
            mac_ack_timeouts: mac.ack_timeouts,
            mac_cts_timeouts: mac.cts_timeouts,
            mac_rx_errors: mac.rx_errors,
            broadcasts_sent: self.broadcasts_sent - f.broadcasts_sent,
            broadcast_receptions,
            dead_nodes: energy
                .map(|e| e.nodes.iter().filter(|n| n.dead_at.is_some()).count() as u64)
                .unwrap_or(0),
            routing_packets,
            normalized_routing_load: (delivered > 0).then(|| routing_packets as f64 / delivered as f64),
            mac_frames,
            mac_load: (delivered > 0).then(|| mac_frames as f64 / delivered as f64),
            drops,
            dropped_copies: self.dropped_copies,
            ecn_marks: self.ecn_marks - f.ecn_marks,
            broadcast_missed: (self.broadcast_expected - f.broadcast_expected).saturating_sub(broadcast_receptions),
            routing_drops: inputs.routing_drops - f.inputs.routing_drops,
            arp_requests: inputs.arp_requests - f.inputs.arp_requests,
            arp_replies: inputs.arp_replies - f.inputs.arp_replies,
            routing_by_type,
            route_discovery_latency_s: (discoveries > 0).then(|| (latency_sum_s - latency_sum0_s) / discoveries as f64),
            route_discoveries_failed: inputs.route_discoveries_failed - f.inputs.route_discoveries_failed,
            jain_fairness: jain(&goodputs),
            data_delivered: delivered,
            events: inputs.events,
        }
    }

    /// The time series in long format. `queues` lists every device's (link, node, direction)
    /// labels in device order; `positions(t)` gives every node's position at `t` s, if the
    /// positions series is asked for.
    pub fn series_table(
        &self,
        queues: &[(Option<u32>, Option<u32>, &'static str)],
        energy: Option<&EnergyModel>,
        mut positions: Option<impl FnMut(f64) -> Vec<(f64, f64)>>,
    ) -> SeriesTable {
        let end = self.end_run;
        let mut t = SeriesTable::default();
        let Some(sr) = &self.series else { return t };
        let bin_len = |b: usize| -> f64 {
            let start = b as u64 * sr.bin;
            ((start + sr.bin).min(end.0).saturating_sub(start)).max(1) as f64 * 1e-9
        };
        let bin_start = |b: usize| (b as u64 * sr.bin) as f64 * 1e-9;
        for (i, d) in self.dirs.iter().enumerate() {
            let mut cumulative = 0u64;
            for b in 0..sr.n_bins {
                let value = sr.rx_bytes[i][b] as f64 * 8.0 / 1000.0 / bin_len(b);
                t.push(
                    "goodput_kbps",
                    Some(d.info.key.flow),
                    None,
                    None,
                    d.info.key.direction,
                    bin_start(b),
                    Some(value),
                );
                let (sum, cnt) = sr.delay[i][b];
                let delay = (cnt > 0).then(|| sum as f64 / cnt as f64 * 1e-9);
                t.push(
                    "delay_mean_s",
                    Some(d.info.key.flow),
                    None,
                    None,
                    d.info.key.direction,
                    bin_start(b),
                    delay,
                );
                let (sum, cnt) = sr.ipdv[i][b];
                t.push(
                    "jitter_ipdv_s",
                    Some(d.info.key.flow),
                    None,
                    None,
                    d.info.key.direction,
                    bin_start(b),
                    (cnt > 0).then(|| sum as f64 / cnt as f64 * 1e-9),
                );
                for (k, bins) in sr.path_rx[i].iter().enumerate() {
                    t.push(
                        PATH_GOODPUT_SERIES[k],
                        Some(d.info.key.flow),
                        None,
                        None,
                        d.info.key.direction,
                        bin_start(b),
                        Some(bins[b] as f64 * 8.0 / 1000.0 / bin_len(b)),
                    );
                }
                cumulative += sr.rx_bytes[i][b];
                t.push(
                    "rx_bytes_cumulative",
                    Some(d.info.key.flow),
                    None,
                    None,
                    d.info.key.direction,
                    bin_start(b),
                    Some(cumulative as f64),
                );
            }
        }
        for (i, d) in self.dirs.iter().enumerate() {
            let (names, values) = &sr.congestion[i];
            if names.is_empty() {
                continue;
            }
            for (b, sample) in values.chunks(names.len()).enumerate() {
                for (&name, &v) in names.iter().zip(sample) {
                    t.push(
                        name,
                        Some(d.info.key.flow),
                        None,
                        None,
                        d.info.key.direction,
                        bin_start(b),
                        v,
                    );
                }
            }
        }
        Self::queue_series(sr, &mut t, queues, &bin_start, &bin_len);
        if let Some(e) = energy {
            // Energy consumed during each bin, and what is left at its end.
            for (i, row) in e.bins.iter().enumerate() {
                let mut left = e.initial_j;
                for (b, &used) in row.iter().enumerate().take(sr.n_bins) {
                    left -= used;
                    let bin_end = SimTime(((b as u64 + 1) * sr.bin).min(end.0));
                    let dead = e.nodes[i].dead_at.is_some_and(|d| d <= bin_end);
                    let residual = if dead { 0.0 } else { left.max(0.0) };
                    t.push(
                        "energy_consumed_j",
                        None,
                        None,
                        Some(i as u32),
                        "",
                        bin_start(b),
                        Some(used),
                    );
                    t.push(
                        "energy_residual_j",
                        None,
                        None,
                        Some(i as u32),
                        "",
                        bin_start(b),
                        Some(residual),
                    );
                }
            }
        }
        if let Some(pos) = &mut positions {
            // Positions at each bin start.
            for b in 0..sr.n_bins {
                for (i, (x, y)) in pos(bin_start(b)).into_iter().enumerate() {
                    t.push("x_m", None, None, Some(i as u32), "", bin_start(b), Some(x));
                    t.push("y_m", None, None, Some(i as u32), "", bin_start(b), Some(y));
                }
            }
        }
        t
    }

    /// The queue series of [`Self::series_table`]: every device's mean queue length per bin,
    /// and the drops and marks per bin of the queues under a discipline. `queues` labels the
    /// devices (link, node, direction); `bin_start(b)` and `bin_len(b)` are bin `b`'s, s.
    fn queue_series(
        sr: &Series,
        t: &mut SeriesTable,
        queues: &[(Option<u32>, Option<u32>, &'static str)],
        bin_start: &dyn Fn(usize) -> f64,
        bin_len: &dyn Fn(usize) -> f64,
    ) {
        for (dev, &(link, node, direction)) in queues.iter().enumerate() {
            // A link direction's queue, or a radio's interface queue ("out" of its node).
            for b in 0..sr.n_bins {
                let v = sr.q_area[dev][b] * 1e-9 / bin_len(b);
                t.push("queue_packets", None, link, node, direction, bin_start(b), Some(v));
            }
            let Some(bins) = &sr.q_verdicts[dev] else { continue };
            for (b, &(drops, marks)) in bins.iter().enumerate() {
                let start = bin_start(b);
                let (d, m) = (Some(f64::from(drops)), Some(f64::from(marks)));
                t.push("queue_drops", None, link, node, direction, start, d);
                t.push("queue_marks", None, link, node, direction, start, m);
            }
        }
    }
}
