//! The wireless side of the world: node positions, the shared channel (who hears a frame,
//! with what power, when), 802.11 devices (interface queue + DCF + receiver state) and static
//! routes on the connectivity graph.
//!
//! One transmission costs O(nodes within carrier-sense range): the channel asks the
//! [`Grid`] for candidates and computes each one's received power once; the
//! powers are kept with the frame so that the signal's start and end events carry only
//! indices. On a static channel without shadowing the receivers never change, and the
//! channel finds every sender's once, at start-up ([`Reach`]). A frame and its packet are
//! shared by all receivers (one reference each), never copied.

use crate::grid::Grid;
use crate::mobility::Mobility;
use crate::packet::PacketId;
use crate::phyrx::{Cca, RxOutcome};
pub use crate::priqueue::PriQueue;
use std::collections::VecDeque;
use std::net::Ipv4Addr;
use tpsim_core::{Module, OwnerKind, RngStream, SimDuration, SimTime, StreamKey};
use tpsim_mac::{Dcf, DcfConfig, Frame};
use tpsim_phy::propagation::SPEED_OF_LIGHT;
use tpsim_phy::sinr::{ErrorModel, SinrConfig, SinrParams, SinrRadio};
use tpsim_phy::timing::{MacTiming, PhyStandard, Preamble, WifiRate};
use tpsim_phy::{ns2, Antenna, Propagation};
use tpsim_scenario::{
    PlacementKind, PreambleKind, PropagationKind, Radio, RateControlKind, ReceptionKind, Scenario, WifiStandard,
};
use tpsim_wire::SizeConvention;

/// LLC/SNAP header carried in every 802.11 data frame under the `standard` convention (ns-2's
/// 802.11 omits it), bytes (IEEE 802.2 + RFC 1042).
pub const LLC_SNAP_LEN: u32 = 8;

/// The address of radio `n` (node `n`'s radio with one radio per node,
/// [`crate::net::RadioMap`]): 10.128.0.0/9 + n + 1.
pub fn wifi_addr(n: u32) -> Ipv4Addr {
    Ipv4Addr::from(0x0A80_0000u32 | (n + 1))
}

/// The radio behind a wireless address, if it is one.
pub fn wifi_radio(a: Ipv4Addr) -> Option<u32> {
    let v = u32::from(a);
    (v & 0xFF80_0000 == 0x0A80_0000 && v & 0x007F_FFFF != 0).then(|| (v & 0x007F_FFFF) - 1)
}

/// Initial positions of all nodes, m (uniform placement draws from the scenario's placement
/// stream of this run).
pub fn positions(sc: &Scenario, seed: u64, run: u64) -> Vec<(f64, f64)> {
    let n = sc.nodes.count as usize;
    let Some(pl) = &sc.nodes.placement else {
        return vec![(0.0, 0.0); n];
    };
    match pl.kind {
        PlacementKind::Explicit => pl
            .positions
            .as_ref()
            .map(|v| v.iter().map(|[x, y]| (x.0, y.0)).collect())
            .unwrap_or_default(),
        PlacementKind::Grid => {
            let cols = pl
                .columns
                .unwrap_or_else(|| (n as f64).sqrt().ceil().max(1.0) as u32)
                .max(1) as usize;
            let s = pl.spacing.map(|m| m.0).unwrap_or(1.0);
            (0..n).map(|i| ((i % cols) as f64 * s, (i / cols) as f64 * s)).collect()
        }
        PlacementKind::Uniform => {
            let [w, h] = pl.area.map(|[w, h]| [w.0, h.0]).unwrap_or([1.0, 1.0]);
            let mut rng = RngStream::new(StreamKey {
                seed,
                run,
                kind: OwnerKind::Scenario,
                owner_id: 0,
                module: Module::Placement,
            });
            (0..n)
                .map(|_| (rng.uniform_range(0.0, w), rng.uniform_range(0.0, h)))
                .collect()
        }
    }
}

/// The radio parameters every node uses, with the scenario's values over ns-2's defaults.
#[derive(Clone, Copy, Debug)]
pub struct RadioParams {
    pub prop: Propagation,
    pub antenna: Antenna,
    pub tx_power_w: f64,
    pub rx_threshold_w: f64,
    pub cs_threshold_w: f64,
    pub capture_ratio: f64,
    pub standard: PhyStandard,
    pub data_rate: WifiRate,
    pub basic_rate: WifiRate,
    pub preamble: Preamble,
    pub rts_threshold: Option<u32>,
    pub queue: usize,
    /// Longest wait in the interface queue (older packets are dropped at the head).
    pub queue_max_delay: Option<SimDuration>,
    pub short_retry: u32,
    pub long_retry: u32,
    /// SINR reception's configuration (`None`: ns-2's threshold mode).
    pub sinr: Option<SinrConfig>,
    pub rate_control: tpsim_mac::RateControl,
    /// Draw a backoff even for a frame that finds the medium idle (ns-2).
    pub idle_backoff: bool,
}

impl RadioParams {
    /// Resolves `r` (validated) into model parameters.
    pub fn from_scenario(r: &Radio) -> RadioParams {
        let standard = match r.standard {
            WifiStandard::B => PhyStandard::Dsss,
            WifiStandard::A => PhyStandard::Ofdm,
        };
        let lowest = if standard == PhyStandard::Dsss {
            WifiRate::Dsss1
        } else {
            WifiRate::Ofdm6
        };
        let rate =
            |x: Option<tpsim_scenario::Rate>| x.and_then(|b| WifiRate::from_bps(b.0, standard)).unwrap_or(lowest);
        let freq_hz = r.frequency.map(|f| f.0).unwrap_or(ns2::FREQ_HZ);
        let prop = match r.propagation {
            PropagationKind::TwoRayGround => Propagation::TwoRayGround {
                freq_hz,
                system_loss: ns2::SYSTEM_LOSS,
            },
            PropagationKind::Friis => Propagation::Friis {
                freq_hz,
                system_loss: ns2::SYSTEM_LOSS,
            },
            PropagationKind::LogDistance => Propagation::LogDistance {
                freq_hz,
                system_loss: ns2::SYSTEM_LOSS,
                exponent: r.exponent.unwrap_or(2.0),
                ref_distance_m: 1.0,
                shadowing_std_db: r.shadowing_db.unwrap_or(0.0),
            },
        };
        let antenna = Antenna {
            gain: 1.0,
            height_m: r.antenna_height.map(|m| m.0).unwrap_or(1.5),
        };
        let tx_power_w = r.tx_power.map(|w| w.0).unwrap_or(ns2::PT_W);
        let at = |d: f64| prop.mean_rx_power_w(tx_power_w, antenna, antenna, d);
        let rx_threshold_w = r
            .rx_threshold
            .map(|w| w.0)
            .or(r.range.map(|m| at(m.0)))
            .unwrap_or(ns2::RX_THRESH_W);
        let cs_threshold_w = r
            .cs_threshold
            .map(|w| w.0)
            .or(r.cs_range.map(|m| at(m.0)))
            .unwrap_or(ns2::CS_THRESH_W)
            .min(rx_threshold_w);
        let preamble = match r.preamble {
            PreambleKind::Long => Preamble::Long,
            PreambleKind::Short => Preamble::Short,
        };
        RadioParams {
            prop,
            antenna,
            tx_power_w,
            rx_threshold_w,
            cs_threshold_w,
            capture_ratio: r.capture_ratio.unwrap_or(ns2::CP_THRESH),
            standard,
            data_rate: rate(r.data_rate),
            basic_rate: rate(r.basic_rate),
            preamble,
            rts_threshold: r.rts_threshold.map(|b| b.0.min(u32::MAX as u64) as u32),
            queue: r.queue.unwrap_or(50) as usize,
            queue_max_delay: r.queue_max_delay.map(|d| d.sim()),
            idle_backoff: r.idle_backoff.unwrap_or(false),
            short_retry: r.short_retry_limit.unwrap_or(7),
            long_retry: r.long_retry_limit.unwrap_or(4),
            sinr: (r.reception == ReceptionKind::Sinr).then(|| {
                let mut cfg = SinrConfig::new(rx_threshold_w, cs_threshold_w);
                cfg.noise_figure_db = r.noise_figure_db.unwrap_or(cfg.noise_figure_db);
                cfg.error_model = match r.error_model.unwrap_or_default() {
                    tpsim_scenario::ErrorModelKind::Threshold => ErrorModel::Threshold,
                    tpsim_scenario::ErrorModelKind::Ber => ErrorModel::Ber,
                };
                cfg.preamble_detection_db = r.preamble_detection_db.unwrap_or(cfg.preamble_detection_db);
                if let Some(w) = r.preamble_detection_window {
                    cfg.preamble_detection_window = w.sim();
                }
                cfg.preamble = preamble;
                cfg
            }),
            rate_control: match r.rate_control {
                RateControlKind::Constant => tpsim_mac::RateControl::Constant,
                RateControlKind::Arf => tpsim_mac::RateControl::Arf,
                RateControlKind::Aarf => tpsim_mac::RateControl::Aarf,
            },
        }
    }

    /// The distance at which the mean received power falls to the carrier-sense threshold (m):
    /// no node beyond it can notice a frame (shadowing aside).
    pub fn cs_range_m(&self) -> f64 {
        let base = self
            .prop
            .range_m(self.tx_power_w, self.antenna, self.antenna, self.cs_threshold_w)
            .unwrap_or(1.0);
        match self.prop {
            // Shadowing can lift a far signal above the threshold: search 4σ further.
            Propagation::LogDistance {
                shadowing_std_db,
                exponent,
                ..
            } if shadowing_std_db > 0.0 => base * libm::pow(10.0, 4.0 * shadowing_std_db / (10.0 * exponent)),
            _ => base,
        }
    }

    /// Each node's transmit power, W: `tx_power` (default ns-2's), or the power that reaches
    /// `tx_range` / the node's `node_ranges` entry at the receive threshold.
    pub fn node_powers(&self, r: &Radio, n: usize) -> Vec<f64> {
        let for_range = |m: f64| {
            let unit = self.prop.mean_rx_power_w(1.0, self.antenna, self.antenna, m);
            if unit > 0.0 {
                self.rx_threshold_w / unit
            } else {
                self.tx_power_w
            }
        };
        let mut v = vec![r.tx_range.map(|m| for_range(m.0)).unwrap_or(self.tx_power_w); n];
        for g in r.node_ranges.iter().flatten() {
            let w = for_range(g.range.0);
            for &i in &g.nodes {
                if let Some(x) = v.get_mut(i as usize) {
                    *x = w;
                }
            }
        }
        v
    }

    /// The threshold receiver's thresholds (every radio of the channel shares them).
    #[inline]
    pub fn thresholds(&self) -> crate::phyrx::Thresholds {
        crate::phyrx::Thresholds {
            rx_w: self.rx_threshold_w,
            cs_w: self.cs_threshold_w,
            capture_ratio: self.capture_ratio,
        }
    }

    /// The DCF configuration for these parameters under a size convention.
    pub fn dcf_config(&self, sizes: SizeConvention) -> DcfConfig {
        DcfConfig {
            timing: MacTiming::of(self.standard),
            data_rate: self.data_rate,
            basic_rate: self.basic_rate,
            preamble: self.preamble,
            rts_threshold_bytes: self.rts_threshold,
            short_retry_limit: self.short_retry,
            long_retry_limit: self.long_retry,
            rate_control: self.rate_control,
            idle_backoff: self.idle_backoff,
            // ns-2 counts 58 header bytes of which 24 stand for the PLCP, which the PHY
            // timing adds separately: 34 bytes of MAC overhead.
            mac_header_bytes: match sizes {
                SizeConvention::Standard => 28,
                SizeConvention::Ns2 => 34,
            },
            ..DcfConfig::new(self.data_rate)
        }
    }
}

/// Cache lines at the start of a [`WifiDevice`] that its inputs read: the device's own fields
/// (with a lone queued packet) and the DCF's first group (carrier sense, backoff, exchange,
/// next frame, output events, MSDU, per-frame counters): about 410 bytes. What the channel
/// prefetches of a device it is about to use.
pub const DEVICE_HOT_LINES: usize = 7;

/// One node's 802.11 interface (its receiver is in [`WifiChannel::radios`]).
// `repr(C)`: the fields every input reads come first, next to the DCF's own hot fields (see
// `Dcf`), so that a device a frame reaches costs few cache lines.
#[repr(C)]
pub struct WifiDevice {
    /// The node's energy is spent: the radio is off for good.
    pub dead: bool,
    pub node: u32,
    /// The packet the DCF is serving (its handle).
    pub in_service: Option<PacketId>,
    pub timer_gen: u32,
    pub timer_at: SimTime,
    pub queue: PriQueue,
    pub q_changed: SimTime,
    /// This node's pcap writer, if traced.
    pub pcap: Option<u32>,
    /// The air frame this radio is sending, if any.
    pub on_air: Option<u32>,
    pub iface: u32,
    pub dcf: Dcf,
    /// The radio's queue discipline for packets other than routing control (`radio.aqm`;
    /// `None`: every packet waits in `queue`). Routing control packets keep `queue`, ahead of
    /// these, as with ns-2's PriQueue.
    pub aqm: Option<Box<tpsim_aqm::Qdisc>>,
}

impl WifiDevice {
    /// Packets waiting for the MAC: in `queue` and under `aqm`.
    #[inline]
    pub fn waiting(&self) -> usize {
        self.queue.len() + self.aqm.as_ref().map_or(0, |q| q.len())
    }
}

/// What every signal start and end at a radio touches, one small record per node in a dense
/// array ([`WifiChannel::radios`]) apart from the large 802.11 device: the receiver, and the
/// carrier-sense transitions held back from a DCF at rest ([`Dcf::at_rest`]). A signal that
/// changes nothing the DCF must act on then costs no access to the device. 32 bytes, aligned,
/// so that two radios share a cache line and the receivers of a frame (neighbours, often
/// numbered in runs) cost few lines; the threshold receiver's thresholds and the SINR
/// receivers live in the channel for the same reason.
#[derive(Clone, Debug)]
#[repr(C, align(32))]
pub struct RadioState {
    /// Threshold receiver: power of the frame locked on, W.
    pub(crate) rx_power_w: f64,
    /// Threshold receiver: end of the frame locked on. While nothing is locked on, a
    /// transition to idle held back keeps its time here (the medium can only turn idle when no
    /// signal is on the air, so no frame is locked on then).
    pub(crate) rx_end: SimTime,
    /// Threshold receiver: the frame locked on.
    pub(crate) rx_frame: u32,
    /// Threshold receiver: signals at or above the carrier-sense threshold now on the air.
    pub(crate) sensed: u32,
    /// Failed receptions held back.
    pub(crate) held_rx_errors: u32,
    /// [`flags`]: the threshold receiver's and the device's.
    flags: u8,
}

/// Bits of [`RadioState`]'s flags.
pub(crate) mod flags {
    /// Threshold receiver: a frame is locked on.
    pub const RX: u8 = 1;
    /// Threshold receiver: the frame locked on is lost (too weak, or a collision).
    pub const CORRUPTED: u8 = 2;
    /// Threshold receiver: the radio is transmitting (half duplex).
    pub const TRANSMITTING: u8 = 4;
    /// The node's energy is spent (mirrors [`super::WifiDevice::dead`]).
    pub const DEAD: u8 = 8;
    /// The device is at rest: its DCF is ([`super::Dcf::at_rest`]), and no packet is in
    /// service or waiting. Carrier-sense transitions are then held here instead of reported.
    pub const REST: u8 = 16;
    /// Transitions are held back: hand them over ([`super::RadioState::take_held`]) before
    /// any input to the DCF.
    pub const HELD: u8 = 32;
    /// The medium is busy, as of the last transition held.
    pub const HELD_BUSY: u8 = 64;
}

impl Default for RadioState {
    fn default() -> Self {
        Self::new()
    }
}

impl RadioState {
    /// An idle radio.
    pub fn new() -> Self {
        RadioState {
            rx_power_w: 0.0,
            rx_end: SimTime::ZERO,
            rx_frame: 0,
            sensed: 0,
            held_rx_errors: 0,
            flags: 0,
        }
    }

    /// Whether any of the flags `f` is set.
    #[inline]
    pub(crate) fn flag(&self, f: u8) -> bool {
        self.flags & f != 0
    }

    /// Sets the flags `f`.
    #[inline]
    pub(crate) fn raise(&mut self, f: u8) {
        self.flags |= f;
    }

    /// Clears the flags `f`.
    #[inline]
    pub(crate) fn lower(&mut self, f: u8) {
        self.flags &= !f;
    }

    /// Sets the flags `f` if `on`, clears them otherwise.
    #[inline]
    pub(crate) fn put(&mut self, f: u8, on: bool) {
        self.flags = (self.flags & !f) | (f & (on as u8).wrapping_neg());
    }

    /// The node's energy is spent.
    #[inline]
    pub fn dead(&self) -> bool {
        self.flag(flags::DEAD)
    }

    /// Marks the node's energy as spent: from now on its radio neither senses nor holds.
    pub fn set_dead(&mut self) {
        self.raise(flags::DEAD);
        self.lower(flags::REST);
    }

    /// The radio is switched off by a fault event (hand its held transitions to the DCF
    /// first): like [`Self::set_dead`], and it forgets the reception, the signals it senses
    /// and its own transmission.
    pub fn switch_off(&mut self) {
        self.sensed = 0;
        self.held_rx_errors = 0;
        self.flags = flags::DEAD;
    }

    /// The radio is switched on again: it senses the signals that start from now on.
    pub fn switch_on(&mut self) {
        self.lower(flags::DEAD);
    }

    /// Whether the device is at rest (see `flags::REST`).
    #[inline]
    pub fn rest(&self) -> bool {
        self.flag(flags::REST)
    }

    /// Sets whether the device is at rest, after each of its inputs.
    #[inline]
    pub fn set_rest(&mut self, rest: bool) {
        debug_assert!(
            rest || !self.flag(flags::HELD),
            "held transitions at a device leaving rest"
        );
        self.put(flags::REST, rest);
    }

    /// Holds back a transition of the medium to busy (`busy`) or to idle, at `now`.
    #[inline]
    pub fn hold(&mut self, busy: bool, now: SimTime) {
        self.raise(flags::HELD);
        self.put(flags::HELD_BUSY, busy);
        if !busy {
            debug_assert!(!self.flag(flags::RX), "the medium turned idle under a reception");
            self.rx_end = now;
        }
    }

    /// Holds back a failed reception, at the end of its signal (before the transition to
    /// idle that end may bring, which the caller holds next).
    #[inline]
    pub fn hold_rx_error(&mut self) {
        if !self.flag(flags::HELD) {
            // Nothing held: the DCF saw the medium turn busy when this signal started, and it
            // has stayed busy since.
            self.raise(flags::HELD | flags::HELD_BUSY);
        }
        self.held_rx_errors += 1;
    }

    /// The net effect of the transitions and failed receptions held back, for
    /// [`Dcf::sync_medium`], if any: (busy, when the medium turned idle if it is idle, failed
    /// receptions); clears them. (While the medium is busy the DCF does not read the time it
    /// last turned idle, and it learns a new one when it does.)
    #[inline]
    pub fn take_held(&mut self) -> Option<(bool, Option<SimTime>, u32)> {
        if !self.flag(flags::HELD) {
            return None;
        }
        self.lower(flags::HELD);
        let errors = std::mem::take(&mut self.held_rx_errors);
        let busy = self.flag(flags::HELD_BUSY);
        Some((busy, (!busy).then_some(self.rx_end), errors))
    }
}

/// One radio that notices an air frame, computed once per frame (or once per sender, in the
/// channel's [`Reach`]). 16 bytes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AirRx {
    /// Received power, W.
    pub power_w: f64,
    /// The receiving radio (and its 802.11 device).
    pub radio: u32,
    /// Propagation delay, ns (at most 2³² − 1 ns: 4.3 s, 1.3·10⁶ km).
    pub delay_ns: u32,
}

impl AirRx {
    /// The propagation delay.
    #[inline]
    pub fn delay(&self) -> SimDuration {
        SimDuration(self.delay_ns as u64)
    }
}

/// A frame on the air and the receivers that will notice it.
pub struct AirFrame {
    pub frame: Frame,
    /// The packet carried (DATA frames), one reference held by the channel until the last
    /// receiver is done.
    pub pkt: Option<PacketId>,
    /// The receivers a grid search found, in the order their signals start (and end): by
    /// propagation delay, then in the order the grid gave them. Empty when the channel's
    /// [`Reach`] holds them (`shared`); read them with [`WifiChannel::receivers`].
    pub rx: Vec<AirRx>,
    /// The receivers' place in the channel's [`Reach`], `(first, count)`, when it holds them.
    pub shared: Option<(u32, u32)>,
    /// When the sender started transmitting.
    pub sent: SimTime,
    /// First of the `2 · rx.len()` event sequence numbers reserved for the signals.
    pub seq0: u64,
    /// Signal ends still to come, plus one for the sender's own transmission end.
    pub pending: u32,
    /// The sender died while sending: no receiver decodes the frame.
    pub cut: bool,
}

impl AirFrame {
    /// The event-queue key (time, sequence number) of the signal start at `r`, the frame's
    /// `k`-th receiver in signal order: it has the sequence number `seq0 + 2k`, its signal end
    /// the next one. (Among signals of one frame at the same instant, the earlier receiver
    /// in signal order goes first; a start and an end of one frame never share an instant
    /// unless two delays differ by exactly the airtime, and then the end goes first.)
    #[inline]
    pub fn start_key(&self, r: &AirRx, k: u32) -> (SimTime, u64) {
        (self.sent + r.delay(), self.seq0 + 2 * k as u64)
    }

    /// The event-queue key of the signal end at `r`, the frame's `k`-th receiver.
    #[inline]
    pub fn end_key(&self, r: &AirRx, k: u32) -> (SimTime, u64) {
        (self.sent + r.delay() + self.frame.airtime, self.seq0 + 2 * k as u64 + 1)
    }
}

/// The shared medium.
pub struct WifiChannel {
    pub params: RadioParams,
    /// Each node's movement (positions are asked of it at each transmission).
    pub mobility: Vec<Mobility>,
    /// Each node's transmit power, W.
    pub tx_power_w: Vec<f64>,
    /// Positions when the grid was last filled, m.
    pub positions: Vec<(f64, f64)>,
    pub grid: Grid,
    pub cs_range_m: f64,
    /// How far beyond the carrier-sense range the grid is searched, m: a node moves at most
    /// this far between two refills of the grid.
    pub slack_m: f64,
    /// Refill the grid this long after the last refill (`NEVER` for static nodes).
    pub refill_every: SimDuration,
    /// When the grid is next due for a refill.
    pub next_refill: SimTime,
    /// Node → the hot part of its radio.
    pub radios: Vec<RadioState>,
    /// The SINR receivers' shared parameters (`None`: ns-2's threshold mode, in [`RadioState`]).
    pub sinr: Option<SinrParams>,
    /// Node → its SINR receiver's state (empty in threshold mode): one contiguous array, so
    /// that a radio's receiver is found, and fetched, by index alone.
    pub sinr_radios: Vec<SinrRadio>,
    pub frames: Vec<AirFrame>,
    pub free: Vec<u32>,
    /// Per sending node, for shadowing draws.
    pub rngs: Vec<RngStream>,
    /// Static routes: `next[dst][src]` = next-hop node (`u32::MAX`: none), over links that
    /// work both ways; empty for a destination no flow uses.
    pub next: Vec<Vec<u32>>,
    /// Each sender's receivers, found once, while every node stands still and the propagation
    /// model draws nothing (`None` otherwise): then a frame's receivers, their powers and
    /// delays are the same at every transmission.
    pub reach: Option<Reach>,
    /// Each radio's channel (empty: all share one). Radios on different channels never hear
    /// each other.
    pub channel: Vec<u32>,
    /// Scratch of the receiver search's sort (kept to spare an allocation per frame).
    sort_keys: Vec<u64>,
    /// See [`WifiChannel::sort_keys`].
    sorted_rx: Vec<AirRx>,
}

/// Every sender's receivers on a channel where nothing changes them (static nodes,
/// deterministic propagation): what [`WifiChannel::find_receivers`] would find at each
/// transmission, in the same order, found once. One flat array, sender by sender.
pub struct Reach {
    /// Sender `s`'s receivers are `rx[start[s]..start[s + 1]]`.
    start: Vec<u32>,
    rx: Vec<AirRx>,
}

impl Reach {
    /// At most this many (sender, receiver) pairs are kept (16 bytes each: 32 MiB); a denser
    /// channel searches the grid at each transmission instead.
    pub const MAX_PAIRS: usize = 1 << 21;

    /// Where sender `s`'s receivers are: `(first, count)`.
    #[inline]
    pub fn range(&self, s: u32) -> (u32, u32) {
        let a = self.start[s as usize];
        (a, self.start[s as usize + 1] - a)
    }

    /// The receivers at `(first, count)`, in the order their signals start.
    #[inline]
    pub fn get(&self, (a, n): (u32, u32)) -> &[AirRx] {
        &self.rx[a as usize..(a + n) as usize]
    }
}

impl WifiChannel {
    /// A channel for radios moving as `mobility` says (positions at t = 0 fill the grid).
    /// `rngs` are the radios' shadowing streams, `phy_rngs` their receivers' streams,
    /// `channel` each radio's channel (empty: one channel for all): every vector is by radio.
    pub fn new(
        params: RadioParams,
        tx_power_w: Vec<f64>,
        mut mobility: Vec<Mobility>,
        rngs: Vec<RngStream>,
        phy_rngs: Vec<RngStream>,
        channel: Vec<u32>,
    ) -> Self {
        debug_assert_eq!(phy_rngs.len(), mobility.len());
        let radios = (0..phy_rngs.len()).map(|_| RadioState::new()).collect();
        let sinr = params.sinr.map(SinrParams::new);
        let sinr_radios = match sinr {
            Some(_) => phy_rngs.into_iter().map(SinrRadio::new).collect(),
            None => Vec::new(),
        };
        let positions: Vec<(f64, f64)> = mobility.iter_mut().map(|m| m.position(0.0)).collect();
        let strongest = tx_power_w.iter().copied().fold(params.tx_power_w, f64::max);
        let cs_range_m = RadioParams {
            tx_power_w: strongest,
            ..params
        }
        .cs_range_m();
        let v_max = mobility.iter().map(Mobility::max_speed).fold(0.0, f64::max);
        // Refill the grid whenever a node may have moved a tenth of the carrier-sense range.
        let (slack_m, refill_every) = if v_max > 0.0 {
            let slack = 0.1 * cs_range_m;
            (slack, SimDuration::from_secs_f64(slack / v_max).max(SimDuration(1)))
        } else {
            (0.0, SimDuration(u64::MAX))
        };
        WifiChannel {
            params,
            grid: Grid::new(&positions, cs_range_m + slack_m),
            positions,
            mobility,
            tx_power_w,
            cs_range_m,
            slack_m,
            refill_every,
            next_refill: SimTime::ZERO + refill_every,
            radios,
            sinr,
            sinr_radios,
            frames: Vec::new(),
            free: Vec::new(),
            rngs,
            next: Vec::new(),
            reach: None,
            channel,
            sort_keys: Vec::new(),
            sorted_rx: Vec::new(),
        }
        .with_reach()
    }

    /// Finds every sender's receivers once if nothing can change them: no node moves
    /// (`slack_m` = 0) and the propagation model has no random shadowing. Left `None` when
    /// the pairs would exceed [`Reach::MAX_PAIRS`].
    fn with_reach(mut self) -> Self {
        if self.slack_m != 0.0 || self.params.prop.is_random() {
            return self;
        }
        let n = self.positions.len();
        let (mut start, mut rx, mut one) = (Vec::with_capacity(n + 1), Vec::new(), Vec::new());
        start.push(0u32);
        for s in 0..n as u32 {
            one.clear();
            self.search_receivers(s, 0.0, &mut one);
            if rx.len() + one.len() > Reach::MAX_PAIRS {
                return self;
            }
            rx.extend_from_slice(&one);
            start.push(rx.len() as u32);
        }
        rx.shrink_to_fit();
        self.reach = Some(Reach { start, rx });
        self
    }

    /// The radios that sense a frame `sender` starts sending at `t` (s): those within
    /// carrier-sense range whose received power reaches the carrier-sense threshold, with that
    /// power and their propagation delay, in the order their signals start (by delay, then in
    /// the order the grid gives them). Returns their place in the [`Reach`] if it holds them
    /// (`rx` untouched); else appends them to `rx` (empty), drawing shadowing, if the model
    /// has it, from the sender's stream, once per receiver.
    #[inline]
    pub fn find_receivers(&mut self, sender: u32, t: f64, rx: &mut Vec<AirRx>) -> Option<(u32, u32)> {
        match &self.reach {
            Some(r) => Some(r.range(sender)),
            None => {
                self.search_receivers(sender, t, rx);
                None
            }
        }
    }

    /// The receivers of air frame `frame`, in the order their signals start.
    #[inline]
    pub fn receivers(&self, frame: u32) -> &[AirRx] {
        let af = &self.frames[frame as usize];
        match (af.shared, &self.reach) {
            (Some(at), Some(r)) => r.get(at),
            _ => &af.rx,
        }
    }

    /// [`find_receivers`](Self::find_receivers) by a grid search.
    fn search_receivers(&mut self, sender: u32, t: f64, rx: &mut Vec<AirRx>) {
        debug_assert!(rx.is_empty());
        let p = &self.params;
        // Static nodes stand where the grid has them: no need to ask their mobility.
        let still = self.slack_m == 0.0;
        let here = if still {
            self.positions[sender as usize]
        } else {
            self.mobility[sender as usize].position(t)
        };
        let (mobility, rng, grid) = (&mut self.mobility, &mut self.rngs[sender as usize], &self.grid);
        let cs_range_m = self.cs_range_m;
        let tx_w = self.tx_power_w[sender as usize];
        let channel = &self.channel;
        grid.for_each_near(here, cs_range_m + self.slack_m, |j, filed_at| {
            if j == sender || !channel.is_empty() && channel[j as usize] != channel[sender as usize] {
                return;
            }
            // A static node is where the grid filed it.
            let pj = if still {
                filed_at
            } else {
                mobility[j as usize].position(t)
            };
            let (dx, dy) = (here.0 - pj.0, here.1 - pj.1);
            let dist = (dx * dx + dy * dy).sqrt();
            if dist > cs_range_m {
                return;
            }
            let power = p.prop.rx_power_w(tx_w, p.antenna, p.antenna, dist, rng);
            // Every radio shares the carrier-sense threshold (`Thresholds::senses`,
            // `SinrParams::senses`): checking it here spares a cache miss on each candidate's
            // device.
            if power >= p.cs_threshold_w {
                rx.push(AirRx {
                    power_w: power,
                    radio: j,
                    delay_ns: WifiChannel::delay(dist).0.min(u32::MAX as u64) as u32,
                });
            }
        });
        // By delay, equal delays in the grid's order: each key carries the receiver's place
        // in that order, so an unstable sort of the keys (quicker than a stable sort of the
        // receivers) gives the stable order.
        let keys = &mut self.sort_keys;
        keys.clear();
        keys.extend(
            rx.iter()
                .enumerate()
                .map(|(i, r)| (u64::from(r.delay_ns) << 32) | i as u64),
        );
        keys.sort_unstable();
        let sorted = &mut self.sorted_rx;
        sorted.clear();
        sorted.extend(keys.iter().map(|&k| rx[k as u32 as usize]));
        rx.copy_from_slice(sorted);
    }

    /// Refills the grid with the positions at `now` if nodes may have moved too far since
    /// the last refill (O(nodes), once per `refill_every`; no events).
    pub fn refresh(&mut self, now: SimTime) {
        if now < self.next_refill {
            return;
        }
        let t = now.as_secs_f64();
        for (p, m) in self.positions.iter_mut().zip(self.mobility.iter_mut()) {
            *p = m.position(t);
        }
        self.grid = Grid::new(&self.positions, self.cs_range_m + self.slack_m);
        self.next_refill = now + self.refill_every;
    }

    /// A signal of `power_w` (W) for frame `frame`, sent at `rate`, starts at `node`'s
    /// receiver at `now` and lasts until `end` (threshold or SINR receiver, as configured).
    /// Returns the CCA transition to busy, if any. Only for signals at or above the
    /// carrier-sense threshold.
    #[inline]
    pub fn signal_start(
        &mut self,
        node: u32,
        now: SimTime,
        frame: u32,
        power_w: f64,
        end: SimTime,
        rate: tpsim_phy::WifiRate,
    ) -> Option<Cca> {
        match &self.sinr {
            None => {
                let th = self.params.thresholds();
                self.radios[node as usize].on_signal_start(&th, frame, power_w, end)
            }
            Some(p) => self.sinr_radios[node as usize].on_signal_start(p, now, frame, power_w, end, rate),
        }
    }

    /// The signal of frame `frame` ends at `node`'s receiver at `now`: the reception's
    /// outcome, if the receiver was locked on it, and the CCA transition to idle, if any.
    #[inline]
    pub fn signal_end(&mut self, node: u32, now: SimTime, frame: u32) -> (Option<RxOutcome>, Option<Cca>) {
        match &self.sinr {
            None => self.radios[node as usize].on_signal_end(frame),
            Some(p) => self.sinr_radios[node as usize].on_signal_end(p, now, frame),
        }
    }

    /// `node` starts (`true`) or ends its own transmission (half duplex: a reception in
    /// progress is abandoned at the start).
    pub fn set_transmitting(&mut self, node: u32, on: bool) {
        match (self.sinr.is_some(), on) {
            (false, true) => self.radios[node as usize].on_tx_start(),
            (false, false) => self.radios[node as usize].on_tx_end(),
            (true, true) => self.sinr_radios[node as usize].on_tx_start(),
            (true, false) => self.sinr_radios[node as usize].on_tx_end(),
        }
    }

    /// `node`'s radio is switched off (`on` false) or on again by a fault event: see
    /// [`RadioState::switch_off`].
    pub fn switch(&mut self, node: u32, on: bool) {
        let r = &mut self.radios[node as usize];
        if on {
            r.switch_on();
        } else {
            r.switch_off();
            if let Some(s) = self.sinr_radios.get_mut(node as usize) {
                s.switch_off();
            }
        }
    }

    /// Asks the caches for `node`'s receiver state (its radio record, and its SINR
    /// receiver's first lines): a hint, see [`tpsim_core::prefetch()`].
    #[inline]
    pub fn prefetch_receiver(&self, node: u32) {
        tpsim_core::prefetch(&self.radios[node as usize], 1);
        if let Some(r) = self.sinr_radios.get(node as usize) {
            tpsim_core::prefetch(r, tpsim_phy::sinr::SINR_RADIO_HOT_LINES);
        }
    }

    /// Starts the cache misses on the list of receivers `node` would read if it started a
    /// transmission (a hint: only on a channel with a [`Reach`], at most 8 lines).
    #[inline]
    pub fn prefetch_sender(&self, node: u32) {
        if let Some(r) = &self.reach {
            if (node as usize) < r.start.len() - 1 {
                tpsim_core::prefetch_slice(r.get(r.range(node)), 8);
            }
        }
    }

    /// Propagation delay over `d_m` metres.
    pub fn delay(d_m: f64) -> SimDuration {
        SimDuration::from_secs_f64(d_m / SPEED_OF_LIGHT)
    }

    /// Number of nodes on the channel.
    pub fn nodes(&self) -> usize {
        self.positions.len()
    }

    /// The air frame in slot `slot`.
    #[inline]
    pub fn air_frame(&self, slot: u32) -> &AirFrame {
        &self.frames[slot as usize]
    }

    /// The graph of node pairs standing at `pos` (m) that decode each other (mean power at
    /// or above the receive threshold both ways), searched within `radius_m` of each node in
    /// the grid: every node's neighbours in increasing order.
    fn two_way_graph(&self, pos: &[(f64, f64)], radius_m: f64) -> Vec<Vec<u32>> {
        let mut adj: Vec<Vec<u32>> = vec![Vec::new(); pos.len()];
        let mut near = Vec::new();
        for (i, &pi) in pos.iter().enumerate() {
            near.clear();
            let channel = &self.channel;
            self.grid.for_each_near(pi, radius_m, |j, _| {
                if channel.is_empty() || channel[j as usize] == channel[i] {
                    near.push(j)
                }
            });
            near.sort_unstable();
            for &j in &near {
                if j as usize == i {
                    continue;
                }
                let pj = pos[j as usize];
                let (dx, dy) = (pi.0 - pj.0, pi.1 - pj.1);
                let d = (dx * dx + dy * dy).sqrt();
                if self.two_way(i, j as usize, d) {
                    adj[i].push(j);
                }
            }
        }
        adj
    }

    /// The connectivity graph at `now` (positions from the mobility models; the grid is
    /// refreshed first if due): what the oracle routes on.
    pub fn connectivity(&mut self, now: SimTime) -> Vec<Vec<u32>> {
        let t = now.as_secs_f64();
        let pos: Vec<(f64, f64)> = self.mobility.iter_mut().map(|m| m.position(t)).collect();
        self.refresh(now);
        self.two_way_graph(&pos, self.cs_range_m + self.slack_m)
    }

    /// Hop-count shortest paths, on the graph of node pairs that decode each other at t = 0,
    /// towards each node of `destinations` (the flows' endpoints: a table towards every node
    /// would take N² memory), ties broken by node index (BFS from each destination).
    pub fn static_routes(&mut self, destinations: &[u32]) {
        let n = self.positions.len();
        let adj = self.two_way_graph(&self.positions, self.cs_range_m);
        self.next = vec![Vec::new(); n];
        for &dst in destinations {
            if (dst as usize) < n && self.next[dst as usize].is_empty() {
                self.next[dst as usize] = next_hops_towards(&adj, dst);
            }
        }
    }

    /// Whether nodes `i` and `j`, `d_m` apart, decode each other's frames (mean power at or
    /// above the receive threshold both ways: a unicast needs its ACK back).
    pub fn two_way(&self, i: usize, j: usize, d_m: f64) -> bool {
        let p = &self.params;
        let weakest = self.tx_power_w[i].min(self.tx_power_w[j]);
        p.prop.mean_rx_power_w(weakest, p.antenna, p.antenna, d_m) >= p.rx_threshold_w
    }

    /// The next hop from `src` to `dst` on the static routes.
    pub fn next_hop(&self, src: u32, dst: u32) -> Option<u32> {
        self.next
            .get(dst as usize)
            .and_then(|t| t.get(src as usize))
            .copied()
            .filter(|&h| h != u32::MAX)
    }
}

/// Breadth-first search from `dst` over `adj`: every node's next hop towards `dst`
/// (`u32::MAX`: unreachable, and at `dst` itself), ties broken by the order of `adj`.
pub fn next_hops_towards(adj: &[Vec<u32>], dst: u32) -> Vec<u32> {
    let n = adj.len();
    let mut next = vec![u32::MAX; n];
    let mut seen = vec![false; n];
    let mut queue = VecDeque::with_capacity(n);
    seen[dst as usize] = true;
    queue.push_back(dst);
    while let Some(u) = queue.pop_front() {
        for &v in &adj[u as usize] {
            if !seen[v as usize] {
                seen[v as usize] = true;
                next[v as usize] = u;
                queue.push_back(v);
            }
        }
    }
    next
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The channel's hot path touches one radio record per receiver: two share a cache line.
    #[test]
    fn a_radio_record_is_half_a_cache_line() {
        assert_eq!(std::mem::size_of::<RadioState>(), 32);
        assert_eq!(std::mem::align_of::<RadioState>(), 32);
    }

    /// A radio at rest holds what its DCF must learn: the last carrier-sense state, the time
    /// the medium last turned idle (kept in the reception's end while nothing is locked on)
    /// and the failed receptions, and hands them over once.
    #[test]
    fn held_transitions_reach_the_dcf_once_with_the_idle_time_only_while_idle() {
        let th = crate::phyrx::Thresholds {
            rx_w: 3.652e-10,
            cs_w: 1.559e-11,
            capture_ratio: 10.0,
        };
        let us = |x: u64| SimTime(x * 1000);
        let mut r = RadioState::new();
        r.set_rest(true);
        assert_eq!(r.take_held(), None);
        // A signal too weak to decode: busy, then a failed reception and idle at its end.
        assert_eq!(r.on_signal_start(&th, 1, 1e-10, us(100)), Some(Cca::Busy));
        r.hold(true, us(0));
        let (outcome, cca) = r.on_signal_end(1);
        assert_eq!((outcome, cca), (Some(RxOutcome::Error), Some(Cca::Idle)));
        r.hold_rx_error();
        r.hold(false, us(100));
        assert_eq!(r.take_held(), Some((false, Some(us(100)), 1)));
        assert_eq!(r.take_held(), None);
        // Idle held at 200 µs, then a decodable frame locks on (its end overwrites the slot):
        // the DCF learns "busy" and no idle time, which it does not read while busy.
        r.hold(false, us(200));
        assert_eq!(r.on_signal_start(&th, 2, 1e-9, us(900)), Some(Cca::Busy));
        r.hold(true, us(300));
        assert_eq!(r.take_held(), Some((true, None, 0)));
        assert_eq!(r.on_signal_end(2), (Some(RxOutcome::Ok { frame: 2 }), Some(Cca::Idle)));
        // A dead radio is no longer at rest.
        r.set_dead();
        assert!(r.dead() && !r.rest());
    }

    use crate::mobility::{Mobility, RandomWaypoint};
    use tpsim_scenario::Radio;

    /// Node `i`'s random stream for `module` under `seed`.
    fn node_key(seed: u64, i: u64, module: Module) -> RngStream {
        RngStream::new(StreamKey {
            seed,
            run: 0,
            kind: OwnerKind::Node,
            owner_id: i,
            module,
        })
    }

    /// A channel of `radio` (scenario TOML of the `[radio]` table) over nodes moving as
    /// `mobility` says, every node at the default transmit power, device i on node i.
    fn channel(radio: &str, mobility: Vec<Mobility>, seed: u64) -> WifiChannel {
        let radio: Radio = toml::from_str(radio).unwrap();
        let params = RadioParams::from_scenario(&radio);
        let n = mobility.len() as u64;
        WifiChannel::new(
            params,
            vec![params.tx_power_w; n as usize],
            mobility,
            (0..n).map(|i| node_key(seed, i, Module::Channel)).collect(),
            (0..n).map(|i| node_key(seed, i, Module::PhyReception)).collect(),
            Vec::new(),
        )
    }

    /// On a static channel with deterministic propagation, each sender's receivers are found
    /// once ([`Reach`]) and are exactly what a grid search finds at every transmission: the
    /// same nodes, powers and delays, in signal order (delay, then the grid's order among
    /// equal delays, which a grid layout makes common). With moving nodes or shadowing there
    /// is no such table.
    #[test]
    fn static_senders_reach_the_same_receivers_as_a_grid_search() {
        // A 12 x 10 grid, 200 m apart, with a few nodes off the grid.
        let mut at: Vec<Mobility> = (0..120)
            .map(|i| Mobility::Static(200.0 * (i % 12) as f64, 200.0 * (i / 12) as f64))
            .collect();
        at.extend([(137.0, 911.0), (1502.5, 33.3), (-240.0, 600.0)].map(|(x, y)| Mobility::Static(x, y)));
        assert_eq!(std::mem::size_of::<AirRx>(), 16, "four to a cache line");
        let mut ch = channel("", at.clone(), 5);
        let reach = ch.reach.take().expect("static nodes, two-ray ground: a reach table");
        let mut pairs = 0;
        for s in 0..at.len() as u32 {
            let mut searched = Vec::new();
            ch.search_receivers(s, 0.0, &mut searched);
            let listed = reach.get(reach.range(s));
            assert_eq!(listed, &searched[..], "sender {s}");
            // Independently: every node within carrier-sense range that senses the frame,
            // once, in order of delay.
            let (xs, ys) = ch.positions[s as usize];
            let mut want: Vec<u32> = (0..at.len() as u32)
                .filter(|&j| {
                    let (x, y) = ch.positions[j as usize];
                    let (dx, dy) = (x - xs, y - ys);
                    let d = (dx * dx + dy * dy).sqrt();
                    let p = &ch.params;
                    j != s
                        && d <= ch.cs_range_m
                        && p.prop.mean_rx_power_w(p.tx_power_w, p.antenna, p.antenna, d) >= p.cs_threshold_w
                })
                .collect();
            let mut got: Vec<u32> = listed.iter().map(|r| r.radio).collect();
            assert!(listed.windows(2).all(|w| w[0].delay_ns <= w[1].delay_ns));
            assert!(listed.iter().any(|r| r.delay_ns > 0));
            want.sort_unstable();
            got.sort_unstable();
            assert_eq!(got, want, "sender {s}");
            pairs += listed.len();
        }
        assert!(pairs > 1000, "{pairs} pairs");
        // Shadowing draws a power per reception: nothing to keep.
        let shadowed = channel("propagation = \"log-distance\"\nshadowing_db = 4.0", at.clone(), 5);
        assert!(shadowed.reach.is_none());
        // Moving nodes: nothing to keep either.
        at[0] = Mobility::Linear(0.0, 0.0, 1.0, 0.0);
        assert!(channel("", at, 5).reach.is_none());
    }

    /// With moving nodes, the grid (refilled only every `refill_every`) still offers every
    /// node within carrier-sense range of a sender at any time.
    #[test]
    fn grid_finds_every_node_in_range_while_nodes_move() {
        let n = 60;
        let mobility: Vec<Mobility> = (0..n)
            .map(|i| {
                Mobility::Waypoint(RandomWaypoint::stationary(
                    3000.0,
                    1500.0,
                    5.0,
                    30.0,
                    2.0,
                    node_key(3, i, Module::Mobility),
                ))
            })
            .collect();
        let mut ch = channel("", mobility, 3);
        assert!(ch.slack_m > 0.0 && ch.refill_every.0 > 0);
        let mut checked = 0;
        for step in 0..2000u64 {
            let now = SimTime(step * 137_000_000);
            ch.refresh(now);
            let t = now.as_secs_f64();
            let pos: Vec<(f64, f64)> = ch.mobility.iter_mut().map(|m| m.position(t)).collect();
            for (i, &pi) in pos.iter().enumerate() {
                let mut near = Vec::new();
                ch.grid
                    .for_each_near(pi, ch.cs_range_m + ch.slack_m, |j, _| near.push(j));
                for (j, &pj) in pos.iter().enumerate() {
                    let (dx, dy) = (pi.0 - pj.0, pi.1 - pj.1);
                    let d = (dx * dx + dy * dy).sqrt();
                    if d <= ch.cs_range_m {
                        checked += 1;
                        assert!(
                            near.contains(&(j as u32)),
                            "t={t}: node {j} at {d} m of node {i} missed"
                        );
                    }
                }
            }
        }
        assert!(checked > 10_000);
    }
}
