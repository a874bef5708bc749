//! BBR v3: BBR's model of the path (maximum bandwidth, minimum RTT) with bounds learned from
//! loss and ECN, the ProbeBW cycle of four sub-states, and a sender paced at the model's rate.
//!
//! Reading list (the draft's sections beside each rule below): N. Cardwell, I. Swett,
//! J. Beshay (eds.), "BBR Congestion Control", draft-ietf-ccwg-bbr-06 (IETF CCWG, July 2026):
//!
//! * §2.8 the constants LossThresh (2 %), Beta (0.7), Headroom (0.15), MinPipeCwnd;
//! * §5.3.1 Startup (pacing gain 2.77, cwnd gain 2): its exits on a bandwidth plateau
//!   (§5.3.1.2) and on high loss (§5.3.1.3);
//! * §5.3.2 Drain (pacing gain 0.5; left at the BDP or after 3 rounds);
//! * §5.3.3 ProbeBW: DOWN (0.9), CRUISE (1.0), REFILL (1.0, one round), UP (1.25, cwnd gain
//!   2.25), the probe's exits (§5.3.3.7), precautionary probing (§5.3.3.6), the time between
//!   probes (§5.3.3.8: 2–3 s, or fewer rounds than the BDP in packets, at most 63);
//! * §5.3.4 ProbeRTT every 5 s, cwnd at half the BDP for 200 ms and a round;
//! * §5.5.1 round counting, §5.5.5 `max_bw` over 2 ProbeBW cycles, §5.5.7 `min_rtt`,
//!   §5.5.9 `extra_acked`;
//! * §5.5.10 the loss response: `inflight_longterm` (Linux's inflight_hi) cut when a probe's
//!   loss rate exceeds LossThresh (§5.5.10.2), `bw_shortterm` and `inflight_shortterm`
//!   (inflight_lo) cut by Beta once per lossy round outside probing (§5.5.10.3);
//! * §5.6 pacing rate (1 % margin), send quantum and cwnd with its bounds (§5.6.4.7).
//!
//! ECN (§3.7 leaves the response open but requires that CE marks count as congestion): an
//! ECN-Echo is taken as a lossy round at the ACK that carried it: outside probing the
//! short-term model is cut at the end of the round; in Startup it ends Startup as high loss
//! does (§5.3.1.3); on the ACK of data sent in ProbeBW_UP it ends the probe as a loss rate
//! above LossThresh does (§5.5.10.2), `inflight_longterm` set from the data in flight when
//! that data was sent.
//!
//! Differences from the draft, each because tpsim's connection lacks what the rule needs:
//! losses are judged per ACK on the ACK's delivery-rate sample (its `tx_in_flight` and the
//! bytes marked lost since it was sent), not per lost packet (§5.5.10.2 HandleLostPacket;
//! RFC 6675 marks losses without RACK's delay, so the two coincide closely); Startup's loss
//! exit counts ACKs that marked a loss as its loss events; there is no idle restart (§5.4),
//! no spurious-recovery undo (§5.5.11) and no marking of ProbeRTT's samples as
//! application-limited (their low rates never raise `max_bw`); "cwnd-limited" means that the
//! data in flight before the ACK filled cwnd to within a segment.

use super::bbr::splitmix;
use super::cc::{AckEvent, CcContext, CongestionController, CongestionEvent, Window};
use super::rate::RateSample;
use tpsim_core::{SimDuration, SimTime};

/// §5.3.1.1 StartupPacingGain, 4 ln 2.
pub const STARTUP_PACING_GAIN: f64 = 2.77;
/// §2.6 DefaultCwndGain.
pub const DEFAULT_CWND_GAIN: f64 = 2.0;
/// §5.3.2 DrainPacingGain.
pub const DRAIN_PACING_GAIN: f64 = 0.5;
/// §5.3.3.1 ProbeBW_DOWN's pacing gain.
pub const DOWN_PACING_GAIN: f64 = 0.9;
/// §5.3.3.5 ProbeBW_UP's pacing gain and cwnd gain.
pub const UP_PACING_GAIN: f64 = 1.25;
/// §5.3.3.5.
pub const UP_CWND_GAIN: f64 = 2.25;
/// §2.16.2 ProbeRTTCwndGain.
pub const PROBE_RTT_CWND_GAIN: f64 = 0.5;
/// §2.8 LossThresh: the loss rate of a round a probe may cause.
pub const LOSS_THRESH: f64 = 0.02;
/// §2.8 Beta: the multiplicative decrease per lossy round.
pub const BETA: f64 = 0.7;
/// §2.8 Headroom: the share of `inflight_longterm` left free for other flows.
pub const HEADROOM: f64 = 0.15;
/// §5.6.2 PacingMarginPercent, as a fraction.
pub const PACING_MARGIN: f64 = 0.01;
/// §2.16.1 MinRTTFilterLen.
pub const MIN_RTT_FILTER: SimDuration = SimDuration::from_secs(10);
/// §2.16.2 ProbeRTTInterval.
pub const PROBE_RTT_INTERVAL: SimDuration = SimDuration::from_secs(5);
/// §2.16.2 ProbeRTTDuration.
pub const PROBE_RTT_DURATION: SimDuration = SimDuration::from_millis(200);
/// §5.3.1.3 BBRStartupFullLossCnt: loss events a round needs for Startup's loss exit.
pub const STARTUP_FULL_LOSS_COUNT: u32 = 6;
/// §2.12 ExtraAckedFilterLen, rounds (two halves of 5 rounds each, as Linux keeps it).
pub const EXTRA_ACKED_FILTER_ROUNDS: u32 = 10;

/// "Infinity" of the draft's volumes (bytes).
const INF: u64 = u64::MAX;

/// The states of §5.1, ProbeBW's four sub-states apart.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Bbr3State {
    /// §5.3.1.
    #[default]
    Startup,
    /// §5.3.2.
    Drain,
    /// §5.3.3.1: decelerate until inflight is below the BDP and the headroom target.
    ProbeBwDown,
    /// §5.3.4.
    ProbeRtt,
    /// §5.3.3.2: send at the estimated bandwidth.
    ProbeBwCruise,
    /// §5.3.3.3: one round at the estimated bandwidth with the short-term bounds lifted.
    ProbeBwRefill,
    /// §5.3.3.4: accelerate to probe for more bandwidth.
    ProbeBwUp,
}

impl Bbr3State {
    /// A number for the time series: 0 Startup, 1 Drain, 2 ProbeBW_DOWN, 3 ProbeRTT,
    /// 4 ProbeBW_CRUISE, 5 ProbeBW_REFILL, 6 ProbeBW_UP (BBR v1's codes where they coincide).
    pub fn code(self) -> u8 {
        self as u8
    }

    fn is_probe_bw(self) -> bool {
        matches!(
            self,
            Bbr3State::ProbeBwDown | Bbr3State::ProbeBwCruise | Bbr3State::ProbeBwRefill | Bbr3State::ProbeBwUp
        )
    }

    /// §5.3.3.9 IsProbingBW.
    fn is_probing_bw(self) -> bool {
        matches!(
            self,
            Bbr3State::Startup | Bbr3State::ProbeBwRefill | Bbr3State::ProbeBwUp
        )
    }

    /// (pacing gain, cwnd gain) of the state (§5.6.1's table).
    fn gains(self) -> (f64, f64) {
        match self {
            Bbr3State::Startup => (STARTUP_PACING_GAIN, DEFAULT_CWND_GAIN),
            Bbr3State::Drain => (DRAIN_PACING_GAIN, DEFAULT_CWND_GAIN),
            Bbr3State::ProbeBwDown => (DOWN_PACING_GAIN, DEFAULT_CWND_GAIN),
            Bbr3State::ProbeBwCruise | Bbr3State::ProbeBwRefill => (1.0, DEFAULT_CWND_GAIN),
            Bbr3State::ProbeBwUp => (UP_PACING_GAIN, UP_CWND_GAIN),
            Bbr3State::ProbeRtt => (1.0, PROBE_RTT_CWND_GAIN),
        }
    }
}

/// §2.14 BBR.ack_phase: what the ACKs being received say about a bandwidth probe.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum AckPhase {
    #[default]
    Init,
    Refilling,
    ProbeStarting,
    ProbeFeedback,
    ProbeStopping,
}

/// BBR v3 (see the module docs). Owns cwnd on every ACK and the pacing rate.
#[derive(Clone, Debug)]
pub struct Bbr3 {
    /// The state; its gains are [`Bbr3State::gains`].
    state: Bbr3State,
    /// §5.5.3 the max filter over two ProbeBW cycles: this cycle's and the previous one's
    /// maximum delivery rate, bytes/s (`max_bw` is the larger).
    max_bw_slots: [f64; 2],
    bw_shortterm: f64,
    /// min(max_bw, bw_shortterm), bytes/s (§5.5.10.3 BoundBWForModel).
    bw: f64,
    min_rtt: Option<SimDuration>,
    min_rtt_stamp: SimTime,
    probe_rtt_min_delay: Option<SimDuration>,
    probe_rtt_min_stamp: SimTime,
    probe_rtt_expired: bool,
    /// Bytes; [`INF`] when unset.
    inflight_longterm: u64,
    inflight_shortterm: u64,
    /// §2.10 the latest round's delivery signals.
    bw_latest: f64,
    inflight_latest: u64,
    loss_round_delivered: u64,
    loss_round_start: bool,
    is_loss_in_round: bool,
    /// §5.3.1.3: ACKs that marked a loss in this round (Startup's loss events).
    loss_events_in_round: u32,
    round_count: u64,
    next_round_delivered: u64,
    round_start: bool,
    rounds_since_probe_up: u64,
    full_bw: f64,
    full_bw_count: u32,
    full_bw_now: bool,
    full_bw_reached: bool,
    drain_start_round: u64,
    ack_phase: AckPhase,
    is_bw_probe_sample: bool,
    bw_probe_up_acked: u64,
    probe_up_acked_per_inc: u64,
    bw_probe_up_rounds: u32,
    bw_probe_wait: SimDuration,
    cycle_stamp: SimTime,
    prev_probe_too_high: bool,
    prev_probe_precautionary: bool,
    probe_rtt_done_stamp: Option<SimTime>,
    probe_rtt_round_done: bool,
    /// §5.6.4.4 the last cwnd unmodulated by recovery or ProbeRTT, bytes.
    prior_cwnd: u64,
    was_in_recovery: bool,
    restore_cwnd: bool,
    /// §5.5.9: two halves of the extra-ACKed filter, the current one, rounds in it.
    extra_acked_slots: [u64; 2],
    extra_acked_idx: usize,
    extra_acked_rounds: u32,
    extra_acked_interval_start: SimTime,
    extra_acked_delivered: u64,
    extra_acked: u64,
    /// An ECN-Echo arrived since the last ACK event.
    ece_pending: bool,
    pacing_rate: f64,
    rng: u64,
    /// The time of the ACK being processed.
    now: SimTime,
}

impl Default for Bbr3 {
    fn default() -> Self {
        Self::new(0)
    }
}

impl Bbr3 {
    /// A controller in Startup (§5.2.1 OnInit); `seed` draws its waits between probes.
    pub fn new(seed: u64) -> Self {
        Bbr3 {
            state: Bbr3State::Startup,
            max_bw_slots: [0.0; 2],
            bw_shortterm: f64::INFINITY,
            bw: 0.0,
            min_rtt: None,
            min_rtt_stamp: SimTime::ZERO,
            probe_rtt_min_delay: None,
            probe_rtt_min_stamp: SimTime::ZERO,
            probe_rtt_expired: false,
            inflight_longterm: INF,
            inflight_shortterm: INF,
            bw_latest: 0.0,
            inflight_latest: 0,
            loss_round_delivered: 0,
            loss_round_start: false,
            is_loss_in_round: false,
            loss_events_in_round: 0,
            round_count: 0,
            next_round_delivered: 0,
            round_start: false,
            rounds_since_probe_up: 0,
            full_bw: 0.0,
            full_bw_count: 0,
            full_bw_now: false,
            full_bw_reached: false,
            drain_start_round: 0,
            ack_phase: AckPhase::Init,
            is_bw_probe_sample: false,
            bw_probe_up_acked: 0,
            probe_up_acked_per_inc: INF,
            bw_probe_up_rounds: 0,
            bw_probe_wait: SimDuration::ZERO,
            cycle_stamp: SimTime::ZERO,
            prev_probe_too_high: false,
            prev_probe_precautionary: false,
            probe_rtt_done_stamp: None,
            probe_rtt_round_done: false,
            prior_cwnd: 0,
            was_in_recovery: false,
            restore_cwnd: false,
            extra_acked_slots: [0; 2],
            extra_acked_idx: 0,
            extra_acked_rounds: 0,
            extra_acked_interval_start: SimTime::ZERO,
            extra_acked_delivered: 0,
            extra_acked: 0,
            ece_pending: false,
            pacing_rate: 0.0,
            rng: seed ^ 0x5851_f42d_4c95_7f2d,
            now: SimTime::ZERO,
        }
    }

    /// The state (§5.1).
    pub fn state(&self) -> Bbr3State {
        self.state
    }
    /// BBR.bw, the bandwidth the sender paces by: min(max_bw, bw_shortterm), bytes/s.
    pub fn bw(&self) -> f64 {
        self.bw
    }
    /// BBR.max_bw, bytes/s.
    pub fn max_bw(&self) -> f64 {
        self.max_bw_slots[0].max(self.max_bw_slots[1])
    }
    /// BBR.min_rtt.
    pub fn min_rtt(&self) -> Option<SimDuration> {
        self.min_rtt
    }
    /// BBR.inflight_longterm (inflight_hi), bytes; `None` while unset.
    pub fn inflight_longterm(&self) -> Option<u64> {
        (self.inflight_longterm != INF).then_some(self.inflight_longterm)
    }
    /// BBR.inflight_shortterm (inflight_lo), bytes; `None` while unset.
    pub fn inflight_shortterm(&self) -> Option<u64> {
        (self.inflight_shortterm != INF).then_some(self.inflight_shortterm)
    }
    /// BBR.bw_shortterm (bw_lo), bytes/s; `None` while unset.
    pub fn bw_shortterm(&self) -> Option<f64> {
        self.bw_shortterm.is_finite().then_some(self.bw_shortterm)
    }
    /// The current pacing gain.
    pub fn pacing_gain(&self) -> f64 {
        self.state.gains().0
    }
    /// The current cwnd gain.
    pub fn cwnd_gain(&self) -> f64 {
        self.state.gains().1
    }
    /// Whether the pipe was ever estimated full (§2.13).
    pub fn full_bw_reached(&self) -> bool {
        self.full_bw_reached
    }
    /// Packet-timed rounds so far (§5.5.1).
    pub fn round_count(&self) -> u64 {
        self.round_count
    }

    /// §5.5.1 StartRound.
    fn start_round(&mut self, delivered: u64) {
        self.next_round_delivered = delivered;
    }

    /// §5.6.4.2 BDPMultiple with `bw`: `gain` × bw × min_rtt (the initial window before an
    /// RTT sample).
    fn bdp_multiple(&self, bw: f64, gain: f64, cx: &CcContext) -> u64 {
        match self.min_rtt {
            Some(r) => (gain * bw * r.as_secs_f64()) as u64,
            None => cx.initial_window,
        }
    }

    /// §5.6.3 SetSendQuantum: 1 ms at the pacing rate, within [2 SMSS, 64 KB].
    fn send_quantum(&self, cx: &CcContext) -> u64 {
        ((self.pacing_rate * 1e-3) as u64).clamp(2 * cx.smss, (64 * 1024).max(2 * cx.smss))
    }

    /// §5.6.4.2 QuantizationBudget (the offload budget: 3 send quanta, §5.5.8.1).
    fn quantization_budget(&self, cap: u64, cx: &CcContext) -> u64 {
        let mut cap = cap.max(3 * self.send_quantum(cx)).max(min_pipe(cx));
        if self.state == Bbr3State::ProbeBwUp {
            cap += 2 * cx.smss;
        }
        cap
    }

    /// §5.6.4.2 Inflight(gain), on `bw`.
    fn inflight(&self, bw: f64, gain: f64, cx: &CcContext) -> u64 {
        self.quantization_budget(self.bdp_multiple(bw, gain, cx), cx)
    }

    /// §5.6.4.2 UpdateMaxInflight.
    fn max_inflight(&self, cx: &CcContext) -> u64 {
        let cap = self.bdp_multiple(self.bw, self.cwnd_gain(), cx) + self.extra_acked;
        self.quantization_budget(cap, cx)
    }

    /// §5.3.3.9 InflightWithHeadroom.
    fn inflight_with_headroom(&self, cx: &CcContext) -> u64 {
        if self.inflight_longterm == INF {
            return INF;
        }
        let headroom = cx.smss.max((HEADROOM * self.inflight_longterm as f64) as u64);
        self.inflight_longterm.saturating_sub(headroom).max(min_pipe(cx))
    }

    /// §5.3.3.8 TargetInflight: the BDP, unless congestion cut cwnd below it.
    fn target_inflight(&self, w: Window, cx: &CcContext) -> u64 {
        self.bdp_multiple(self.bw, 1.0, cx).min(w.cwnd)
    }

    /// §5.6.4.5 ProbeRTTCwnd.
    fn probe_rtt_cwnd(&self, cx: &CcContext) -> u64 {
        self.bdp_multiple(self.bw, PROBE_RTT_CWND_GAIN, cx).max(min_pipe(cx))
    }

    /// §5.6.4.4 SaveCwnd.
    fn save_cwnd(&mut self, w: Window, in_recovery: bool) {
        self.prior_cwnd = if !in_recovery && self.state != Bbr3State::ProbeRtt {
            w.cwnd
        } else {
            self.prior_cwnd.max(w.cwnd)
        };
    }

    /// §5.5.10.2 IsInflightTooHigh, on the ACK's rate sample.
    fn is_inflight_too_high(rs: &RateSample, cx: &CcContext) -> bool {
        rs.lost as f64 > rs.tx_in_flight as f64 * LOSS_THRESH || (rs.lost > 0 && !cx.sack)
    }
}

/// §2.8 MinPipeCwnd: 4 segments.
fn min_pipe(cx: &CcContext) -> u64 {
    4 * cx.smss
}

#[path = "bbr3_model.rs"]
mod model;

impl CongestionController for Bbr3 {
    fn on_ack(&mut self, _now: SimTime, _acked: u64, w: Window, _cx: &CcContext) -> Window {
        // cwnd is set in `on_ack_event`, on every ACK.
        w
    }

    fn on_congestion_event(&mut self, _now: SimTime, event: CongestionEvent, w: Window, cx: &CcContext) -> Window {
        match event {
            // §5.6.4.4 OnEnterFastRecovery: the cwnd is saved at the ACK event that starts
            // recovery; the model bounds it from then on.
            CongestionEvent::DupAcks => Window {
                cwnd: w.cwnd,
                ssthresh: w.cwnd,
            },
            // §5.6.4.4 OnEnterRTO: save cwnd, restart from what is in flight (nothing, once
            // the timeout has marked everything lost) plus one segment; a lossy round.
            CongestionEvent::Timeout => {
                self.save_cwnd(w, self.was_in_recovery);
                self.is_loss_in_round = true;
                Window {
                    cwnd: cx.smss,
                    ssthresh: w.cwnd,
                }
            }
            // §3.7: acted on at the ACK event of the ACK that carried it.
            CongestionEvent::Ece => {
                self.ece_pending = true;
                w
            }
        }
    }

    fn on_ack_event(&mut self, now: SimTime, ev: &AckEvent, w: Window, cx: &CcContext) -> Option<Window> {
        self.update_model_and_state(now, ev, w, cx);
        self.set_pacing_rate();
        Some(Window {
            cwnd: self.set_cwnd(ev, w, cx),
            ssthresh: w.ssthresh,
        })
    }

    fn pacing_rate(&self, w: Window, cx: &CcContext) -> Option<f64> {
        if self.pacing_rate > 0.0 {
            return Some(self.pacing_rate);
        }
        // §5.6.2 InitPacingRate: the initial window per SRTT (1 ms unknown), at Startup's gain.
        let srtt = cx.srtt.unwrap_or(SimDuration::from_millis(1)).as_secs_f64();
        Some(STARTUP_PACING_GAIN * w.cwnd as f64 / srtt)
    }

    fn needs_rate_samples(&self) -> bool {
        true
    }
}

impl Bbr3 {
    fn next_random(&mut self) -> u64 {
        splitmix(&mut self.rng)
    }
}

#[cfg(test)]
#[path = "bbr3_tests.rs"]
mod tests;
