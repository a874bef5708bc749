//! BBR v1 congestion control: a model of the path (bottleneck bandwidth and round-trip
//! propagation time) from delivery-rate samples, and a sender paced at the model's rate.
//!
//! Reading list (the draft's sections beside each rule below):
//!
//! * N. Cardwell, Y. Cheng, S. Hassas Yeganeh, V. Jacobson, "BBR Congestion Control",
//!   draft-cardwell-iccrg-bbr-congestion-control-00 (2017): §4.1.1 BtlBw (windowed maximum
//!   of the delivery rate over 10 round trips, round counting by `prior_delivered`), §4.1.2
//!   RTprop (windowed minimum RTT over 10 s), §4.2 pacing rate and cwnd, §4.3 the state
//!   machine (Startup, Drain, ProbeBW with its gain cycle, ProbeRTT).
//! * N. Cardwell et al., "BBR: Congestion-Based Congestion Control", ACM Queue 14(5), 2016.
//! * Delivery-rate samples: draft-cheng-iccrg-delivery-rate-estimation ([`super::rate`]).
//!
//! Not modelled: the send quantum's TSO sizing above 1 segment per 1.2 Mbit/s is kept as the
//! draft gives it; the idle restart (§4.3.4.3 "restarting from idle") is not, nor are the
//! later Linux additions (ACK aggregation, long-term bandwidth sampling).

use super::cc::{AckEvent, CcContext, CongestionController, CongestionEvent, Window};
use tpsim_core::{SimDuration, SimTime};

/// §4.3.1: the Startup gain, 2/ln 2, the smallest gain that doubles the delivery rate each
/// round.
pub const HIGH_GAIN: f64 = 2.885_390_081_777_926_8;
/// §4.3.4: the ProbeBW pacing-gain cycle.
pub const PACING_GAIN_CYCLE: [f64; 8] = [1.25, 0.75, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0];
/// §4.2.3: the cwnd gain in ProbeBW.
pub const CWND_GAIN: f64 = 2.0;
/// §4.1.1: BtlBw is the maximum over this many round trips.
pub const BTLBW_FILTER_ROUNDS: u64 = 10;
/// §4.1.2: RTprop is the minimum over this window.
pub const RTPROP_FILTER: SimDuration = SimDuration::from_secs(10);
/// §4.3.5: time spent in ProbeRTT (at least one round trip as well).
pub const PROBE_RTT_DURATION: SimDuration = SimDuration::from_millis(200);
/// §4.3.5: cwnd in ProbeRTT and the floor of cwnd, segments.
pub const MIN_PIPE_CWND_SEGMENTS: u64 = 4;
/// The pacing rate is this fraction below gain × BtlBw, leaving the bottleneck a little idle
/// time so that a queue does not creep up (Linux's `bbr_pacing_margin_percent`, ns-3's
/// TcpBbr, and the draft's later versions; -00 paces at gain × BtlBw exactly).
pub const PACING_MARGIN: f64 = 0.01;
/// §4.3.2: Startup ends after this many rounds without 25 % growth of BtlBw.
pub const FULL_BW_ROUNDS: u32 = 3;

/// §4.2.2 send quantum at `pacing_rate` bytes/s: 1 segment below 1.2 Mbit/s, 2 below
/// 24 Mbit/s, else 1 ms of data (at most 64 KiB). A paced sender sends a quantum back to back
/// (Linux: one TSO burst) and then waits for the pacing rate to catch up.
pub fn send_quantum(pacing_rate: f64, smss: u64) -> u64 {
    let rate_bps = pacing_rate * 8.0;
    if rate_bps < 1.2e6 {
        smss
    } else if rate_bps < 24e6 {
        2 * smss
    } else {
        ((pacing_rate * 1e-3) as u64).clamp(smss, 65_536)
    }
}

/// SplitMix64: the next deterministic draw of a connection's generator `state`.
pub(super) fn splitmix(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The four states of §4.3.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum BbrState {
    /// §4.3.2: exponential search for the bottleneck bandwidth at [`HIGH_GAIN`].
    #[default]
    Startup,
    /// §4.3.3: drain the queue Startup built, at 1/[`HIGH_GAIN`].
    Drain,
    /// §4.3.4: cruise at BtlBw, probing with the gain cycle.
    ProbeBw,
    /// §4.3.5: cwnd at 4 segments for 200 ms to measure RTprop anew.
    ProbeRtt,
}

impl BbrState {
    /// A number for the time series: 0 Startup, 1 Drain, 2 ProbeBW, 3 ProbeRTT.
    pub fn code(self) -> u8 {
        self as u8
    }
}

/// Exact maximum of the per-round delivery-rate maxima over the last
/// [`BTLBW_FILTER_ROUNDS`] rounds.
#[derive(Clone, Copy, Debug, Default)]
struct RoundMax {
    /// (round, maximum rate in that round), indexed by round modulo the window.
    slots: [(u64, f64); BTLBW_FILTER_ROUNDS as usize],
    /// The maximum and the round it was measured in (the slots are scanned again only when
    /// it leaves the window).
    best: (u64, f64),
}

impl RoundMax {
    fn update(&mut self, round: u64, v: f64) {
        let slot = &mut self.slots[(round % BTLBW_FILTER_ROUNDS) as usize];
        if slot.0 != round {
            let evicted = slot.0 == self.best.0 && slot.1 == self.best.1;
            *slot = (round, v);
            if evicted {
                self.best = (0, 0.0);
                self.rescan(round);
            }
        } else if v > slot.1 {
            slot.1 = v;
        }
        if v >= self.best.1 {
            self.best = (round, v);
        }
    }

    fn rescan(&mut self, round: u64) {
        self.best = self
            .slots
            .iter()
            .filter(|&&(r, _)| r + BTLBW_FILTER_ROUNDS > round)
            .fold((0, 0.0), |b, &(r, v)| if v >= b.1 { (r, v) } else { b });
    }

    fn max(&mut self, round: u64) -> f64 {
        if self.best.1 > 0.0 && self.best.0 + BTLBW_FILTER_ROUNDS <= round {
            self.rescan(round);
        }
        self.best.1
    }
}

/// BBR v1 (see the module docs). Owns cwnd on every ACK and the pacing rate.
#[derive(Clone, Debug)]
pub struct Bbr {
    state: BbrState,
    pacing_gain: f64,
    cwnd_gain: f64,
    btlbw: RoundMax,
    /// The filter's maximum, as of the last ACK, bytes/s.
    bw: f64,
    /// RTprop and when it was last set (§4.1.2).
    rtprop: Option<SimDuration>,
    rtprop_stamp: SimTime,
    rtprop_expired: bool,
    /// §4.1.1.3 round counting.
    round_count: u64,
    next_round_delivered: u64,
    round_start: bool,
    /// §4.3.2 full-pipe detection.
    filled_pipe: bool,
    full_bw: f64,
    full_bw_count: u32,
    /// §4.3.4 gain cycling.
    cycle_index: usize,
    cycle_stamp: SimTime,
    /// §4.3.5 ProbeRTT.
    probe_rtt_done_stamp: Option<SimTime>,
    probe_rtt_round_done: bool,
    /// §4.2.3.4: cwnd saved on entering loss recovery or ProbeRTT, bytes.
    prior_cwnd: u64,
    packet_conservation: bool,
    was_in_recovery: bool,
    /// ProbeRTT just ended: the next cwnd is at least `prior_cwnd` (§4.3.5 BBRRestoreCwnd).
    restore_cwnd: bool,
    /// Pacing rate, bytes/s (0 until the first computation).
    pacing_rate: f64,
    /// State of the generator choosing the first gain-cycle phase (§4.3.4.4).
    rng: u64,
}

impl Default for Bbr {
    fn default() -> Self {
        Self::new(0)
    }
}

impl Bbr {
    /// A controller in Startup; `seed` picks the gain-cycle phases it enters ProbeBW at.
    pub fn new(seed: u64) -> Self {
        Bbr {
            state: BbrState::Startup,
            pacing_gain: HIGH_GAIN,
            cwnd_gain: HIGH_GAIN,
            btlbw: RoundMax::default(),
            bw: 0.0,
            rtprop: None,
            rtprop_stamp: SimTime::ZERO,
            rtprop_expired: false,
            round_count: 0,
            next_round_delivered: 0,
            round_start: false,
            filled_pipe: false,
            full_bw: 0.0,
            full_bw_count: 0,
            cycle_index: 0,
            cycle_stamp: SimTime::ZERO,
            probe_rtt_done_stamp: None,
            probe_rtt_round_done: false,
            prior_cwnd: 0,
            packet_conservation: false,
            was_in_recovery: false,
            restore_cwnd: false,
            pacing_rate: 0.0,
            rng: seed ^ 0x9e37_79b9_7f4a_7c15,
        }
    }

    /// The state (§4.3).
    pub fn state(&self) -> BbrState {
        self.state
    }
    /// BtlBw, the bottleneck-bandwidth estimate, bytes/s (0 before the first sample).
    pub fn btlbw(&self) -> f64 {
        self.bw
    }
    /// RTprop, the round-trip propagation-time estimate.
    pub fn rtprop(&self) -> Option<SimDuration> {
        self.rtprop
    }
    /// The current pacing gain.
    pub fn pacing_gain(&self) -> f64 {
        self.pacing_gain
    }
    /// The current cwnd gain.
    pub fn cwnd_gain(&self) -> f64 {
        self.cwnd_gain
    }
    /// Round trips counted so far (§4.1.1.3).
    pub fn round_count(&self) -> u64 {
        self.round_count
    }
    /// Whether Startup found the pipe full (§4.3.2).
    pub fn filled_pipe(&self) -> bool {
        self.filled_pipe
    }
    /// Index into [`PACING_GAIN_CYCLE`] in ProbeBW.
    pub fn cycle_index(&self) -> usize {
        self.cycle_index
    }

    fn next_random(&mut self) -> u64 {
        splitmix(&mut self.rng)
    }

    /// §4.2.3.2 BBRInflight: `gain` times the estimated BDP plus 3 send quanta; the initial
    /// window until RTprop is known.
    fn inflight(&self, gain: f64, cx: &CcContext, initial_cwnd: u64) -> u64 {
        let Some(rtprop) = self.rtprop else {
            return initial_cwnd;
        };
        let bdp = self.btlbw() * rtprop.as_secs_f64();
        (gain * bdp) as u64 + 3 * self.send_quantum(cx)
    }

    fn send_quantum(&self, cx: &CcContext) -> u64 {
        send_quantum(self.pacing_rate, cx.smss)
    }

    /// §4.1.1.3 BBRUpdateRound.
    fn update_round(&mut self, ev: &AckEvent) {
        self.round_start = false;
        if let Some(rs) = ev.rate {
            if rs.prior_delivered >= self.next_round_delivered {
                self.next_round_delivered = ev.delivered;
                self.round_count += 1;
                self.round_start = true;
            }
        }
    }

    /// §4.1.1.4 BBRUpdateBtlBw: a sample enters the filter unless it is application-limited
    /// and below the estimate.
    fn update_btlbw(&mut self, ev: &AckEvent) {
        if let Some(rs) = ev.rate {
            if rs.delivery_rate >= self.bw || !rs.is_app_limited {
                self.btlbw.update(self.round_count, rs.delivery_rate);
            }
        }
        self.bw = self.btlbw.max(self.round_count);
    }

    /// §4.1.2.3 BBRUpdateRTprop.
    fn update_rtprop(&mut self, now: SimTime, ev: &AckEvent) {
        self.rtprop_expired = now > self.rtprop_stamp + RTPROP_FILTER;
        if let Some(rtt) = ev.rtt {
            if self.rtprop.is_none_or(|r| rtt <= r) || self.rtprop_expired {
                self.rtprop = Some(rtt);
                self.rtprop_stamp = now;
            }
        }
    }

    /// §4.3.2.2 BBRCheckFullPipe: BtlBw grew less than 25 % in three rounds.
    fn check_full_pipe(&mut self, ev: &AckEvent) {
        if self.filled_pipe || !self.round_start || ev.rate.is_some_and(|r| r.is_app_limited) {
            return;
        }
        let bw = self.btlbw();
        if bw >= self.full_bw * 1.25 {
            self.full_bw = bw;
            self.full_bw_count = 0;
            return;
        }
        self.full_bw_count += 1;
        if self.full_bw_count >= FULL_BW_ROUNDS {
            self.filled_pipe = true;
        }
    }

    /// §4.3.3 BBRCheckDrain.
    fn check_drain(&mut self, now: SimTime, ev: &AckEvent, cx: &CcContext, iw: u64) {
        if self.state == BbrState::Startup && self.filled_pipe {
            self.state = BbrState::Drain;
            self.pacing_gain = 1.0 / HIGH_GAIN;
            self.cwnd_gain = HIGH_GAIN;
        }
        if self.state == BbrState::Drain && ev.in_flight <= self.inflight(1.0, cx, iw) {
            self.enter_probe_bw(now);
        }
    }

    /// §4.3.4.4 BBREnterProbeBW: a random phase other than the 3/4 one, then advanced once.
    fn enter_probe_bw(&mut self, now: SimTime) {
        self.state = BbrState::ProbeBw;
        self.pacing_gain = 1.0;
        self.cwnd_gain = CWND_GAIN;
        let len = PACING_GAIN_CYCLE.len();
        self.cycle_index = len - 1 - (self.next_random() % (len as u64 - 1)) as usize;
        self.advance_cycle_phase(now);
    }

    fn advance_cycle_phase(&mut self, now: SimTime) {
        self.cycle_stamp = now;
        self.cycle_index = (self.cycle_index + 1) % PACING_GAIN_CYCLE.len();
        self.pacing_gain = PACING_GAIN_CYCLE[self.cycle_index];
    }

    /// §4.3.4.3 BBRIsNextCyclePhase: 1.0 phases last one RTprop; the 5/4 phase until it has
    /// put the gain's inflight in the pipe (or lost), the 3/4 phase until it has drained to
    /// the BDP or one RTprop passed.
    fn check_cycle_phase(&mut self, now: SimTime, ev: &AckEvent, cx: &CcContext, iw: u64) {
        if self.state != BbrState::ProbeBw {
            return;
        }
        let full_length = self.rtprop.is_some_and(|r| now.saturating_since(self.cycle_stamp) > r);
        let next = if self.pacing_gain == 1.0 {
            full_length
        } else if self.pacing_gain > 1.0 {
            full_length && (ev.loss || ev.prior_in_flight >= self.inflight(self.pacing_gain, cx, iw))
        } else {
            full_length || ev.prior_in_flight <= self.inflight(1.0, cx, iw)
        };
        if next {
            self.advance_cycle_phase(now);
        }
    }

    /// §4.3.5 BBRCheckProbeRTT and BBRHandleProbeRTT.
    fn check_probe_rtt(&mut self, now: SimTime, ev: &AckEvent, w: Window, cx: &CcContext) {
        if self.state != BbrState::ProbeRtt && self.rtprop_expired {
            self.prior_cwnd = self.save_cwnd(w);
            self.state = BbrState::ProbeRtt;
            self.pacing_gain = 1.0;
            self.cwnd_gain = 1.0;
            self.probe_rtt_done_stamp = None;
        }
        if self.state != BbrState::ProbeRtt {
            return;
        }
        let min_pipe = MIN_PIPE_CWND_SEGMENTS * cx.smss;
        match self.probe_rtt_done_stamp {
            None if ev.in_flight <= min_pipe => {
                self.probe_rtt_done_stamp = Some(now + PROBE_RTT_DURATION);
                self.probe_rtt_round_done = false;
                self.next_round_delivered = ev.delivered;
            }
            Some(done) => {
                if self.round_start {
                    self.probe_rtt_round_done = true;
                }
                if self.probe_rtt_round_done && now > done {
                    self.rtprop_stamp = now;
                    self.restore_cwnd = true;
                    self.exit_probe_rtt(now);
                }
            }
            None => {}
        }
    }

    fn exit_probe_rtt(&mut self, now: SimTime) {
        if self.filled_pipe {
            self.enter_probe_bw(now);
        } else {
            self.state = BbrState::Startup;
            self.pacing_gain = HIGH_GAIN;
            self.cwnd_gain = HIGH_GAIN;
        }
    }

    /// §4.2.3.4 BBRSaveCwnd.
    fn save_cwnd(&self, w: Window) -> u64 {
        if !self.was_in_recovery && self.state != BbrState::ProbeRtt {
            w.cwnd
        } else {
            self.prior_cwnd.max(w.cwnd)
        }
    }

    /// §4.2.1 BBRSetPacingRateWithGain (less [`PACING_MARGIN`]): only upwards until the pipe
    /// is full.
    fn set_pacing_rate(&mut self) {
        let rate = self.pacing_gain * self.btlbw() * (1.0 - PACING_MARGIN);
        if rate > 0.0 && (self.filled_pipe || rate > self.pacing_rate) {
            self.pacing_rate = rate;
        }
    }

    /// §4.2.3 BBRSetCwnd, with the loss-recovery modulation of §4.2.3.4 and ProbeRTT's of
    /// §4.2.3.5. Returns cwnd, bytes.
    fn set_cwnd(&mut self, ev: &AckEvent, w: Window, cx: &CcContext, iw: u64) -> u64 {
        let min_pipe = MIN_PIPE_CWND_SEGMENTS * cx.smss;
        let target = self.inflight(self.cwnd_gain, cx, iw);
        let mut cwnd = w.cwnd;
        if std::mem::take(&mut self.restore_cwnd) {
            cwnd = cwnd.max(self.prior_cwnd);
        }
        if ev.in_recovery && !self.was_in_recovery {
            // §4.2.3.4 upon entering fast recovery: packet conservation for one round.
            self.prior_cwnd = self.save_cwnd(w);
            cwnd = ev.in_flight + ev.newly_delivered.max(cx.smss);
            self.packet_conservation = true;
            self.next_round_delivered = ev.delivered;
        } else if !ev.in_recovery && self.was_in_recovery {
            // Upon exiting loss recovery: restore the saved cwnd.
            cwnd = cwnd.max(self.prior_cwnd);
            self.packet_conservation = false;
        } else if self.packet_conservation && self.round_start {
            // One round of conservation is over.
            self.packet_conservation = false;
        }
        self.was_in_recovery = ev.in_recovery;
        // §4.2.3.4 BBRModulateCwndForRecovery: what was just deemed lost leaves the window.
        if ev.newly_lost > 0 {
            cwnd = cwnd.saturating_sub(ev.newly_lost).max(cx.smss);
        }
        if self.packet_conservation {
            cwnd = cwnd.max(ev.in_flight + ev.newly_delivered);
        } else if self.filled_pipe {
            cwnd = (cwnd + ev.newly_delivered).min(target);
        } else if cwnd < target || ev.delivered < iw {
            cwnd += ev.newly_delivered;
        }
        cwnd = cwnd.max(min_pipe);
        if self.state == BbrState::ProbeRtt {
            cwnd = cwnd.min(min_pipe);
        }
        cwnd
    }
}

impl CongestionController for Bbr {
    fn on_ack(&mut self, _now: SimTime, _acked: u64, w: Window, _cx: &CcContext) -> Window {
        // cwnd is set in `on_ack_event`, on every ACK.
        w
    }

    fn on_congestion_event(&mut self, _now: SimTime, event: CongestionEvent, w: Window, cx: &CcContext) -> Window {
        match event {
            // Recovery: cwnd is set by packet conservation at the next ACK event.
            CongestionEvent::DupAcks => Window {
                cwnd: w.cwnd,
                ssthresh: w.cwnd,
            },
            // §4.2.3.4 upon a retransmission timeout: save cwnd, restart from one segment
            // (nothing is counted in flight after the timeout).
            CongestionEvent::Timeout => {
                self.prior_cwnd = self.save_cwnd(w);
                Window {
                    cwnd: cx.smss,
                    ssthresh: w.cwnd,
                }
            }
            // BBR v1 does not respond to ECN.
            CongestionEvent::Ece => w,
        }
    }

    fn on_ack_event(&mut self, now: SimTime, ev: &AckEvent, w: Window, cx: &CcContext) -> Option<Window> {
        let iw = cx.initial_window;
        // §4.1 BBRUpdateModelAndState.
        self.update_round(ev);
        self.update_btlbw(ev);
        self.check_cycle_phase(now, ev, cx, iw);
        self.check_full_pipe(ev);
        self.check_drain(now, ev, cx, iw);
        self.update_rtprop(now, ev);
        self.check_probe_rtt(now, ev, w, cx);
        // §4.2 BBRUpdateControlParameters.
        self.set_pacing_rate();
        let cwnd = self.set_cwnd(ev, w, cx, iw);
        Some(Window {
            cwnd,
            ssthresh: w.ssthresh,
        })
    }

    fn pacing_rate(&self, w: Window, cx: &CcContext) -> Option<f64> {
        if self.pacing_rate > 0.0 {
            return Some(self.pacing_rate);
        }
        // §4.2.1 BBRInitPacingRate: the initial window per SRTT (1 ms unknown), at high gain.
        let srtt = cx.srtt.unwrap_or(SimDuration::from_millis(1)).as_secs_f64();
        Some(HIGH_GAIN * w.cwnd as f64 / srtt)
    }

    fn needs_rate_samples(&self) -> bool {
        true
    }
}

#[cfg(test)]
#[path = "bbr_tests.rs"]
mod tests;
